"""PPTX presentations, one page per slide: titles, text frames, tables, alt text, chart
titles, equations (as LaTeX) and speaker notes, through python-pptx after the zip guard."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator
from typing import Any

import pptx

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._cells import cell_to_str
from content_core.extract._comments import comment_block, slide_comments
from content_core.extract._omml import OMATH, OMATH_PARA, omml_latex
from content_core.extract._ooxml import (
    PRESENTATION_MAIN,
    PRESENTATION_VARIANTS,
    as_plain_package,
)
from content_core.extract._tables import markdown_table
from content_core.extract._zipguard import open_checked_zip
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats

logger = logging.getLogger(__name__)

__all__ = ["FORMATS", "PptxExtractor"]

_PPTX_TYPES = frozenset(
    {
        mt.PPTX,
        mt.PPTM,
        "application/vnd.openxmlformats-officedocument.presentationml.slideshow",
        "application/vnd.openxmlformats-officedocument.presentationml.template",
    }
)
# Group shapes nest; a hostile file could nest them deeply.
_MAX_GROUP_DEPTH = 32
_MAX_CHART_ROWS = 1000
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_ALTERNATE = f"{_MC}AlternateContent"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_A14_MATH = "{http://schemas.microsoft.com/office/drawing/2010/main}m"
_OMML_ROOTS = frozenset({OMATH, OMATH_PARA})



def _shape_blocks(shapes: Iterable[Any], depth: int = 0) -> Iterator[str]:
    """Yield the Markdown blocks of `shapes` in their z-order (the order PowerPoint reads)."""
    if depth > _MAX_GROUP_DEPTH:
        return
    tree = getattr(shapes, "_spTree", None)
    if tree is None:
        yield from _each_shape(shapes, depth)
        return
    # python-pptx does not see the shapes inside `mc:AlternateContent`: there an equation text
    # box (OMML in `a14:m`) stands beside its fallback picture. The tree gives their place.
    by_element = {getattr(shape, "_element", None): shape for shape in shapes}
    for child in tree:
        if child.tag == _ALTERNATE:
            formula = _equation_box(child)
            if formula:
                yield formula
        elif child in by_element:
            yield from _each_shape([by_element[child]], depth)


def _each_shape(shapes: Iterable[Any], depth: int) -> Iterator[str]:
    for shape in shapes:
        try:
            blocks = list(_one_shape(shape, depth))
        # python-pptx raises these on shape kinds it does not model (NotImplementedError for
        # unrecognised auto shapes); such a shape loses its text, the slide keeps the rest.
        except _SHAPE_ERRORS as exc:
            logger.debug("shape skipped: %s", exc)
            continue
        yield from blocks


def _equation_box(alternate: Any) -> str:
    """The text of the equation text box in an `mc:Choice`, its formulas as LaTeX."""
    choice = alternate.find(f"{_MC}Choice")
    if choice is None or next(choice.iter(_A14_MATH), None) is None:
        return ""
    lines: list[str] = []
    for paragraph in choice.iter(f"{_A}p"):
        parts: list[str] = []
        for child in paragraph:
            if child.tag == _A14_MATH:
                parts.extend(omml_latex(math) for math in child if math.tag in _OMML_ROOTS)
            elif child.tag in (f"{_A}r", f"{_A}fld"):
                parts.append("".join(t.text or "" for t in child.iter(f"{_A}t")))
            elif child.tag == f"{_A}br":
                parts.append("\n")
        line = "".join(parts).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def _one_shape(shape: Any, depth: int) -> Iterator[str]:
    if _tag(shape).endswith("}grpSp") and hasattr(shape, "shapes"):
        yield from _shape_blocks(shape.shapes, depth + 1)
        return
    if getattr(shape, "has_table", False):
        rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
        table = markdown_table(rows)
        if table:
            yield table
        return
    if getattr(shape, "has_chart", False):
        yield from _chart_blocks(shape.chart)
        return
    if getattr(shape, "has_text_frame", False):
        text = shape.text_frame.text.strip()
        if text:
            yield _as_title(text) if _is_title(shape) else text
        return
    description = _alt_text(shape)
    if description:
        yield f"![{description}]"


def _chart_blocks(chart: Any) -> Iterator[str]:
    """Yield the chart's title and its data as a table (categories by series)."""
    try:
        if chart.has_title and chart.chart_title.has_text_frame:
            title = chart.chart_title.text_frame.text.strip()
            if title:
                yield f"Chart: {title}"
        for plot in chart.plots:
            categories = [str(c) for c in plot.categories]
            series = list(plot.series)
            if not series:
                continue
            rows = [["", *(str(s.name) for s in series)]]
            columns = [list(s.values) for s in series]
            for index, category in enumerate(categories[:_MAX_CHART_ROWS]):
                rows.append(
                    [category, *(cell_to_str(c[index]) if index < len(c) else "" for c in columns)]
                )
            table = markdown_table(rows)
            if table:
                yield table
    # python-pptx parses chart XML lazily; an unusual or broken chart part should cost the
    # chart's data, not the whole presentation.
    except (KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:
        logger.debug("chart data unreadable: %s", exc)


def _is_title(shape: Any) -> bool:
    if not getattr(shape, "is_placeholder", False):
        return False
    try:
        kind = shape.placeholder_format.type
    except ValueError:
        return False
    return kind is not None and "TITLE" in str(kind) and "SUBTITLE" not in str(kind)


def _as_title(text: str) -> str:
    return "### " + " ".join(text.split())


def _alt_text(shape: Any) -> str:
    element = getattr(shape, "_element", None)
    if element is None:
        return ""
    for props in element.iter("{*}cNvPr"):
        return " ".join((props.get("descr") or props.get("title") or "").split())
    return ""


def _tag(shape: Any) -> str:
    element = getattr(shape, "_element", None)
    tag = getattr(element, "tag", "")
    return tag if isinstance(tag, str) else ""


_SHAPE_ERRORS = (NotImplementedError, ValueError, KeyError, AttributeError, TypeError, IndexError)


class PptxExtractor:
    """PowerPoint 2007+ presentations: one page per slide."""

    name = "pptx"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept PresentationML types."""
        return info.media_type in _PPTX_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page per slide: `## Slide N`, its shapes' text, then its notes.

        Raises:
            LimitExceededError, UnsafeInputError, EncryptedFileError: the package fails the
                zip checks (a limit, overlapping entries, a password).
            ExtractionError: python-pptx cannot read the presentation.
        """
        archive = open_checked_zip(blob.data, options, media_type=blob.info.media_type)
        data = as_plain_package(blob.data, archive, PRESENTATION_VARIANTS, PRESENTATION_MAIN)
        pages: list[str] = []
        media_type = blob.info.media_type
        try:
            presentation = pptx.Presentation(io.BytesIO(data))
            for number, slide in enumerate(presentation.slides, start=1):
                if number > options.max_pdf_pages:
                    break
                blocks = [f"## Slide {number}", *_shape_blocks(slide.shapes)]
                if options.include_comments and slide.has_notes_slide:
                    frame = slide.notes_slide.notes_text_frame
                    notes = frame.text.strip() if frame is not None else ""
                    if notes:
                        blocks.append("Notes:\n" + notes)
                if options.include_comments:
                    found = slide_comments(slide.part, presentation.part, media_type=media_type)
                    comments = comment_block(found)
                    if comments:
                        blocks.append(comments)
                pages.append("\n\n".join(blocks))
        except (KeyError, ValueError, TypeError, AttributeError, OSError) as exc:
            raise ExtractionError(
                f"python-pptx cannot read the presentation: {exc}",
                media_type=blob.info.media_type,
            ) from exc
        return build_text(pages, handler=self.name, paged=True)


FORMATS = office_formats(
    Handler(PptxExtractor()), "pptx", (".pptx", mt.PPTX), (".pptm", mt.PPTM)
)
