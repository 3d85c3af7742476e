"""Safe XML parsing: refuse only the declarations that are dangerous, then parse locked down.

What is dangerous, and refused (`UnsafeInputError`):
- nested entities: an entity whose text references another entity; a few levels of ten
  references each make a gigabyte from a kilobyte ("billion laughs");
- expansion out of proportion: one large entity referenced many times ("quadratic blowup"),
  counted exactly from the references in the document, over `max(1 MiB, document size)`;
- external parsed entities referenced in the content (`<!ENTITY x SYSTEM "file:///etc/passwd">`
  then `&x;`: a local-file or network read) and external parameter entities (they pull
  declarations from elsewhere).

What is merely unusual, and parsed: a DOCTYPE with a PUBLIC/SYSTEM id (the DTD is never loaded),
an internal subset, unparsed `NDATA` entities (USPTO patent grants declare their drawings
this way: a name for a file, never read nor expanded), notations, and small internal entities
(Illustrator SVGs declare their namespaces as entities).

The check runs expat with entity expansion inhibited (references reach a default handler as
text, so nothing expands while counting) and no external subset or entity ever read. Only
then does lxml parse, with the network, DTD loading and external entities off.
"""

from __future__ import annotations

import re
from typing import Any, Protocol
from xml.parsers import expat

from content_core.errors import ExtractionError, LimitExceededError, UnsafeInputError

__all__ = [
    "XmlLimits",
    "check_xml_declarations",
    "check_xml_safe",
    "parse_checked",
    "parse_safe_xml",
    "safe_lxml_parser",
]



class XmlLimits(Protocol):
    """The limit these checks read (`content_core.extract.ExtractOptions` has it)."""

    @property
    def max_xml_bytes(self) -> int:
        """Most bytes of XML parsed."""
        ...


# Entity expansion a document may cause beyond its own size before it counts as a bomb.
_MIN_EXPANSION_LIMIT = 1024 * 1024
_PREDEFINED = frozenset({"amp", "lt", "gt", "apos", "quot"})
_REFERENCE = re.compile(r"[&%]([A-Za-z_:][-\w.:]*);")


class _Refused(Exception):
    """Raised inside an expat handler; turned into `UnsafeInputError` by the caller."""


def check_xml_safe(data: bytes, options: XmlLimits, *, media_type: str) -> None:
    """Raise unless `data` is well-formed XML within `max_xml_bytes` whose declarations are safe.

    Raises:
        LimitExceededError: over `max_xml_bytes`.
        UnsafeInputError: a dangerous declaration (module docstring).
        ExtractionError: not well-formed XML.
    """
    if len(data) > options.max_xml_bytes:
        raise LimitExceededError(
            f"XML of {len(data)} bytes over max_xml_bytes={options.max_xml_bytes}",
            media_type=media_type,
            stage="extract",
            limit="max_xml_bytes",
            value=len(data),
            maximum=options.max_xml_bytes,
        )
    check_xml_declarations(data, media_type=media_type)


def check_xml_declarations(data: bytes, *, media_type: str) -> None:
    """Raise if the entity declarations and references of `data` are dangerous.

    Raises:
        UnsafeInputError: nested entities, expansion over the limit, a reference to an
            external parsed entity, or an external parameter entity.
        ExtractionError: not well-formed XML.
    """
    check = _EntityCheck()
    parser = expat.ParserCreate()
    # Never read the external DTD subset nor any external parameter entity.
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = check.declared
    parser.ExternalEntityRefHandler = check.external_reference
    # With a (non-expanding) default handler, entity references in content arrive as "&name;"
    # and are not expanded; start tags arrive as raw markup, with their attribute references.
    parser.DefaultHandler = check.raw_text
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise UnsafeInputError(
            f"XML refused: {exc}", media_type=media_type, stage="extract"
        ) from exc
    except expat.ExpatError as exc:
        if "amplification" in expat.ErrorString(exc.code):
            # Expat's own guard (expat >= 2.4) stopped an expansion inside an attribute value.
            raise UnsafeInputError(
                f"XML refused: entity expansion ({exc})", media_type=media_type, stage="extract"
            ) from exc
        raise ExtractionError(f"not well-formed XML: {exc}", media_type=media_type) from exc
    limit = max(_MIN_EXPANSION_LIMIT, len(data))
    if check.expansion > limit:
        raise UnsafeInputError(
            f"XML refused: entity references expand to {check.expansion} bytes, over "
            f"{limit} (one large entity referenced many times: a quadratic blowup)",
            media_type=media_type,
            stage="extract",
        )


