"""Incremental ingestion at scale: first ingest of N small files (sensor-sized discovery ticks,
then the raw_files, normalised_artifacts and chunks stages of every batch; `--stages all` runs
all six), a tick over the unchanged folder, a tick after one change, the sensor cursor's size,
and typical current_* queries before and after compaction.

    .venv/bin/python bench/bench_incremental.py --files 100000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from content_assets.triggers import TICK_BUDGET_S, cursor_for  # noqa: E402
from content_core.discovery import discover_pending  # noqa: E402
from content_core.pipeline import (  # noqa: E402
    PipelineConfig,
    build_chunks,
    build_normalised_artifacts,
    build_raw_files,
    run_batch,
)
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig  # noqa: E402
from content_core.store import ContentStore, compact_store  # noqa: E402

QUERIES = {
    "count+chars of current docs": (
        "SELECT count(*), sum(length(text)) FROM current_normalised_artifacts"
    ),
    "one document by path": (
        "SELECT path, text FROM current_normalised_artifacts WHERE path = '{middle}'"
    ),
    "chunks per mime type": (
        "SELECT r.media_type, count(*) FROM current_chunks c JOIN current_raw_files r "
        "USING (batch_id, source_id, path) GROUP BY r.media_type"
    ),
}


def _name(number: int) -> str:
    return f"d{number // 1000:03d}/f{number:06d}.txt"


def make_files(folder: Path, count: int) -> None:
    """`count` small distinct text files, 1,000 per sub-folder."""
    for number in range(count):
        path = folder / _name(number)
        if number % 1000 == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"Document {number}. Invoice {number * 7} for customer {number % 97}, "
            f"due on day {number % 28 + 1}.\n"
        )


def query_times(store: ContentStore, middle: str, repeat: int = 3) -> dict[str, float]:
    """Median seconds of each typical query (a fresh connection each time, as a user's)."""
    result = {}
    for name, sql in QUERIES.items():
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            connection = store.connect()
            connection.execute(sql.format(middle=middle)).fetchall()
            connection.close()
            times.append(time.perf_counter() - started)
        result[name] = statistics.median(times)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--max-batch-files", type=int, default=2000)
    parser.add_argument("--stages", choices=["three", "all"], default="three")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        root = Path(tmp)
        folder, store = root / "inbox", ContentStore(root / "store")
        started = time.perf_counter()
        make_files(folder, args.files)
        print(f"generated {args.files} files in {time.perf_counter() - started:.1f} s", flush=True)
        source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="bench")

        # 1. First ingest: discovery in sensor-sized ticks, then the stages of every batch.
        cursor, ticks, known = None, [], set()
        ingest_started = time.perf_counter()
        while True:
            found = discover_pending(
                source,
                store,
                known,
                max_batch_files=args.max_batch_files,
                time_budget_s=TICK_BUDGET_S, settle_s=0.0,
            )
            known |= set(found.new_batch_ids)
            cursor = cursor_for(found)
            ticks.append(found.elapsed_s)
            print(
                f"  tick {len(ticks)}: {found.elapsed_s:.1f} s, {len(found.discovered)} "
                f"batches, has_more={found.has_more}",
                flush=True,
            )
            if not found.has_more:
                break
        discovery_s = time.perf_counter() - ingest_started
        batches = store.list_batches("bench")
        sizes = [len(store.read_manifest(b)) for b in batches]
        config = PipelineConfig()
        stages_started = time.perf_counter()
        for number, batch_id in enumerate(batches, start=1):
            if args.stages == "all":
                run_batch(store, batch_id, config)
            else:
                build_raw_files(store, batch_id)
                build_normalised_artifacts(store, batch_id, config.processing)
                build_chunks(store, batch_id, config.chunking)
            if number % 10 == 0:
                print(f"  {number}/{len(batches)} batches through the stages", flush=True)
        stages_s = time.perf_counter() - stages_started
        total_s = time.perf_counter() - ingest_started

        # 2. Ticks over the unchanged folder, then after one change.
        quiet = []
        for _ in range(3):
            found = discover_pending(
                source, store, known, max_batch_files=args.max_batch_files, settle_s=0.0
            )
            assert not found.discovered and not found.new_batch_ids
            quiet.append(found.elapsed_s)
            cursor = cursor_for(found)
        middle = _name(args.files // 2)
        target = folder / middle
        target.write_text(target.read_text() + "Amended.\n")
        changed = discover_pending(
            source, store, known, max_batch_files=args.max_batch_files, settle_s=0.0
        )
        assert len(changed.discovered) == 1
        assert len(store.read_manifest(changed.discovered[0])) == 1
        cursor = cursor_for(changed)
        for batch_id in changed.discovered:
            build_raw_files(store, batch_id)
            build_normalised_artifacts(store, batch_id, config.processing)
            build_chunks(store, batch_id, config.chunking)

        # 3. Queries over the current views, before and after compaction.
        before = query_times(store, middle)
        files_before = len(list((store.root / "tables").rglob("*.parquet")))
        compact_started = time.perf_counter()
        compact_store(store)
        compact_s = time.perf_counter() - compact_started
        files_after = len(list((store.root / "tables").rglob("*.parquet")))
        after = query_times(store, middle)
        docs = store.query("SELECT count(*) AS n FROM current_normalised_artifacts").to_pylist()

        stages = "all six stages" if args.stages == "all" else "raw_files+normalised+chunks"
        print()
        print(f"files: {args.files}  batches: {len(batches)} (largest {max(sizes)})")
        print(
            f"first ingest, discovery: {discovery_s:.1f} s in {len(ticks)} ticks "
            f"(longest tick {max(ticks):.1f} s, budget {TICK_BUDGET_S:.0f} s)"
        )
        print(f"first ingest, {stages}: {stages_s:.1f} s")
        print(f"first ingest files/s (discovery + {stages}): {args.files / total_s:.0f}")
        print(f"first ingest files/s (discovery only): {args.files / discovery_s:.0f}")
        print(f"no-change tick: {statistics.median(quiet):.2f} s (median of 3)")
        print(f"one-change tick: {changed.elapsed_s:.2f} s")
        print(f"cursor size: {len(cursor.encode())} bytes: {cursor}")
        print(f"current documents: {docs[0]['n']}")
        print(f"compaction: {compact_s:.1f} s, table files {files_before} -> {files_after}")
        for name in QUERIES:
            print(f"query '{name}': {before[name]:.3f} s before, {after[name]:.3f} s after")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
