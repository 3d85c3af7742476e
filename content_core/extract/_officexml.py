"""Parsing for the single-file Office XML formats (Word and Excel 2003 XML): the safe XML
check, then a locked-down lxml tree."""

from __future__ import annotations

from typing import Any

from content_core.errors import ExtractionError
from content_core.extract._xmlsafe import check_xml_safe, safe_lxml_parser
from content_core.extract.base import ExtractOptions

__all__ = ["parse_office_xml"]


def parse_office_xml(
    data: bytes, options: ExtractOptions, *, media_type: str
) -> Any:  # Any: an lxml element, imported lazily
    """Return the root element of `data` once it has passed the safe XML check.

    Raises:
        UnsafeInputError: entity declarations, external references, or too large.
        ExtractionError: not well-formed XML.
    """
    check_xml_safe(data, options, media_type=media_type)
    from lxml import etree

    try:
        return etree.fromstring(data, safe_lxml_parser())
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise ExtractionError(f"not well-formed XML: {exc}", media_type=media_type) from exc
