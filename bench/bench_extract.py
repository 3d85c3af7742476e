"""Text extraction benchmark, in one run over the test corpus (tests/corpus):

1. PDF text, side by side on the same PDFs: our extractor alone (PDFium, with headings and
   tables), the whole in-process path (`process_files`: sniff, PDF guard, extract; OCR off, so
   that it does the extractor's work plus the path's own), its ratio to the extractor (goal
   >= 0.8) and pypdf, with a reading-order check against pypdf. The same path with OCR of the
   scanned pages is printed beside them. Rates are pages per second of this process's CPU
   time, measured in alternation, so that other load on the machine moves them little.
2. Whole corpus: files/s and `must_contain` hits of our pipeline (`process_files`, in
   process) against markitdown (`pip install -e '.[bench]'`).

    .venv/bin/python bench/bench_extract.py [--corpus DIR] [--min-seconds 2]
"""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from content_core.extract import extract_text  # noqa: E402
from content_core.ocr import OcrConfig  # noqa: E402
from content_core.pipeline.config import ProcessingConfig  # noqa: E402
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files  # noqa: E402
from content_core.store.blobs import BlobStore  # noqa: E402


def _rows(corpus: Path) -> list[dict[str, str]]:
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def _alternate(works: dict[str, Callable[[], int]], min_seconds: float) -> dict[str, float]:
    """Run each `work` (returns units done) in turn until each has used `min_seconds` of CPU;
    return units per CPU-second of each."""
    spent = dict.fromkeys(works, 0.0)
    done = dict.fromkeys(works, 0)
    while min(spent.values()) < min_seconds:
        for name, work in works.items():
            start = time.process_time()
            done[name] += work()
            spent[name] += time.process_time() - start
    return {name: done[name] / spent[name] for name in works}


def _pypdf_pages(data: bytes) -> list[str]:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt("")
    return [page.extract_text() or "" for page in reader.pages]


def _our_pages(data: bytes) -> list[str]:
    result = extract_text(data, "application/pdf")
    return [result.text[s.start : s.end] for s in result.pages]


def bench_pdf(corpus: Path, rows: list[dict[str, str]], min_seconds: float) -> None:
    pdfs: list[tuple[str, bytes]] = []
    for row in rows:
        if row["media_type"] != "application/pdf":
            continue
        data = (corpus / row["path"]).read_bytes()
        try:
            _our_pages(data)
            _pypdf_pages(data)
        except Exception as exc:  # noqa: BLE001 - a file neither can open is left out, and said so
            print(f"  skipped {row['path']}: {type(exc).__name__}")
            continue
        pdfs.append((row["path"], data))

    def run(extract: Callable[[bytes], list[str]]) -> Callable[[], int]:
        return lambda: sum(len(extract(data)) for _, data in pdfs)

    with tempfile.TemporaryDirectory() as folder:
        store = BlobStore(Path(folder) / "blobs")
        paths = [path for path, _ in pdfs]
        rates = _alternate(
            {
                "ours": run(_our_pages),
                "path": _pipeline(corpus, paths, store, OcrConfig(mode="off")),
                "pypdf": run(_pypdf_pages),
            },
            min_seconds,
        )
        with_ocr = _alternate({"ocr": _pipeline(corpus, paths, store, OcrConfig())}, min_seconds)
    pypdf_rate, our_rate, path_rate = rates["pypdf"], rates["ours"], rates["path"]

    print(f"\n== PDF text: {len(pdfs)} PDFs, {sum(len(_our_pages(d)) for _, d in pdfs)} pages")
    print(f"{'file':55s} {'pages':>5s} {'order sim':>9s}")
    similarities: list[float] = []
    for path, data in pdfs:
        ours, theirs = _our_pages(data), _pypdf_pages(data)
        page_sims = []
        for a, b in zip(ours, theirs, strict=False):
            # Our pages end with the filled form values, which pypdf does not give: the order
            # check compares the page text only.
            words_a, words_b = a.split("\n\nForm fields:\n")[0].split(), b.split()
            if not words_a and not words_b:
                continue
            matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
            page_sims.append(matcher.ratio())
        if page_sims:
            similarities.extend(page_sims)
        shown = f"{statistics.mean(page_sims):9.3f}" if page_sims else "  (empty)"
        print(f"{path:55s} {len(ours):5d} {shown}")
    print("pages per CPU-second, side by side:")
    print(f"  extractor alone (PDFium + structure) : {our_rate:8.1f}")
    print(
        f"  whole path (sniff, guard, extract)   : {path_rate:8.1f}"
        f"  = {path_rate / our_rate:.2f}x the extractor (goal >= 0.80)"
    )
    print(f"  pypdf                                : {pypdf_rate:8.1f}"
          f"  (extractor {our_rate / pypdf_rate:.1f}x pypdf)")
    print(f"  whole path with OCR of scanned pages : {with_ocr['ocr']:8.1f}")
    print(
        f"reading order vs pypdf: mean word-sequence similarity {statistics.mean(similarities):.3f}"
        f", median {statistics.median(similarities):.3f}, min {min(similarities):.3f}"
        f" over {len(similarities)} pages with text"
    )


