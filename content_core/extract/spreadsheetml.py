"""Excel 2003 XML ("XML Spreadsheet 2003", `<?mso-application progid="Excel.Sheet"?>`):
one Markdown table per worksheet, read from the XML after the safe XML check.

Cells may skip columns (`ss:Index`); the skip is bounded by Excel's column count and every
padded cell is charged to the shared cell budget, so a hostile index cannot blow up a row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._cells import CellBudget, sheet_markdown
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Format, Handler
from content_core.xmlsafe import parse_safe_xml

__all__ = ["FORMATS", "SpreadsheetXmlExtractor"]

_SS = "{urn:schemas-microsoft-com:office:spreadsheet}"
_MAX_COLUMNS = 16_384  # Excel's last column, XFD


def _value(data: Any) -> object:
    """The typed value of an `ss:Data` element (inline HTML formatting is flattened)."""
    text = "".join(data.itertext())
    kind = data.get(f"{_SS}Type", "String")
    try:
        if kind == "Number":
            return float(text)
        if kind == "Boolean":
            return text.strip() in ("1", "true", "TRUE")
        if kind == "DateTime":
            return dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return text
    return text


def _index(element: Any, default: int) -> int:
    """The 1-based `ss:Index` of a row or cell, or `default` when absent or invalid."""
    raw = element.get(f"{_SS}Index")
    if raw is None or not raw.strip().isdigit():
        return default
    return int(raw)


def _rows(table: Any) -> Iterator[list[object]]:
    for row in table.iterchildren(f"{_SS}Row"):
        cells: list[object] = []
        for cell in row.iterchildren(f"{_SS}Cell"):
            column = min(_index(cell, len(cells) + 1), _MAX_COLUMNS)
            if column > len(cells) + 1:
                cells.extend([None] * (column - 1 - len(cells)))
            data = cell.find(f"{_SS}Data")
            cells.append(_value(data) if data is not None else None)
            merged = cell.get(f"{_SS}MergeAcross", "")
            if merged.isdigit():
                cells.extend([None] * min(int(merged), _MAX_COLUMNS - len(cells)))
        yield cells


class SpreadsheetXmlExtractor:
    """Excel 2003 XML workbooks; each worksheet becomes one page."""

    name = "spreadsheetml"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/vnd.ms-spreadsheetml`."""
        return info.media_type == mt.SPREADSHEETML_2003

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page per worksheet: `## <name>` and its cells as a table.

        Raises:
            LimitExceededError: over `max_xml_bytes`.
            UnsafeInputError: dangerous entity declarations or external references.
            ExtractionError: not well-formed XML, or not an Excel 2003 workbook.
        """
        media_type = blob.info.media_type
        root = parse_safe_xml(blob.data, options, media_type=media_type)
        if root.tag != f"{_SS}Workbook":
            raise ExtractionError("not an Excel 2003 XML workbook", media_type=media_type)
        budget = CellBudget(options.max_table_cells)
        pages: list[str] = []
        for sheet in root.iterchildren(f"{_SS}Worksheet"):
            if budget.exhausted:
                break
            table = sheet.find(f"{_SS}Table")
            rows = _rows(table) if table is not None else iter(())
            pages.append(sheet_markdown(sheet.get(f"{_SS}Name"), rows, budget))
        return build_text(pages, handler=self.name, paged=True)


FORMATS = (
    Format(name="spreadsheetml", media_types=(mt.SPREADSHEETML_2003,), kind="spreadsheetml",
           handlers=(Handler(SpreadsheetXmlExtractor()),), extension=".xml"),
)
