"""Safe XML parsing helpers: a defusedxml pre-check and a locked-down lxml parser."""

from __future__ import annotations

from typing import Any

from content_core.errors import ExtractionError, MissingDependencyError, UnsafeInputError
from content_core.extract.base import ExtractOptions

__all__ = ["check_xml_safe", "safe_lxml_parser"]


def check_xml_safe(data: bytes, options: ExtractOptions, *, media_type: str) -> None:
    """Raise unless `data` is well-formed XML without entity declarations or external refs.

    Raises:
        UnsafeInputError: entity declarations, external references, or over `max_xml_bytes`.
        ExtractionError: not well-formed XML.
        MissingDependencyError: defusedxml is not installed.
    """
    if len(data) > options.max_xml_bytes:
        raise UnsafeInputError(
            f"XML of {len(data)} bytes over the limit {options.max_xml_bytes}",
            media_type=media_type,
            stage="extract",
        )
    try:
        from defusedxml import DefusedXmlException
        from defusedxml.ElementTree import ParseError, fromstring
    except ImportError as exc:
        raise MissingDependencyError(
            "defusedxml is not installed (a core dependency: pip install defusedxml)"
        ) from exc
    try:
        fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise UnsafeInputError(
            f"XML refused: {type(exc).__name__}", media_type=media_type, stage="extract"
        ) from exc
    except (ParseError, ValueError) as exc:
        raise ExtractionError(f"not well-formed XML: {exc}", media_type=media_type) from exc


def safe_lxml_parser(
    *, remove_blank_text: bool = False, strip_cdata: bool = True
) -> Any:  # Any: lxml.etree.XMLParser, imported lazily
    """Return an lxml parser with DTD loading, entity resolution and network access off."""
    from lxml import etree

    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_blank_text=remove_blank_text,
        strip_cdata=strip_cdata,
    )
