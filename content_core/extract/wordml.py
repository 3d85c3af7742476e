"""Single-file Word XML to Markdown: Word 2003 XML (WordprocessingML 2003, `w:wordDocument`)
and Word 2007+ "flat OPC" XML (`pkg:package`), both marked `<?mso-application
progid="Word.Document"?>`.

The 2003 vocabulary is the 2007 one under another namespace (lists say `w:listPr` for
`w:numPr`, and `wx:` hint elements wrap sections), so after the safe XML check the tree is
mapped onto the 2007 names and rendered by the DOCX renderer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._tables import join_blocks
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.extract.docx import render_word_xml
from content_core.formats import Format, Handler
from content_core.xmlsafe import parse_safe_xml

__all__ = ["FORMATS", "WordXmlExtractor"]

_W2003 = "{http://schemas.microsoft.com/office/word/2003/wordml}"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# Word 2003's "auxiliary hints" (`wx:sect`, `wx:sub-section`, `wx:pBdrGroup`) wrap block
# content without meaning anything for the text.
_AUX = "{http://schemas.microsoft.com/office/word/2003/auxHint}"


def _blocks(container: Any) -> Iterator[Any]:
    """Yield the block elements of `container`, looking through `wx:` wrappers."""
    for child in container:
        tag = child.tag
        if isinstance(tag, str) and tag.startswith(_AUX):
            yield from _blocks(child)
        else:
            yield child


def _as_2006(root: Any) -> None:
    """Rename the Word 2003 elements and attributes of `root` to their 2007 names in place."""
    for element in root.iter():
        tag = element.tag
        if not isinstance(tag, str):
            continue
        if tag.startswith(_W2003):
            local = tag[len(_W2003) :]
            element.tag = _W + ("numPr" if local == "listPr" else local)
        for key in [k for k in element.attrib if k.startswith(_W2003)]:
            element.attrib[_W + key[len(_W2003) :]] = element.attrib.pop(key)


class WordXmlExtractor:
    """Word 2003 XML and Word flat-OPC XML documents, rendered as Markdown."""

    name = "wordml"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/vnd.ms-wordml`."""
        return info.media_type == mt.WORDML_2003

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the headers, body and footers as Markdown.

        Raises:
            LimitExceededError: over `max_xml_bytes`.
            UnsafeInputError: dangerous entity declarations or external references.
            ExtractionError: not well-formed XML, or no document body.
        """
        media_type = blob.info.media_type
        root = parse_safe_xml(blob.data, options, media_type=media_type)
        _as_2006(root)
        body = next(root.iter(f"{_W}body"), None)
        if body is None:
            raise ExtractionError("no w:body in the Word XML document", media_type=media_type)
        parts: list[str] = []
        seen: set[str] = set()
        for kind in ("hdr", "body", "ftr"):
            containers = [body] if kind == "body" else list(root.iter(f"{_W}{kind}"))
            for container in containers:
                text = render_word_xml(root, _blocks(container))
                if text and (kind == "body" or text not in seen):
                    seen.add(text)
                    parts.append(text)
        return build_text([join_blocks(parts)], handler=self.name, paged=False)


FORMATS = (
    Format(name="wordml", media_types=(mt.WORDML_2003,), kind="wordml",
           handlers=(Handler(WordXmlExtractor()),), extension=".xml"),
)
