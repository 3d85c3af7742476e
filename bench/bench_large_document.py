"""One long document through every stage: a Markdown file of `--sections` short sections (the
Markdown chunker makes a chunk of each, 26,000 by default) beside one small file, ingested as
one batch by `run_batch`. Prints, per stage, its rows, its failures and the seconds from the
previous stage's end to its own (the search index runs in a thread beside message parts,
compression and extraction, so its figure overlaps theirs), then the whole run, for
`--repeat` runs (a fresh store each), with medians.

A document this long once failed its whole batch: the offline extraction's wait was its
per-chunk budget times the chunk count, which overflowed the worker pool's wait.

    .venv/bin/python bench/bench_large_document.py [--sections 26000] [--repeat 3]
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

from content_core.discovery import discover_pending  # noqa: E402
from content_core.pipeline import PipelineConfig, run_batch  # noqa: E402
from content_core.pipeline.report import StageReport  # noqa: E402
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig  # noqa: E402
from content_core.store import ContentStore  # noqa: E402


def _write_inbox(folder: Path, sections: int) -> None:
    folder.mkdir(parents=True)
    (folder / "book.md").write_text(
        "".join(
            f"## Section {i}\n\nEntry {i} records item {i * 7} at site {i % 97}.\n\n"
            for i in range(sections)
        ),
        encoding="utf-8",
    )
    (folder / "small.txt").write_text("a small file beside the book\n", encoding="utf-8")


def _one_run(sections: int) -> tuple[list[tuple[StageReport, float]], float]:
    with tempfile.TemporaryDirectory(prefix="bench-large-") as scratch:
        inbox = Path(scratch) / "inbox"
        _write_inbox(inbox, sections)
        store = ContentStore(Path(scratch) / "store")
        source = LocalFolderSource(LocalFolderSourceConfig(folder=inbox))
        found = discover_pending(source, store, set(), settle_s=0.0)
        (batch_id,) = found.batch_ids
        timed: list[tuple[StageReport, float]] = []
        started = last = time.perf_counter()

        def on_stage(report: StageReport) -> None:
            nonlocal last
            now = time.perf_counter()
            timed.append((report, now - last))
            last = now

        run_batch(store, batch_id, PipelineConfig(), on_stage=on_stage)
        return timed, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=26_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    seconds: dict[str, list[float]] = {}
    rows: dict[str, tuple[int, int]] = {}
    totals: list[float] = []
    for run in range(args.repeat):
        timed, total = _one_run(args.sections)
        totals.append(total)
        print(f"run {run + 1}: {total:.1f} s", flush=True)
        for report, elapsed in timed:
            seconds.setdefault(report.table, []).append(elapsed)
            rows[report.table] = (report.rows, report.failures)
    print(f"\n{args.sections} sections, medians of {args.repeat} runs")
    print(f"{'stage':22} {'rows':>7} {'failed':>7} {'median s':>9} {'min s':>7} {'max s':>7}")
    for table, values in seconds.items():
        written, failed = rows[table]
        print(
            f"{table:22} {written:7d} {failed:7d} {statistics.median(values):9.2f} "
            f"{min(values):7.2f} {max(values):7.2f}"
        )
    print(f"{'whole run':22} {'':7} {'':7} {statistics.median(totals):9.2f} "
          f"{min(totals):7.2f} {max(totals):7.2f}")
    return 0


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
