"""The readable text of an SVG drawing: its `<title>`, `<desc>` and `<text>` elements.

The drawing itself is rasterised by the binary normaliser; this handler gives the words in it
without OCR. The markup goes through the same entity and external-reference refusal as XML.
"""

from __future__ import annotations

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._xmlsafe import check_xml_safe, safe_lxml_parser
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text

__all__ = ["SvgTextExtractor"]

_TEXT_ELEMENTS = frozenset({"title", "desc", "text"})


class SvgTextExtractor:
    """Text content of SVG images (no rendering)."""

    name = "svg"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `image/svg+xml`."""
        return info.media_type == mt.SVG

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one line per text-bearing element, in document order.

        Raises:
            UnsafeInputError: entity declarations or external references.
            ExtractionError: not well-formed XML.
        """
        media_type = blob.info.media_type
        check_xml_safe(blob.data, options, media_type=media_type)
        from lxml import etree

        try:
            root = etree.fromstring(blob.data, safe_lxml_parser())
        except (etree.XMLSyntaxError, ValueError) as exc:
            raise ExtractionError(f"not well-formed SVG: {exc}", media_type=media_type) from exc
        lines: list[str] = []
        for element in root.iter():
            if not isinstance(element.tag, str):
                continue
            if etree.QName(element).localname in _TEXT_ELEMENTS:
                text = " ".join("".join(element.itertext()).split())
                if text:
                    lines.append(text)
        return build_text(["\n".join(lines)], handler=self.name, paged=False)
