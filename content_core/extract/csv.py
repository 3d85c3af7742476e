"""CSV and TSV files as a Markdown table, with the dialect sniffed from a sample."""

from __future__ import annotations

import csv
import io

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._cells import CellBudget, sheet_markdown
from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import PRIORITY_TEXT_FORMAT, Format, Handler

__all__ = ["FORMATS", "CsvExtractor", "sniff_delimiter"]

_CSV_TYPES = frozenset({mt.CSV, "application/csv", "text/x-csv"})
_TSV_TYPES = frozenset({mt.TSV})
_SAMPLE_CHARS = 16 * 1024
_SAMPLE_LINES = 50
_DELIMITERS = ",;\t|"


class _Dialect(csv.excel):
    """Excel quoting rules with the delimiter found in the sample."""


def _count_outside_quotes(line: str, delimiter: str) -> int:
    # Quoted fields may contain the delimiter; splitting on quotes leaves the unquoted
    # stretches at even indexes.
    return sum(part.count(delimiter) for part in line.split('"')[::2])


def sniff_delimiter(text: str) -> str:
    """Return the delimiter that splits the sample's lines most consistently.

    A linear scan of the first lines (`csv.Sniffer` backtracks badly on quote-heavy
    input: seconds for a few kilobytes). Each candidate scores the share of lines on which it
    occurs the modal, non-zero number of times; ties go to the order of `_DELIMITERS`.
    """
    sample = text[:_SAMPLE_CHARS]
    lines = [line for line in sample.splitlines()[:_SAMPLE_LINES] if line.strip()]
    if len(text) > _SAMPLE_CHARS and len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut short
    best, best_score = ",", 0.0
    for delimiter in _DELIMITERS:
        counts = [_count_outside_quotes(line, delimiter) for line in lines]
        nonzero = [c for c in counts if c]
        if not nonzero:
            continue
        mode = max(set(nonzero), key=nonzero.count)
        score = counts.count(mode) / len(counts)
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _dialect(text: str, *, tab_separated: bool) -> type[csv.Dialect]:
    delimiter = "\t" if tab_separated else sniff_delimiter(text)
    return type("_Sniffed", (_Dialect,), {"delimiter": delimiter})


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


_EXTRACTOR = Handler(CsvExtractor(), PRIORITY_TEXT_FORMAT)
FORMATS = (
    Format(name="csv", media_types=(mt.CSV,), kind="csv", handlers=(_EXTRACTOR,),
           extension=".csv", text_to_pdf=True),
    Format(name="tsv", media_types=(mt.TSV,), kind="tsv", handlers=(_EXTRACTOR,),
           extension=".tsv", text_to_pdf=True),
)
