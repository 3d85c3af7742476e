"""XLSX and XLSM workbooks (transitional or Strict) as one Markdown table per sheet, through
openpyxl in read-only mode; macros are never run.

The `<dimension>` a sheet claims is ignored (`reset_dimensions`): a hostile file can claim a
million rows by sixteen thousand columns, and openpyxl would pad every row to that width.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import openpyxl
from openpyxl.utils.cell import range_boundaries

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._cells import CellBudget, cell_to_str, sheet_markdown
from content_core.extract._charts import sheet_charts
from content_core.extract._comments import comment_block, sheet_comments
from content_core.extract._ooxml import as_plain_package
from content_core.extract._zipguard import open_checked_zip
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats

__all__ = ["FORMATS", "XlsxExtractor"]

# A chart that caches no values is read from at most this many cells per series.
_MAX_CHART_CELLS = 10_000

_XLSX_TYPES = frozenset(
    {
        mt.XLSX,
        mt.XLSM,
        "application/vnd.openxmlformats-officedocument.spreadsheetml.template",
    }
)



class XlsxExtractor:
    """Excel 2007+ workbooks; each worksheet becomes one page of Markdown table text."""

    name = "xlsx"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept SpreadsheetML workbook types."""
        return info.media_type in _XLSX_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page per worksheet: `## <sheet>`, its cells as a table, its charts as
        tables of their series and its comments; then one page per chart sheet.

        Raises:
            LimitExceededError, UnsafeInputError, EncryptedFileError: the package fails the
                zip checks (a limit, overlapping entries, a password).
            ExtractionError: openpyxl cannot read the workbook.
        """
        archive = open_checked_zip(blob.data, options, media_type=blob.info.media_type)
        data = as_plain_package(blob.data, archive)
        budget = CellBudget(options.max_table_cells)
        pages: list[str] = []
        package = archive if data is blob.data else zipfile.ZipFile(io.BytesIO(data))
        comments = (
            sheet_comments(package, media_type=blob.info.media_type)
            if options.include_comments
            else {}
        )
        try:
            workbook = openpyxl.load_workbook(
                io.BytesIO(data), read_only=True, data_only=True, keep_links=False
            )
            try:
                charts = sheet_charts(
                    package,
                    media_type=blob.info.media_type,
                    resolve=lambda formula: _cells(workbook, formula),
                )
                for sheet in workbook.worksheets:
                    if budget.exhausted:
                        break
                    sheet.reset_dimensions()
                    rows = sheet.iter_rows(values_only=True)
                    page = sheet_markdown(sheet.title, rows, budget)
                    notes = comment_block(comments.get(sheet.title, []))
                    extra = [*charts.get(sheet.title, []), *([notes] if notes else [])]
                    pages.append("\n\n".join([page, *extra]))
                # A chart sheet (a whole sheet that is one chart) has no cells: a page of its
                # own after the worksheets.
                titles = {sheet.title for sheet in workbook.worksheets}
                for name, rendered in charts.items():
                    if name not in titles:
                        pages.append("\n\n".join([f"## {name}", *rendered]))
            finally:
                workbook.close()
        except (KeyError, ValueError, TypeError, OSError, AttributeError) as exc:
            raise ExtractionError(
                f"openpyxl cannot read the workbook: {exc}", media_type=blob.info.media_type
            ) from exc
        return build_text(pages, handler=self.name, paged=True)


def _cells(workbook: Any, formula: str) -> list[str]:
    """The values of the cells a chart formula names: one sheet and one range
    ("'My sheet'!$B$2:$B$9"); anything else (unions, names) gives no values."""
    sheet_name, _, reference = formula.rpartition("!")
    sheet_name = sheet_name.strip("'").replace("''", "'")
    if sheet_name not in workbook.sheetnames or "," in reference:
        return []
    try:
        min_col, min_row, max_col, max_row = range_boundaries(reference.replace("$", ""))
    except ValueError:
        return []
    if None in (min_col, min_row, max_col, max_row):
        return []
    if (max_row - min_row + 1) * (max_col - min_col + 1) > _MAX_CHART_CELLS:
        return []
    rows = workbook[sheet_name].iter_rows(
        min_row=min_row, max_row=max_row, min_col=min_col, max_col=max_col, values_only=True
    )
    return [cell_to_str(value) for row in rows for value in row]


FORMATS = office_formats(
    Handler(XlsxExtractor()), "xlsx", (".xlsx", mt.XLSX), (".xlsm", mt.XLSM)
)
