"""Legacy Excel (BIFF, .xls) workbooks as Markdown tables through xlrd, no LibreOffice needed."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import xlrd

from content_core.binary import media_types as mt
from content_core.errors import EncryptedFileError, ExtractionError
from content_core.extract._cells import CellBudget, sheet_markdown
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats

__all__ = ["FORMATS", "XlsExtractor"]



class XlsExtractor:
    """Excel 97-2003 workbooks; each worksheet becomes one page."""

    name = "xls"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/vnd.ms-excel`."""
        return info.media_type == mt.XLS

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page per worksheet: `## <sheet>` and its cells as a table.

        Raises:
            EncryptedFileError: the workbook is password-protected.
            ExtractionError: xlrd cannot read the workbook.
        """
        media_type = blob.info.media_type
        budget = CellBudget(options.max_table_cells)
        pages: list[str] = []
        try:
            # ragged_rows: a lone cell at row 65535, column 255 must not pad every row.
            book = xlrd.open_workbook(
                file_contents=blob.data, on_demand=True, ragged_rows=True, logfile=_NullLog()
            )
            try:
                for index in range(book.nsheets):
                    if budget.exhausted:
                        break
                    sheet = book.sheet_by_index(index)
                    pages.append(sheet_markdown(sheet.name, _rows(xlrd, book, sheet), budget))
                    book.unload_sheet(index)
            finally:
                book.release_resources()
        except xlrd.XLRDError as exc:
            if "encrypt" in str(exc).lower():
                raise EncryptedFileError(
                    "password-protected Excel 97-2003 workbook (XLS)",
                    file_format="XLS",
                    media_type=media_type,
                    stage="extract",
                ) from exc
            raise ExtractionError(
                f"xlrd cannot read the workbook: {exc}", media_type=media_type
            ) from exc
        except (AssertionError, IndexError, KeyError, ValueError, struct.error) as exc:
            raise ExtractionError(
                f"xlrd cannot read the workbook: {exc}", media_type=media_type
            ) from exc
        return build_text(pages, handler=self.name, paged=True)


def _rows(xlrd: Any, book: Any, sheet: Any) -> Iterator[list[object]]:
    for row_index in range(sheet.nrows):
        row: list[object] = []
        for cell in sheet.row(row_index):
            if cell.ctype == xlrd.XL_CELL_DATE:
                try:
                    row.append(xlrd.xldate.xldate_as_datetime(cell.value, book.datemode))
                except (ValueError, OverflowError, xlrd.xldate.XLDateError):
                    row.append(cell.value)
            elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
                row.append(bool(cell.value))
            elif cell.ctype == xlrd.XL_CELL_ERROR:
                row.append(xlrd.error_text_from_code.get(cell.value, "#ERR"))
            else:
                row.append(cell.value)
        yield row


class _NullLog:
    """Swallows xlrd's warnings, which it prints to stdout by default."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None


FORMATS = office_formats(Handler(XlsExtractor()), "xls", (".xls", mt.XLS), package=None)
