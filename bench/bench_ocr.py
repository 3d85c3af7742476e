"""Benchmark: OCR through the pipeline against each engine run on its own, on the same pages.

Generated A4 pages of known text (tests/fixtures/scans.py) at 200 and 300 DPI, clean, with
noise, and turned by 90 and 180 degrees, written as PNG files and as two-page scanned PDFs.
For each engine it prints pages/s and word accuracy for:

- the pipeline: `process_files` in its worker pool (2 workers, warm, empty OCR cache) on the
  PNG files and on the PDFs (rendered back to pixels, orientation fixed);
- the engine alone on the same PNG files, 2 at a time: the `tesseract` command
  (`tesseract page.png stdout`), and RapidOCR's own Python call (`RapidOCR()(image)`) in 2
  processes with one ONNX Runtime thread each, with its defaults and with the pipeline's
  setting (no line angle classifier). The engine alone does not turn pages upright, so its
  word accuracy counts the turned pages as misread.

    .venv/bin/python bench/bench_ocr.py [--pages 4] [--engines tesseract,rapidocr]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from content_core.ocr import OcrConfig  # noqa: E402
from content_core.pipeline.config import ProcessingConfig  # noqa: E402
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files  # noqa: E402
from content_core.store.blobs import BlobStore  # noqa: E402
from tests.fixtures.scans import (  # noqa: E402
    page_lines,
    render_page,
    scanned_pdf,
    word_accuracy,
)

WORKERS = 2
# (noise, rotation) of the pages of each resolution, repeated to --pages.
_VARIANTS = ((0.0, 0), (0.01, 0), (0.01, 90), (0.0, 180))


def _pages(folder: Path, count: int) -> list[tuple[Path, str, int]]:
    """Write the PNG pages; return (path, known text, dpi) for each."""
    pages = []
    for dpi in (200, 300):
        for index in range(count):
            noise, rotation = _VARIANTS[index % len(_VARIANTS)]
            seed = dpi * 100 + index
            lines = page_lines(seed)
            image = render_page(lines, dpi=dpi, noise=noise, rotation=rotation, seed=seed)
            path = folder / f"page-{dpi}-{index}.png"
            image.save(path, dpi=(dpi, dpi))
            pages.append((path, " ".join(lines), dpi))
    return pages


def _pdfs(folder: Path, pages: list[tuple[Path, str, int]]) -> list[tuple[Path, str]]:
    """Two pages per scanned PDF, at their own resolution; return (path, known text)."""
    from PIL import Image

    pdfs = []
    for start in range(0, len(pages) - 1, 2):
        pair = pages[start : start + 2]
        if pair[0][2] != pair[1][2]:
            continue
        images = [Image.open(path) for path, _, _ in pair]
        path = folder / f"scan-{start}.pdf"
        path.write_bytes(scanned_pdf(images, dpi=pair[0][2]))
        pdfs.append((path, " ".join(text for _, text, _ in pair)))
    return pdfs


def _pipeline(engine: str, files: list[Path], store_dir: Path) -> tuple[float, list[str]]:
    """Seconds and texts of `files` through process_files (fresh store: no cache hits)."""
    shutil.rmtree(store_dir, ignore_errors=True)
    config = ProcessingConfig(ocr=OcrConfig(mode=engine), workers=WORKERS, timeout_s=600)
    store = BlobStore(store_dir / "blobs")
    inputs = [FileInput(key=str(p), path=p, filename=p.name) for p in files]
    started = time.perf_counter()
    results = process_files(inputs, config, blob_store=store)
    elapsed = time.perf_counter() - started
    return elapsed, [records[0].text or "" for records in results]


def _tesseract_cli(files: list[Path]) -> tuple[float, list[str]]:
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}

    def run(path: Path) -> str:
        done = subprocess.run(["tesseract", str(path), "stdout", "-l", "eng"],
                              capture_output=True, text=True, env=env, timeout=600, check=True)
        return done.stdout

    started = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        texts = list(pool.map(run, files))
    return time.perf_counter() - started, texts


_RAPID: Any = None


def _rapid_init(use_cls: bool) -> None:
    global _RAPID
    from PIL import Image
    from rapidocr import RapidOCR

    _RAPID = RapidOCR(params={"Global.log_level": "critical", "Global.use_cls": use_cls,
                              "EngineConfig.onnxruntime.intra_op_num_threads": 1})
    _RAPID(Image.new("L", (200, 60), 255))


def _rapid_read(path: Path) -> str:
    output = _RAPID(str(path))
    return "\n".join(output.txts or ())


def _rapid_alone(files: list[Path], *, use_cls: bool) -> tuple[float, list[str]]:
    context = multiprocessing.get_context("forkserver")
    with context.Pool(WORKERS, initializer=_rapid_init, initargs=(use_cls,)) as pool:
        pool.map(_rapid_read, files[:WORKERS])  # the models are loaded: time the pages only
        started = time.perf_counter()
        texts = pool.map(_rapid_read, files, chunksize=1)
        return time.perf_counter() - started, texts


def _accuracy(truths: list[str], texts: list[str]) -> float:
    return sum(word_accuracy(t, g) for t, g in zip(truths, texts, strict=True)) / len(texts)


def _runs(engine: str, folder: Path, pages: list[tuple[Path, str, int]],
          pdfs: list[tuple[Path, str]]) -> list[tuple[str, int, float, float]]:
    """One round of the measurements of `engine`: (label, pages, seconds, word accuracy)."""
    files = [path for path, _, _ in pages]
    truths = [text for _, text, _ in pages]
    out = []
    elapsed, texts = _pipeline(engine, files, folder / "store")
    out.append(("pipeline, PNG files", len(files), elapsed, _accuracy(truths, texts)))
    elapsed, texts = _pipeline(engine, [p for p, _ in pdfs], folder / "store")
    out.append(("pipeline, scanned PDFs", 2 * len(pdfs), elapsed,
                _accuracy([t for _, t in pdfs], texts)))
    if engine == "tesseract":
        elapsed, texts = _tesseract_cli(files)
        out.append(("`tesseract page.png stdout` alone", len(files), elapsed,
                    _accuracy(truths, texts)))
    else:
        elapsed, texts = _rapid_alone(files, use_cls=True)
        out.append(("RapidOCR()(page) alone", len(files), elapsed, _accuracy(truths, texts)))
        # The pipeline's settings: no line angle classifier (orientation is per page).
        elapsed, texts = _rapid_alone(files, use_cls=False)
        out.append(("RapidOCR(use_cls=False)(page) alone", len(files), elapsed,
                    _accuracy(truths, texts)))
    return out


def main() -> None:
    """Generate the pages, then run each engine through the pipeline and on its own, each
    measurement `--repeat` times in alternation (the fastest is printed: the machine is
    shared, and a slower round measures the neighbours, not OCR)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=4, help="pages per resolution")
    parser.add_argument("--engines", default="tesseract,rapidocr")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        pages = _pages(folder, args.pages)
        pdfs = _pdfs(folder, pages)
        print(f"{len(pages)} pages (200 and 300 DPI; clean, noise, turned 90 and 180 degrees), "
              f"{len(pdfs)} two-page scanned PDFs, {WORKERS} workers, {os.cpu_count()} cores, "
              f"fastest of {args.repeat}")
        for engine in args.engines.split(","):
            # A first batch starts the workers and loads the engine, as a running pipeline has.
            _pipeline(engine, [path for path, _, _ in pages[:WORKERS]], folder / "store")
            rounds = [_runs(engine, folder, pages, pdfs) for _ in range(args.repeat)]
            print(engine)
            for results in zip(*rounds, strict=True):
                label, count, elapsed, accuracy = min(results, key=lambda r: r[2])
                print(f"  {label:<36} {count:3d} pages {elapsed:7.1f} s "
                      f"{count / elapsed:6.2f} pages/s word accuracy {accuracy:.3f}")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
