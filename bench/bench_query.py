"""How fast `content-pipeline query` answers a small query: the median of N runs of the real
command in a subprocess (what a person or a script waits for), beside a bare interpreter's
start, the query in process, the query path's import time, and what importing Dagster (as the
command once did) would add.

    .venv/bin/python bench/bench_query.py [--runs 15] [--store DIR]

Without --store, a store is built from examples/inbox in a temporary folder (no Dagster).
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from content_assets.cli.query import run_query  # noqa: E402

SQL = (
    "SELECT source_id, path, kind, length(text) AS chars FROM current_normalised_artifacts "
    "ORDER BY path LIMIT 10"
)
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _median_s(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *args], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise SystemExit(f"{args}: exit {done.returncode}\n{done.stderr}")
    return done


def _import_s(module: str) -> float:
    """Cumulative import time of `module` in a fresh interpreter (-X importtime)."""
    done = _run("-X", "importtime", "-c", f"import {module}")
    line = [entry for entry in done.stderr.splitlines() if entry.endswith(f"| {module}")][-1]
    return int(re.split(r"\s*\|\s*", line)[1]) / 1e6


def _build_store(root: Path) -> Path:
    from content_core.discovery import discover_pending
    from content_core.pipeline import PipelineConfig, run_batch
    from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
    from content_core.store import ContentStore

    store = ContentStore(root / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=REPO / "examples" / "inbox"))
    found = discover_pending(source, store, set(), time_budget_s=float("inf"), settle_s=0.0)
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, PipelineConfig())
    store.ensure_layout()
    return store.root


def main() -> None:
    """Build or open a store, then print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--store", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = args.store.resolve() if args.store else _build_store(Path(folder))
        command = ("-m", "content_assets.cli", "query", SQL, "--store", str(store))
        _run(*command)  # warm the page cache
        cli_s = _median_s(lambda: _run(*command), args.runs)
        bare_s = _median_s(lambda: _run("-c", "pass"), args.runs)
        in_process_s = _median_s(
            lambda: run_query(store, SQL, "table", full=True, output=None, out=io.StringIO()),
            args.runs,
        )
        print(f"store: {store}")
        print(f"content-pipeline query, subprocess  median of {args.runs}: {cli_s * 1000:7.0f} ms")
        print(f"bare interpreter start (python -c pass)           : {bare_s * 1000:7.0f} ms")
        print(f"query in process (open catalog, run, render)      : {in_process_s * 1000:7.1f} ms")
        print(
            f"import content_assets.cli (the query path)        : "
            f"{_import_s('content_assets.cli') * 1000:7.0f} ms"
        )
        print(
            f"import dagster (what the query path no longer pays): "
            f"{_import_s('dagster') * 1000:7.0f} ms"
        )


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