def _pipeline(
    corpus: Path, paths: list[str], store: BlobStore, ocr: OcrConfig
) -> Callable[[], int]:
    """One pass of the in-process path over the PDFs; returns the pages done."""
    inputs = [FileInput(key=p, path=corpus / p, filename=Path(p).name) for p in paths]
    config = ProcessingConfig(isolate=False, ocr=ocr)

    def work() -> int:
        results = process_files(inputs, config, blob_store=store)
        return sum(len(r.pages) for records in results for r in records if r.kind == "pdf")

    return work


def _eligible(row: dict[str, str]) -> bool:
    return bool(row["must_contain"]) and "OCR" not in row["notes"]


def _hit(row: dict[str, str], text: str) -> bool:
    return " ".join(row["must_contain"].split()) in " ".join(text.split())


def bench_corpus(corpus: Path, rows: list[dict[str, str]]) -> None:
    inputs = [
        FileInput(key=r["path"], path=corpus / r["path"], filename=Path(r["path"]).name)
        for r in rows
    ]
    with tempfile.TemporaryDirectory() as folder:
        store = BlobStore(Path(folder))
        start = time.perf_counter()
        results = process_files(inputs, ProcessingConfig(isolate=False), blob_store=store)
        ours_s = time.perf_counter() - start
    our_texts = [" ".join(r.text or "" for r in records) for records in results]

    from markitdown import MarkItDown

    converter = MarkItDown(enable_plugins=False)
    warm = next(r for r in rows if r["path"].endswith(".docx"))
    try:  # load its models outside the timing
        converter.convert(str(corpus / warm["path"]))
    except Exception as exc:  # noqa: BLE001 - an extra of markitdown's missing: counted below
        name = type(exc).__name__
        print(f"markitdown cannot read {warm['path']} ({name}); install markitdown[all]")
    their_texts: list[str] = []
    failures = 0
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in rows:
            try:
                their_texts.append(converter.convert(str(corpus / row["path"])).text_content)
            except Exception:  # noqa: BLE001 - a peer's failure on a file is counted, not fatal
                failures += 1
                their_texts.append("")
    theirs_s = time.perf_counter() - start

    eligible = [i for i, row in enumerate(rows) if _eligible(row)]
    our_hits = [i for i in eligible if _hit(rows[i], our_texts[i])]
    their_hits = [i for i in eligible if _hit(rows[i], their_texts[i])]
    our_errors = sum(1 for records in results if records[0].error_type)
    print(f"\n== Corpus: {len(rows)} files, {len(eligible)} with a must_contain phrase (no OCR)")
    print(
        f"ours (process_files, in process): {len(rows) / ours_s:7.1f} files/s, "
        f"must_contain {len(our_hits)}/{len(eligible)}, raw-file error rows {our_errors}"
    )
    print(
        f"markitdown                      : {len(rows) / theirs_s:7.1f} files/s, "
        f"must_contain {len(their_hits)}/{len(eligible)}, exceptions {failures}"
    )
    print(
        "missed by ours      :", ", ".join(rows[i]["path"] for i in eligible if i not in our_hits)
    )
    print(
        "missed by markitdown:", ", ".join(rows[i]["path"] for i in eligible if i not in their_hits)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("CONTENT_CORPUS_DIR", REPO / "tests" / "corpus"))
    parser.add_argument("--corpus", type=Path, default=default)
    parser.add_argument("--min-seconds", type=float, default=2.0)
    args = parser.parse_args()
    rows = _rows(args.corpus)
    bench_pdf(args.corpus, rows, args.min_seconds)
    bench_corpus(args.corpus, rows)


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
