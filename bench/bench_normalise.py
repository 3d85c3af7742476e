"""Benchmark: process_files over the shared corpus (sniff, guards, conversions, unpacking, text).

Prints files/s in-process, then through the isolated worker pool (cold, then warm), and the
latency of a 3-file batch on the warm pool (isolation must not make small batches slow).

    .venv/bin/python bench/bench_normalise.py [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from content_core.binary import BinaryConfig  # noqa: E402
from content_core.pipeline.config import ProcessingConfig  # noqa: E402
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files  # noqa: E402
from content_core.store.blobs import BlobStore  # noqa: E402
from tests.fixtures.corpus import CORPUS, manifest_rows  # noqa: E402


def main() -> None:
    """Run the three measurements and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    inputs = [
        FileInput(key=row["sha256"], path=CORPUS / row["path"], filename=Path(row["path"]).name)
        for row in manifest_rows()
    ]
    binary = BinaryConfig(passwords=("foo", "password"))
    with tempfile.TemporaryDirectory() as folder:
        store = BlobStore(Path(folder))
        runs = [
            ("in-process", ProcessingConfig(binary=binary, isolate=False)),
            ("isolated, cold pool", ProcessingConfig(binary=binary, workers=args.workers)),
            ("isolated, warm pool", ProcessingConfig(binary=binary, workers=args.workers)),
        ]
        for label, config in runs:
            started = time.perf_counter()
            results = process_files(inputs, config, blob_store=store)
            elapsed = time.perf_counter() - started
            rows = sum(len(records) for records in results)
            print(f"{label:>22}: {len(inputs)} files -> {rows} rows in {elapsed:5.2f} s "
                  f"= {len(inputs) / elapsed:5.1f} files/s")
        started = time.perf_counter()
        process_files(inputs[:3], runs[-1][1], blob_store=store)
        print(f"{'3-file batch, warm':>22}: {time.perf_counter() - started:5.2f} s")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
