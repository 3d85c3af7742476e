"""SVG to PNG with resvg: no network, no external files, no dangerous entity, bounded work.

The markup first passes the same declaration check as XML text extraction
(`content_core.xmlsafe`): nested or oversized entity expansion and external entities are
refused as `UnsafeInputError`; a DOCTYPE,
an internal subset and small internal entities (Illustrator's namespace entities) are fine.
References to anything but the document itself (`#id`) or inline `data:` are removed before
rendering, so no file or URL is ever read.

An SVG that is safe but cannot be drawn completely (a size in units resvg rejects, markup it
does not accept, a `<use>` that refers back to itself, which resvg would skip quietly) raises
`ImageConversionError`; a declared canvas over the pixel limit raises `BinaryTooLargeError`
(not scaled down: the limit is `max_image_pixels`, as for any picture, and a trusted drawing
that large passes once it is raised). Either is the row's error, unless the drawing's text was
still read from the XML: then it is a note.
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
    """Render the SVG `data` to PNG at its declared size.

    Raises:
        BinaryTooLargeError: over `max_bytes`, too many elements, or a declared canvas of more
            than `max_pixels`.
        UnsafeInputError: dangerous entity declarations or external entity references.
        ImageConversionError: not well-formed, not an SVG, an absurd declared size, a `<use>`
            that refers back to itself, or resvg cannot render it.
        MissingDependencyError: resvg-py is not installed.
    """
    if len(data) > max_bytes:
        raise BinaryTooLargeError(
            f"{name}: SVG of {len(data)} bytes, over the limit of {max_bytes}",
            media_type=mt.SVG,
        )
    text, (width, height) = _safe_svg_text(data, name)
    out_w = max(1, int(width))
    out_h = max(1, int(height))
    if out_w * out_h > max_pixels:
        raise BinaryTooLargeError(
            f"{name}: SVG declares a {out_w}x{out_h} canvas, over the pixel limit of "
            f"{max_pixels} (max_image_pixels)",
            limit="max_image_pixels", value=out_w * out_h, maximum=max_pixels,
            media_type=mt.SVG,
        )
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
    from content_core.xmlsafe import check_xml_declarations

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
    looped = _use_loop(root) if uses else None
    if looped is not None:
        raise ImageConversionError(
            f"{name}: SVG <use> refers back to itself (through {looped}): the drawing "
            "never ends, and a renderer leaves that part out",
            media_type=mt.SVG,
        )
    return ElementTree.tostring(root, encoding="unicode"), _svg_size(root, name)


def _use_loop(root: ElementTree.Element) -> str | None:
    """The reference (`#id`) through which a `<use>` reaches itself again, None if none does.

    A `<use>` draws the element it refers to, with everything inside it: a loop is a cycle in
    the graph of parent-to-child edges plus `<use>`-to-target edges (every cycle takes at least
    one `<use>` edge, a tree having none). One depth-first walk finds it, linear in the
    elements, without recursion (the nesting may be as deep as the element limit).
    """
    targets: dict[str, ElementTree.Element] = {}
    for element in root.iter():
        ident = element.get("id")
        if ident is not None:
            targets.setdefault(ident, element)  # the first of duplicated ids, as browsers do

    def reference(element: ElementTree.Element) -> str | None:
        if not (isinstance(element.tag, str) and element.tag.rsplit("}", 1)[-1] == "use"):
            return None
        for attr, value in element.attrib.items():
            if attr.rsplit("}", 1)[-1] == "href" and value.startswith("#"):
                return value
        return None

    def edges(element: ElementTree.Element) -> list[ElementTree.Element]:
        out = list(element)
        ref = reference(element)
        if ref is not None and ref[1:] in targets:
            out.append(targets[ref[1:]])
        return out

    done: set[int] = set()
    for start in root.iter():
        if id(start) in done or reference(start) is None:
            continue
        on_path = {id(start)}
        path: list[tuple[ElementTree.Element, list[ElementTree.Element]]] = [
            (start, edges(start))
        ]
        while path:
            element, pending = path[-1]
            if not pending:
                path.pop()
                on_path.discard(id(element))
                done.add(id(element))
                continue
            child = pending.pop()
            if id(child) in on_path:
                # The loop closes here: name the first <use> on it.
                at = next(i for i, (above, _) in enumerate(path) if above is child)
                refs = [ref for above, _ in path[at:] if (ref := reference(above)) is not None]
                return refs[0] if refs else f"#{child.get('id')}"
            if id(child) not in done:
                on_path.add(id(child))
                path.append((child, edges(child)))
    return None


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
