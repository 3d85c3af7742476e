"""SVG to PNG with resvg: no network, no external files, no dangerous entity, bounded work.

The markup first passes the same declaration check as XML text extraction (`_xmlsafe`): nested
or oversized entity expansion and external entities are refused as `UnsafeInputError`; a DOCTYPE,
an internal subset and small internal entities (Illustrator's namespace entities) are fine.
References to anything but the document itself (`#id`) or inline `data:` are removed before
rendering, so no file or URL is ever read.

An SVG that is safe but cannot be drawn (a size in units resvg rejects, markup it does not
accept) raises `ImageConversionError`: the normaliser keeps that as a note on the row, and the
text of the drawing is still extracted from the XML.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

from content_core.binary import media_types as mt
from content_core.errors import (
    BinaryTooLargeError,
    ExtractionError,
    ImageConversionError,
    MissingDependencyError,
)

__all__ = ["RenderedSvg", "render_svg"]

_SVG_DEFAULT_SIZE = 1024.0
_SVG_MAX_ELEMENTS = 50_000
_SVG_MAX_USE = 5_000
_LENGTH = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px|pt|pc|mm|cm|in|em|ex|%)?\s*$"
)
_UNIT_PX = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96.0}


@dataclass(frozen=True, slots=True)
class RenderedSvg:
    """A rendered drawing: PNG bytes and their size in pixels."""

    png: bytes
    width: int
    height: int


def render_svg(data: bytes, name: str, *, max_pixels: int, max_bytes: int) -> RenderedSvg:
    """Render the SVG `data` to PNG within `max_pixels` (a larger canvas is scaled down).

    Raises:
        BinaryTooLargeError: over `max_bytes`, or too many elements.
        UnsafeInputError: dangerous entity declarations or external entity references.
        ImageConversionError: not well-formed, not an SVG, an absurd declared size, or resvg
            cannot render it.
        MissingDependencyError: resvg-py is not installed.
    """
    if len(data) > max_bytes:
        raise BinaryTooLargeError(
            f"{name}: SVG of {len(data)} bytes, over the limit of {max_bytes}",
            media_type=mt.SVG,
        )
    text, (width, height) = _safe_svg_text(data, name)
    scale = 1.0
    if width * height > max_pixels:
        # A huge declared canvas is rendered smaller, not refused: the picture is the point.
        scale = (max_pixels / (width * height)) ** 0.5
    out_w = max(1, int(width * scale))
    out_h = max(1, int(height * scale))
    try:
        import resvg_py
    except ImportError as exc:
        raise MissingDependencyError("resvg-py is required to render SVG", extra="binary") from exc
    try:
        # No resources_dir: resvg then resolves no relative file reference, and it has no
        # network code at all.
        png = bytes(resvg_py.svg_to_bytes(svg_string=text, width=out_w, height=out_h))
    except (ValueError, RuntimeError, OSError) as exc:
        raise ImageConversionError(
            f"{name}: SVG cannot be rendered ({exc})", media_type=mt.SVG
        ) from exc
    return RenderedSvg(png=png, width=out_w, height=out_h)


def _safe_svg_text(data: bytes, name: str) -> tuple[str, tuple[float, float]]:
    """Check the declarations, drop external references, and return the markup and its size."""
    # Imported here: the extract package imports handlers that need this package.
    from content_core.extract._xmlsafe import check_xml_declarations

    try:
        check_xml_declarations(data, media_type=mt.SVG)
        # Expat, as in the check: internal entities expand (bounded by the check), the DTD and
        # external entities are never read.
        root = ElementTree.fromstring(data)
    except (ExtractionError, ElementTree.ParseError) as exc:
        raise ImageConversionError(
            f"{name}: SVG is not well-formed XML ({exc})", media_type=mt.SVG
        ) from exc
    if not root.tag.endswith("svg"):
        raise ImageConversionError(
            f"{name}: root element is {root.tag!r}, not svg", media_type=mt.SVG
        )
    elements = 0
    uses = 0
    for element in root.iter():
        elements += 1
        tag = element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""
        if tag == "use":
            uses += 1
        for attr in list(element.attrib):
            value = element.attrib[attr]
            local = attr.rsplit("}", 1)[-1]
            if local == "href" and not value.startswith(("#", "data:")):
                del element.attrib[attr]  # external file or URL: never fetched
        if elements > _SVG_MAX_ELEMENTS or uses > _SVG_MAX_USE:
            raise BinaryTooLargeError(
                f"{name}: SVG has over {_SVG_MAX_ELEMENTS} elements or {_SVG_MAX_USE} <use>",
                media_type=mt.SVG,
            )
    return ElementTree.tostring(root, encoding="unicode"), _svg_size(root, name)


def _svg_size(root: ElementTree.Element, name: str) -> tuple[float, float]:
    width = _length(root.get("width"))
    height = _length(root.get("height"))
    view_box = (root.get("viewBox") or "").replace(",", " ").split()
    if (width is None or height is None) and len(view_box) == 4:
        try:
            vb_w, vb_h = float(view_box[2]), float(view_box[3])
        except ValueError:
            vb_w = vb_h = 0.0
        if vb_w > 0 and vb_h > 0:
            if width is None and height is None:
                width, height = vb_w, vb_h
            elif width is None:
                width = height * vb_w / vb_h  # type: ignore[operator]
            else:
                height = width * vb_h / vb_w
    width = width if width and width > 0 else _SVG_DEFAULT_SIZE
    height = height if height and height > 0 else _SVG_DEFAULT_SIZE
    if not (width < 1e7 and height < 1e7):
        # Not a danger (the canvas would be scaled into the pixel budget), only undrawable.
        raise ImageConversionError(
            f"{name}: SVG declares a size that cannot be drawn: {width}x{height}",
            media_type=mt.SVG,
        )
    return width, height


def _length(value: str | None) -> float | None:
    if not value:
        return None
    match = _LENGTH.match(value)
    if match is None or match.group(2) in ("%", "em", "ex"):
        return None
    return float(match.group(1)) * _UNIT_PX.get(match.group(2) or "px", 1.0)
