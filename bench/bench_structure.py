"""PDF structure: heading recall and table recovery on generated PDFs whose structure is known.

    python bench/bench_structure.py [--docs 30]

Each document (tests/fixtures/structured_pdf.py) has three sections with two or three
subsections, some third-level headings, a running header and page numbers, and one table per
section drawn with a full grid, with horizontal rules only, with no rules at all, or with no
rules and a column of descriptions wrapped over several lines. Half the documents carry
bookmarks.
A heading is recalled when its text is a `#` line; its level is right when the number of `#`
matches. A table is recovered when at least 90 % of its rows are rows of Markdown tables in
the output (a table that ReportLab split over two pages counts with both parts). The time per
page is set beside PDFium's bare text layer on the same files.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pypdfium2 as pdfium  # noqa: E402

from content_core.extract.base import Blob, ExtractOptions, SniffInfo  # noqa: E402
from content_core.extract.pdf import PdfiumExtractor  # noqa: E402
from tests.fixtures.structured_pdf import TABLE_STYLES, make_structured_pdf  # noqa: E402

_HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)
_ROW = re.compile(r"^\| (.*) \|$", re.MULTILINE)


def _rows(text: str) -> set[tuple[str, ...]]:
    return {tuple(cell.strip() for cell in row.split(" | ")) for row in _ROW.findall(text)}


def _bare_text_layer(data: bytes) -> int:
    document = pdfium.PdfDocument(data)
    try:
        for page in document:
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
        return len(document)
    finally:
        document.close()


def main() -> None:
    """Print heading recall, level accuracy and table recovery, then the time per page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=30)
    args = parser.parse_args()
    extractor = PdfiumExtractor()
    options = ExtractOptions()
    counts: Counter[str] = Counter()
    tables: Counter[str] = Counter()
    recovered: Counter[str] = Counter()
    structured_s = bare_s = 0.0
    pages = 0
    for seed in range(args.docs):
        for outline in (True, False):
            doc = make_structured_pdf(seed, outline=outline)
            started = time.perf_counter()
            result = extractor.extract(
                Blob(doc.data, SniffInfo(media_type="application/pdf")), options
            )
            structured_s += time.perf_counter() - started
            started = time.perf_counter()
            pages += _bare_text_layer(doc.data)
            bare_s += time.perf_counter() - started
            found = {text.strip(): len(marks) for marks, text in _HEADING.findall(result.text)}
            key = "outline" if outline else "fonts only"
            for level, text in doc.headings:
                counts[f"{key} headings"] += 1
                counts[f"{key} recalled"] += text in found
                counts[f"{key} level right"] += found.get(text) == level
            counts[f"{key} false headings"] += len(set(found) - {t for _, t in doc.headings})
            rows = _rows(result.text)
            for expected, style in zip(doc.tables, doc.table_styles, strict=True):
                tables[style] += 1
                hits = sum(1 for row in expected if row in rows)
                recovered[style] += hits >= 0.9 * len(expected)
    print(f"{args.docs * 2} documents, {pages} pages")
    for key in ("outline", "fonts only"):
        total = counts[f"{key} headings"]
        print(
            f"{key:>10}: heading recall {counts[f'{key} recalled'] / total:.3f}, "
            f"level right {counts[f'{key} level right'] / total:.3f} of {total}, "
            f"{counts[f'{key} false headings']} lines wrongly made headings"
        )
    total_tables = sum(tables.values())
    print(f"tables recovered: {sum(recovered.values())}/{total_tables}")
    for style in TABLE_STYLES:
        print(f"  {style:>10}: {recovered[style]}/{tables[style]}")
    print(
        f"time per page: {1000 * structured_s / pages:.2f} ms with structure, "
        f"{1000 * bare_s / pages:.2f} ms PDFium text layer alone "
        f"({structured_s / bare_s:.1f}x)"
    )


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