class _EntityCheck:
    """Expat handlers that record internal entities and refuse the dangerous kinds."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.expansion = 0

    def declared(
        self,
        name: str,
        is_parameter: int,
        value: str | None,
        base: str | None,
        system_id: str | None,
        public_id: str | None,
        notation: str | None,
    ) -> None:
        if notation is not None:
            return  # unparsed (NDATA) entity: names a file that no parser reads
        sigil = "%" if is_parameter else "&"
        if value is None:
            if is_parameter:
                raise _Refused(
                    f"external parameter entity %{name}; ({system_id!r}) would pull in "
                    "declarations from outside the document"
                )
            return  # an external parsed entity: refused where it is referenced
        nested = [ref for ref in _REFERENCE.findall(value) if ref not in _PREDEFINED]
        if nested:
            raise _Refused(
                f"entity {sigil}{name}; references the entity {nested[0]!r}: nested "
                "expansion, the 'billion laughs' construction"
            )
        if not is_parameter:
            self.sizes[name] = len(value)

    def external_reference(
        self, context: str | None, base: str | None, system_id: str | None,
        public_id: str | None,
    ) -> int:
        raise _Refused(
            f"reference to the external entity {system_id!r}: reading it would fetch a file "
            "or URL"
        )

    def raw_text(self, text: str) -> None:
        if "&" not in text:
            return
        for name in _REFERENCE.findall(text):
            self.expansion += self.sizes.get(name, 0)


def safe_lxml_parser(
    *, remove_blank_text: bool = False, strip_cdata: bool = True, internal_entities: bool = False
) -> Any:  # Any: lxml.etree.XMLParser, imported lazily
    """Return an lxml parser with DTD loading, external entities and network access off.

    `internal_entities=True` replaces references to internal entities by their text; only for
    data that passed `check_xml_declarations`, which bounds that expansion.
    """
    from lxml import etree

    return etree.XMLParser(
        resolve_entities="internal" if internal_entities else False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_blank_text=remove_blank_text,
        strip_cdata=strip_cdata,
    )


def parse_checked(data: bytes, *, remove_blank_text: bool = False, strip_cdata: bool = True) -> Any:
    """Parse `data` that passed `check_xml_declarations`, internal entities replaced by their
    text; returns the lxml root element.

    A document may reference entities declared only in its external DTD (`&nbsp;` under an
    XHTML DOCTYPE), which is never loaded: libxml2 refuses those when it replaces entities, so
    such a document is parsed again keeping every reference as it is written.

    Raises:
        lxml.etree.XMLSyntaxError, ValueError: not well-formed.
    """
    from lxml import etree

    options = {"remove_blank_text": remove_blank_text, "strip_cdata": strip_cdata}
    try:
        return etree.fromstring(data, safe_lxml_parser(internal_entities=True, **options))
    except etree.XMLSyntaxError:
        return etree.fromstring(data, safe_lxml_parser(**options))


def parse_safe_xml(
    data: bytes,
    options: XmlLimits,
    *,
    media_type: str,
    what: str = "XML",
    remove_blank_text: bool = False,
    strip_cdata: bool = True,
) -> Any:  # Any: an lxml element, imported lazily
    """The root element of `data` once it passed `check_xml_safe` (`parse_checked`); `what`
    names the format in the error.

    Raises:
        LimitExceededError: over `max_xml_bytes`.
        UnsafeInputError: a dangerous declaration (module docstring).
        ExtractionError: not well-formed.
    """
    check_xml_safe(data, options, media_type=media_type)
    from lxml import etree

    try:
        return parse_checked(data, remove_blank_text=remove_blank_text, strip_cdata=strip_cdata)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise ExtractionError(f"not well-formed {what}: {exc}", media_type=media_type) from exc
