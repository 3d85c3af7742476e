"""The readable text of an SVG drawing: its `<title>`, `<desc>` and `<text>` elements.

The drawing itself is rasterised by the binary normaliser; this handler gives the words in it
without OCR, so they survive a drawing that cannot be rendered. The markup goes through the same
entity and external-reference refusal as XML.
"""

from __future__ import annotations

from typing import Any

from content_core.binary import media_types as mt
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Format, Handler, NormaliseStep
from content_core.xmlsafe import parse_safe_xml

__all__ = ["FORMATS", "SvgTextExtractor"]

_TEXT_ELEMENTS = frozenset({"title", "desc", "text"})
# Inside <text>: a <tspan> or <textPath> placed with its own x, y or dy starts a new line.
_POSITIONED = frozenset({"tspan", "textPath"})
_LINE_ATTRIBUTES = ("x", "y", "dy")


class SvgTextExtractor:
    """Text content of SVG images (no rendering)."""

    name = "svg"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `image/svg+xml`."""
        return info.media_type == mt.SVG

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one line per text-bearing element, in document order.

        Raises:
            UnsafeInputError: dangerous entities or external references.
            ExtractionError: not well-formed XML.
        """
        root = parse_safe_xml(blob.data, options, media_type=blob.info.media_type, what="SVG")
        lines: list[str] = []
        for element in root.iter():
            if isinstance(element.tag, str) and _local(element) in _TEXT_ELEMENTS:
                lines.extend(_element_lines(element))
        return build_text(["\n".join(lines)], handler=self.name, paged=False)


def _local(element: Any) -> str:  # Any: an lxml element
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _element_lines(element: Any) -> list[str]:  # Any: an lxml element
    """The lines of one text element: pieces joined as written, a new line where a <tspan>
    or <textPath> is positioned on its own (the usual way SVG writes several lines)."""
    pieces: list[str] = []

    def walk(node: Any, top: bool) -> None:
        if not top and _local(node) in _POSITIONED and any(
            node.get(name) for name in _LINE_ATTRIBUTES
        ):
            pieces.append("\n")
        pieces.append(node.text or "")
        for child in node:
            if isinstance(child.tag, str) and _local(child) not in _TEXT_ELEMENTS:
                walk(child, False)
            pieces.append(child.tail or "")

    walk(element, True)
    lines = (" ".join(line.split()) for line in "".join(pieces).split("\n"))
    return [line for line in lines if line]


# A picture (rendered to PNG by the image normaliser) whose text elements are real text.
FORMATS = (
    Format(name="svg", media_types=(mt.SVG,), kind="image", normalise=NormaliseStep.CONVERT_IMAGE,
           handlers=(Handler(SvgTextExtractor()),), extension=".svg"),
)
