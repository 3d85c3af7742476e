"""DrawingML charts (the `c:chartSpace` parts of DOCX, XLSX and PPTX) as Markdown tables of
their series: one row per category, one column per series, from the values the chart caches.

"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from typing import Any

from content_core.errors import ExtractionError
from content_core.extract._cells import cell_to_str
from content_core.extract._opc import package_rels, worksheet_parts
from content_core.extract._tables import markdown_table
from content_core.xmlsafe import check_xml_declarations, parse_checked

__all__ = ["CHART_REL", "CellResolver", "chart_markdown", "render_chart_part", "sheet_charts"]

_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
CHART_REL = "/chart"
_MAX_POINTS = 1000

CellResolver = Callable[[str], list[str]]
"""Returns the display values of the cells a chart formula names ("Sheet1!$B$2:$B$9")."""
_MAX_SERIES = 64


def _points(element: Any | None, resolve: CellResolver | None = None) -> dict[int, str]:
    """Cached points of a `c:cat`, `c:val`, `c:xVal` or `c:yVal` (any cache kind); without
    a cache, the cells its formula names, through `resolve`."""
    points: dict[int, str] = {}
    if element is None:
        return points
    for point in element.iter(f"{_C}pt"):
        try:
            index = int(point.get("idx", "-1"))
        except ValueError:
            continue
        value = point.find(f"{_C}v")
        if 0 <= index < _MAX_POINTS and value is not None and value.text is not None:
            points.setdefault(index, _number(value.text))
    formula = next(element.iter(f"{_C}f"), None)
    if not points and resolve is not None and formula is not None and formula.text:
        # openpyxl and other writers may store only the reference, no cached values.
        points = dict(enumerate(resolve(formula.text.strip())[:_MAX_POINTS]))
    if not points:
        # A literal list of strings without a cache (`c:strLit`/`c:numLit` have `c:pt` too);
        # rich text names (`c:rich`) have runs.
        runs = [t.text or "" for t in element.iter(f"{_A}t")]
        if runs:
            points[0] = "".join(runs)
    return points


def _number(text: str) -> str:
    try:
        return cell_to_str(float(text))
    except ValueError:
        return text


def _series_name(series: Any, number: int, resolve: CellResolver | None) -> str:
    names = _points(series.find(f"{_C}tx"), resolve)
    return " ".join(names[i] for i in sorted(names)) or f"Series {number}"


def chart_markdown(chart_space: Any, resolve: CellResolver | None = None) -> str:
    """Return the chart's title line and a table of its series (empty when it has no data);
    `resolve` reads the cells of a series that caches no values."""
    blocks: list[str] = []
    title = chart_space.find(f"{_C}chart/{_C}title")
    if title is not None:
        text = " ".join("".join(t.text or "" for t in title.iter(f"{_A}t")).split())
        if text:
            blocks.append(f"Chart: {text}")
    plot_area = chart_space.find(f"{_C}chart/{_C}plotArea")
    all_series = list(plot_area.iter(f"{_C}ser")) if plot_area is not None else []
    if not all_series:
        return "\n\n".join(blocks)
    categories: dict[int, str] = {}
    columns: list[tuple[str, dict[int, str]]] = []
    for number, series in enumerate(all_series[:_MAX_SERIES], start=1):
        cat = series.find(f"{_C}cat")
        if cat is None:
            cat = series.find(f"{_C}xVal")
        for index, value in _points(cat, resolve).items():
            categories.setdefault(index, value)
        val = series.find(f"{_C}val")
        if val is None:
            val = series.find(f"{_C}yVal")
        columns.append((_series_name(series, number, resolve), _points(val, resolve)))
    indexes = sorted(set(categories).union(*(values for _, values in columns)))
    rows = [["", *(name for name, _ in columns)]]
    for index in indexes:
        label = categories.get(index, str(index + 1))
        rows.append([label, *(values.get(index, "") for _, values in columns)])
    table = markdown_table(rows)
    if table:
        blocks.append(table)
    return "\n\n".join(blocks)


def render_chart_part(data: bytes, *, media_type: str, resolve: CellResolver | None = None) -> str:
    """Return the Markdown of a chart part's XML, or "" if it is not well-formed (a broken
    chart costs its own data, never the document's text).

    Raises:
        UnsafeInputError: the part declares dangerous entities.
    """
    from lxml import etree

    try:
        check_xml_declarations(data, media_type=media_type)
        root = parse_checked(data)
    except (ExtractionError, ValueError, etree.XMLSyntaxError):
        return ""
    return chart_markdown(root, resolve)


def sheet_charts(
    archive: zipfile.ZipFile, *, media_type: str, resolve: CellResolver | None = None
) -> dict[str, list[str]]:
    """Return the Markdown of the charts drawn on each worksheet of a SpreadsheetML package,
    by sheet name (relationships: workbook, sheet, drawing, chart)."""
    charts: dict[str, list[str]] = {}
    for name, part in worksheet_parts(archive, media_type=media_type):
        for _, kind, drawing in package_rels(archive, part):
            if not kind.endswith("/drawing"):
                continue
            for _, chart_kind, chart in package_rels(archive, drawing):
                if not chart_kind.endswith(CHART_REL) or chart not in archive.NameToInfo:
                    continue
                rendered = render_chart_part(
                    archive.read(chart), media_type=media_type, resolve=resolve
                )
                if rendered:
                    charts.setdefault(name, []).append(rendered)
    return charts
