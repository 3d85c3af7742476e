"""EPUB books as Markdown: the spine's XHTML documents, in reading order, through the HTML
converter, after the zip guard."""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._decode import decode_bytes
from content_core.extract._zipguard import open_checked_zip
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.extract.html import declared_charset, html_to_markdown
from content_core.formats import Format, Handler, Package
from content_core.xmlsafe import safe_lxml_parser

__all__ = ["FORMATS", "EpubExtractor"]

_CONTAINER = "META-INF/container.xml"
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def _parse(archive: zipfile.ZipFile, name: str) -> Any:  # Any: an lxml element
    from lxml import etree

    try:
        return etree.fromstring(archive.read(name), safe_lxml_parser())
    except (KeyError, etree.XMLSyntaxError) as exc:
        raise ExtractionError(f"EPUB part {name!r} unreadable: {exc}", media_type=mt.EPUB) from exc


def _spine(archive: zipfile.ZipFile) -> Iterator[str]:
    """Yield the member names of the content documents in reading order."""
    container = _parse(archive, _CONTAINER)
    rootfile = next(container.iter("{*}rootfile"), None)
    package_path = rootfile.get("full-path") if rootfile is not None else None
    if not package_path:
        raise ExtractionError("EPUB container names no package document", media_type=mt.EPUB)
    package = _parse(archive, package_path)
    base = posixpath.dirname(package_path)
    items = {
        item.get("id"): (item.get("href") or "", item.get("media-type") or "")
        for item in package.iter("{*}item")
    }
    for ref in package.iter("{*}itemref"):
        href, media_type = items.get(ref.get("idref"), ("", ""))
        if href and media_type in _HTML_TYPES:
            yield posixpath.normpath(posixpath.join(base, unquote(href)))


class EpubExtractor:
    """EPUB 2/3 books: every spine document converted to Markdown, joined in order."""

    name = "epub"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/epub+zip`."""
        return info.media_type == mt.EPUB

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the book's text, chapter after chapter.

        Raises:
            LimitExceededError, UnsafeInputError, EncryptedFileError: the package fails the
                zip checks (a limit, overlapping entries, a password).
            ExtractionError: no container or package document, or no readable chapter.
        """
        archive = open_checked_zip(blob.data, options, media_type=blob.info.media_type)
        chapters: list[str] = []
        for name in dict.fromkeys(_spine(archive)):
            try:
                data = archive.read(name)
            except KeyError:
                continue
            html = decode_bytes(data, declared=declared_charset(data))
            chapters.append(html_to_markdown(html))
        return build_text(["\n\n".join(c for c in chapters if c)], handler=self.name, paged=False)


# A zip package read natively (no renderer takes books).
FORMATS = (
    Format(name="epub", media_types=(mt.EPUB,), kind="epub", handlers=(Handler(EpubExtractor()),),
           package=Package.ZIP, extension=".epub"),
)
