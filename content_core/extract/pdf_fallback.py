"""PDF text per page through pypdf: slower than PDFium, tried when PDFium fails; and a PDF's
XMP title, which PDFium cannot read."""

from __future__ import annotations

import io
import logging

import pypdf

from content_core.binary import media_types as mt
from content_core.errors import CorruptPdfError, EncryptedPdfError, ExtractionError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.xmlsafe import check_xml_declarations, parse_checked

logger = logging.getLogger(__name__)

__all__ = ["PDF_TYPES", "PypdfExtractor", "xmp_title"]

# The sniffed type and the alias older senders declare.
PDF_TYPES = frozenset({mt.PDF, "application/x-pdf"})
_DC = b"http://purl.org/dc/elements/1.1/"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_RDF_LI = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}li"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def xmp_title(data: bytes, reader: pypdf.PdfReader | None = None) -> str | None:
    """The `dc:title` of the PDF's XMP metadata (its `x-default` entry, else its first); None
    when it has none or it cannot be read. `reader` is the PDF opened already, if it is.

    XMP is stored unfiltered by every common producer (PDF/A requires it), so a PDF whose
    bytes never name the Dublin Core namespace is not parsed at all.

    Raises:
        UnsafeInputError: the XMP declares dangerous entities.
    """
    if _DC not in data:
        return None
    from lxml import etree

    try:
        reader = reader or pypdf.PdfReader(io.BytesIO(data))
        stream = reader.root_object.get("/Metadata")
        stream = stream.get_object() if stream is not None else None
        xmp = stream.get_data() if isinstance(stream, pypdf.generic.StreamObject) else b""
    except (pypdf.errors.PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError):
        return None  # a title is optional: the text is read (or refused) on its own terms
    if not xmp:
        return None
    try:
        check_xml_declarations(xmp, media_type=mt.PDF)
        root = parse_checked(xmp)
    except (ExtractionError, ValueError, etree.XMLSyntaxError):
        return None
    title = next(root.iter(_DC_TITLE), None)
    if title is None:
        return None
    items = list(title.iter(_RDF_LI)) or [title]
    chosen = next((i for i in items if i.get(_XML_LANG) == "x-default"), items[0])
    return "".join(chosen.itertext())



class PypdfExtractor:
    """Page texts from pypdf's pure-Python parser (more lenient with some broken files)."""

    name = "pypdf"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept PDF media types."""
        return info.media_type in PDF_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page span per page (up to `options.max_pdf_pages`).

        Raises:
            EncryptedPdfError: the PDF needs a password.
            CorruptPdfError: pypdf cannot parse the file.
        """
        media_type = blob.info.media_type
        try:
            reader = pypdf.PdfReader(io.BytesIO(blob.data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise EncryptedPdfError(
                    "PDF is encrypted and does not open with an empty password",
                    media_type=media_type,
                    stage="extract",
                )
            count = len(reader.pages)
            read = min(count, options.max_pdf_pages)
            pages = [reader.pages[i].extract_text() or "" for i in range(read)]
        except pypdf.errors.FileNotDecryptedError as exc:
            raise EncryptedPdfError(
                "PDF is encrypted", media_type=media_type, stage="extract"
            ) from exc
        except (pypdf.errors.PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
            raise CorruptPdfError(
                f"pypdf cannot read the PDF: {exc}", media_type=media_type
            ) from exc
        title = _info_title(reader) or xmp_title(blob.data, reader)
        return build_text(pages, handler=self.name, paged=True, title=title)


def _info_title(reader: pypdf.PdfReader) -> str | None:
    """The document information dictionary's /Title; None when it has none or a broken one."""
    try:
        info = reader.metadata
        title = info.title if info is not None else None
    except (pypdf.errors.PyPdfError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return str(title) if title else None
