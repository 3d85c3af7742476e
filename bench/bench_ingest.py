"""Ingest N files (distinct copies of the sample corpus) through the Dagster job and through a
plain loop over the same library stages; print both times and their ratio.

    .venv/bin/python bench/bench_ingest.py --files 1000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "examples"))

import dagster as dg  # noqa: E402
from make_inbox import build  # noqa: E402

from content_assets.definitions import build_definitions  # noqa: E402
from content_assets.partitions import INGEST_BATCHES  # noqa: E402
from content_core.ingest import PipelineConfig, discover_pending, run_batch  # noqa: E402
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig  # noqa: E402
from content_core.store import ContentStore  # noqa: E402


def make_corpus(folder: Path, files: int) -> None:
    """Write `files` files: copy k of the sample corpus lives in folder/copy-k/."""
    written, variant = 0, 1
    while written < files:
        target = folder / f"copy-{variant:05d}"
        target.mkdir(parents=True)
        for name, data in build(variant).items():
            if written == files:
                break
            (target / name).write_bytes(data)
            written += 1
        variant += 1


def run_dagster(folder: Path, work: Path) -> float:
    store = ContentStore(work / "store")
    defs = build_definitions({"CONTENT_STORE_DIR": str(store.root)})
    job = defs.resolve_job_def("ingest_batch_job")
    # The instance exists before an ingest (a user's DAGSTER_HOME): its setup is not timed.
    with dg.instance_for_test() as instance:
        started = time.perf_counter()
        found = discover_pending(
            LocalFolderSource(LocalFolderSourceConfig(folder=folder)),
            store,
            set(),
            time_budget_s=float("inf"),
        )
        instance.add_dynamic_partitions(INGEST_BATCHES, list(found.new_batch_ids))
        for batch_id in found.batch_ids:
            assert job.execute_in_process(instance=instance, partition_key=batch_id).success
        return time.perf_counter() - started


def run_plain(folder: Path, work: Path) -> float:
    store = ContentStore(work / "store")
    started = time.perf_counter()
    found = discover_pending(
        LocalFolderSource(LocalFolderSourceConfig(folder=folder)),
        store,
        set(),
        time_budget_s=float("inf"),
    )
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, PipelineConfig())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["DAGSTER_HOME"] = str(root)
        corpus = root / "corpus"
        make_corpus(corpus, args.files)
        dagster_times, plain_times = [], []
        for attempt in range(args.repeat):
            # Alternate the order so neither path always runs on a warm page cache.
            order = [("plain", run_plain), ("dagster", run_dagster)]
            if attempt % 2:
                order.reverse()
            for name, runner in order:
                elapsed = runner(corpus, root / f"{name}-{attempt}")
                (dagster_times if name == "dagster" else plain_times).append(elapsed)
                print(f"run {attempt + 1} {name:<8} {elapsed:7.2f} s", flush=True)
        dagster_median = statistics.median(dagster_times)
        plain_median = statistics.median(plain_times)
        print(f"files: {args.files}")
        print(f"dagster median: {dagster_median:.2f} s ({args.files / dagster_median:.0f} files/s)")
        print(f"plain   median: {plain_median:.2f} s ({args.files / plain_median:.0f} files/s)")
        print(f"ratio dagster/plain: {dagster_median / plain_median:.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main()
