"""XLSX and XLSM workbooks (transitional or Strict) as one Markdown table per sheet, through
openpyxl in read-only mode; macros are never run.

The `<dimension>` a sheet claims is ignored (`reset_dimensions`): a hostile file can claim a
million rows by sixteen thousand columns, and openpyxl would pad every row to that width.
"""

from __future__ import annotations

import io

import openpyxl

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._cells import CellBudget, sheet_markdown
from content_core.extract._ooxml import as_plain_package
from content_core.extract._zipguard import open_checked_zip
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats

__all__ = ["FORMATS", "XlsxExtractor"]

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
        """Return one page per worksheet: `## <sheet>` and its cells as a table.

        Raises:
            LimitExceededError, UnsafeInputError, EncryptedFileError: the package fails the
                zip checks (a limit, overlapping entries, a password).
            ExtractionError: openpyxl cannot read the workbook.
        """
        archive = open_checked_zip(blob.data, options, media_type=blob.info.media_type)
        data = as_plain_package(blob.data, archive)
        budget = CellBudget(options.max_table_cells)
        pages: list[str] = []
        try:
            workbook = openpyxl.load_workbook(
                io.BytesIO(data), read_only=True, data_only=True, keep_links=False
            )
            try:
                for sheet in workbook.worksheets:
                    if budget.exhausted:
                        break
                    sheet.reset_dimensions()
                    rows = sheet.iter_rows(values_only=True)
                    pages.append(sheet_markdown(sheet.title, rows, budget))
            finally:
                workbook.close()
        except (KeyError, ValueError, TypeError, OSError, AttributeError) as exc:
            raise ExtractionError(
                f"openpyxl cannot read the workbook: {exc}", media_type=blob.info.media_type
            ) from exc
        return build_text(pages, handler=self.name, paged=True)


FORMATS = office_formats(
    Handler(XlsxExtractor()), "xlsx", (".xlsx", mt.XLSX), (".xlsm", mt.XLSM)
)
