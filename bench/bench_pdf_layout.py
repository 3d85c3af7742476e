"""PDF layout side by side: our extractor and its peers on the layout ground truth, in one run.

    python bench/bench_pdf_layout.py [--tools ours,pymupdf4llm,...] [--failures TOOL]

The truth (tests/corpus/layout, scored by tests/fixtures/layout_truth.py) holds real PDFs
(LaTeX documents with their sources, a thesis, a Google Docs export, papers, a brochure and
reports from tests/corpus/pdf, checks written by hand from the sources and the rendered pages)
and DOCX files rendered by LibreOffice, whose checks come from their builder. Each check is
olmOCR-bench style: text present, furniture absent from the body, reading order, table cell
neighbours (Markdown or HTML tables), headings as `#` lines, formulas as LaTeX.

Tools: `ours` is `content_core.extract.pdf.PdfiumExtractor` (the `text` of its result:
furniture it moves out of the text counts as removed), `pymupdf4llm` (AGPL: measured here
only, never a dependency), `pdfplumber` (`extract_text` per page), `markitdown`, and `pdfium`,
PDFium's raw text layer. A peer that is not installed is reported as such. Speed is pages per
CPU-second of this process over the whole set.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pypdfium2 as pdfium  # noqa: E402

from tests.fixtures.layout_truth import (  # noqa: E402
    KINDS,
    Check,
    Score,
    document_bytes,
    load_truth,
    page_count,
    score_document,
)

Converter = Callable[[bytes], str]


def _ours() -> Converter:
    from content_core.extract.base import Blob, ExtractOptions, SniffInfo
    from content_core.extract.pdf import PdfiumExtractor

    extractor = PdfiumExtractor()
    options = ExtractOptions()

    def convert(data: bytes) -> str:
        blob = Blob(data, SniffInfo(media_type="application/pdf"))
        return extractor.extract(blob, options).text

    return convert


def _pymupdf4llm() -> Converter:
    import os

    import pymupdf
    import pymupdf4llm

    # Its parser notes ("Using RapidOCR ...") go through PyMuPDF's own message stream.
    pymupdf.set_messages(path=os.devnull)  # type: ignore[no-untyped-call]

    def convert(data: bytes) -> str:
        # PyMuPDF ships without annotations for these two calls.
        document = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
        try:
            return str(pymupdf4llm.to_markdown(document, show_progress=False))
        finally:
            document.close()  # type: ignore[no-untyped-call]

    return convert


def _pdfplumber() -> Converter:
    import pdfplumber

    def convert(data: bytes) -> str:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            return "\n\n".join(page.extract_text() or "" for page in pdf.pages)

    return convert


def _markitdown() -> Converter:
    from markitdown import MarkItDown

    converter = MarkItDown()

    def convert(data: bytes) -> str:
        return converter.convert_stream(io.BytesIO(data), file_extension=".pdf").text_content

    return convert


def _pdfium() -> Converter:
    def convert(data: bytes) -> str:
        document = pdfium.PdfDocument(data)
        try:
            texts = []
            for page in document:
                textpage = page.get_textpage()
                texts.append(textpage.get_text_range())
                textpage.close()
                page.close()
            return "\n\n".join(texts)
        finally:
            document.close()

    return convert


TOOLS: dict[str, Callable[[], Converter]] = {
    "ours": _ours,
    "pymupdf4llm": _pymupdf4llm,
    "pdfplumber": _pdfplumber,
    "markitdown": _markitdown,
    "pdfium": _pdfium,
}


def _percent(value: float | None) -> str:
    return "   -  " if value is None else f"{100 * value:5.1f}%"


def main() -> None:
    """Print per-kind pass rates, headings and speed for every tool, one row each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated, of: " + ", ".join(TOOLS)
    )
    parser.add_argument("--failures", default="", help="also list the failed checks of this tool")
    args = parser.parse_args()
    names = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        parser.error(f"unknown tools: {', '.join(unknown)}")
    documents, checks = load_truth()
    by_doc: dict[str, list[Check]] = {}
    for check in checks:
        by_doc.setdefault(check.doc, []).append(check)
    inputs = [(document, document_bytes(document)) for document in documents]
    pages = sum(page_count(data) for _, data in inputs)
    sources = sorted({document.source for document in documents})
    split = ", ".join(f"{sum(d.source == s for d in documents)} {s}" for s in sources)
    print(
        f"{len(documents)} documents ({split}), {pages} pages, {len(checks)} checks: "
        + ", ".join(f"{sum(c.kind == k for c in checks)} {k}" for k in KINDS)
    )
    header = (
        f"{'tool':<12} {'present':>7} {'absent':>7} {'order':>7} {'table':>7} {'heading':>7} "
        f"{'formula':>7} | {'overall':>7} {'real':>7} {'generated':>9} | "
        f"{'h.prec':>6} {'h.level':>7} | pages/CPU-s"
    )
    print(header)
    print("-" * len(header))
    real: dict[str, Score] = {}
    for name in names:
        try:
            convert = TOOLS[name]()
        except ImportError:
            print(f"{name:<12} not installed")
            continue
        total = Score()
        per_source = {source: Score() for source in sources}
        cpu_s = 0.0
        errors = 0
        for document, data in inputs:
            started = time.process_time()
            try:
                # Some peers print progress and parser notes on stdout: keep the table clean.
                with contextlib.redirect_stdout(io.StringIO()):
                    markdown = convert(data)
            except Exception as exc:  # noqa: BLE001 - a peer's crash is a data point, not the end
                markdown = ""
                errors += 1
                print(
                    f"  {name} failed on {document.path}: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )
            cpu_s += time.process_time() - started
            result = score_document(markdown, by_doc.get(document.path, []))
            total.add(result)
            per_source[document.source].add(result)
        rates = " ".join(f"{_percent(total.rate(kind)):>7}" for kind in KINDS)
        print(
            f"{name:<12} {rates} | {_percent(total.overall):>7} "
            f"{_percent(per_source.get('hand', Score()).overall):>7} "
            f"{_percent(per_source.get('generated', Score()).overall):>9} | "
            f"{total.heading_precision:6.3f} {total.level_accuracy:7.3f} | "
            f"{pages / cpu_s if cpu_s else 0.0:8.1f}"
            + (f"  ({errors} documents failed)" if errors else "")
        )
        real[name] = per_source.get("hand", Score())
        if name == args.failures:
            for failure in total.failures:
                print(f"    FAIL {failure}")
    # The hand-checked real PDFs alone: the generated documents' many table cells and
    # paragraphs weigh heavily in the totals above.
    print(f"\nreal PDFs only ({sum(d.source == 'hand' for d in documents)} documents)")
    print(header.split(" | ")[0] + " | overall | h.prec")
    for name, result in real.items():
        rates = " ".join(f"{_percent(result.rate(kind)):>7}" for kind in KINDS)
        print(
            f"{name:<12} {rates} | {_percent(result.overall):>7} | {result.heading_precision:6.3f}"
        )
    print(
        "present/absent/order/table/formula: pass rate of that kind of check; heading: recall "
        "of the truth's headings as '#' lines (h.prec: of all '#' lines emitted, the share that "
        "are truth headings; h.level: matched headings at the truth's level); real: the "
        "hand-checked PDFs, generated: the LibreOffice renderings."
    )


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
