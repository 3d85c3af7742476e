"""XML pretty-printed, with dangerous entity declarations and external references refused;
JATS articles and USPTO patents come out as their text (`xml_documents`).

`content_core.xmlsafe` checks the document first (nested or oversized entity expansion and external
entities are refused; a DOCTYPE, an internal subset and unparsed NDATA entities are not);
lxml then re-indents it with the network and DTD loading off, keeping the original namespace
prefixes and CDATA sections.
"""

from __future__ import annotations

from content_core.binary import media_types as mt
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.extract.xml_documents import render_xml_document
from content_core.formats import PRIORITY_TEXT_FORMAT, Format, Handler
from content_core.xmlsafe import parse_safe_xml

__all__ = ["FORMATS", "XmlExtractor"]

_XML_TYPES = frozenset({mt.XML, "text/xml", mt.RSS, "application/atom+xml"})


class XmlExtractor:
    """XML documents (including RSS/Atom) re-indented for reading."""

    name = "xml"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept generic XML, RSS and Atom media types."""
        return info.media_type in _XML_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return a JATS article or USPTO patent as Markdown, other XML indented by two spaces
        per level.

        Raises:
            UnsafeInputError: dangerous entities, external references, or too large.
            ExtractionError: not well-formed XML.
        """
        root = parse_safe_xml(
            blob.data,
            options,
            media_type=blob.info.media_type,
            remove_blank_text=True,
            strip_cdata=False,
        )
        document = render_xml_document(root)
        if document is not None:
            return build_text([document], handler=self.name, paged=False)
        from lxml import etree

        etree.indent(root, space="  ")
        text = etree.tostring(root, encoding="unicode")
        return build_text([text], handler=self.name, paged=False)


FORMATS = (
    Format(name="xml", media_types=(mt.XML, mt.RSS), kind="xml",
           handlers=(Handler(XmlExtractor(), PRIORITY_TEXT_FORMAT),), extension=".xml"),
)
