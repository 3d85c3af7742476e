"""CSV and TSV files as a Markdown table, with the dialect sniffed from a sample."""

from __future__ import annotations

import csv
import io

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._cells import CellBudget, sheet_markdown
from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text

__all__ = ["CsvExtractor"]

_CSV_TYPES = frozenset({mt.CSV, "application/csv", "text/x-csv"})
_TSV_TYPES = frozenset({mt.TSV})
_SAMPLE_CHARS = 32 * 1024
_DELIMITERS = ",;\t|"


def _dialect(text: str, *, tab_separated: bool) -> type[csv.Dialect] | csv.Dialect:
    if tab_separated:
        return csv.excel_tab
    sample = text[:_SAMPLE_CHARS]
    # Cut at the last newline so the sniffer never sees half a record.
    if len(text) > _SAMPLE_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel


class CsvExtractor:
    """Delimited text (comma, semicolon, tab, pipe) rendered as one Markdown table."""

    name = "csv"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept CSV and TSV media types."""
        return info.media_type in _CSV_TYPES or info.media_type in _TSV_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the rows as a table whose header is the first row.

        Raises:
            ExtractionError: the text is not parseable as delimited records (the plain-text
                handler then keeps it as it is).
        """
        text = decode_bytes(blob.data, declared=blob.info.charset)
        dialect = _dialect(text, tab_separated=blob.info.media_type in _TSV_TYPES)
        reader = csv.reader(io.StringIO(text, newline=""), dialect)
        budget = CellBudget(options.max_table_cells)
        try:
            table = sheet_markdown(None, reader, budget)
        except csv.Error as exc:
            raise ExtractionError(
                f"not parseable as delimited text: {exc}", media_type=blob.info.media_type
            ) from exc
        return build_text([table], handler=self.name, paged=False)
