"""Several batches materialise at once in separate processes (each a Dagster run of the batch
job against one instance, as the queued run coordinator launches them with a limit above 1)
while another process holds content.duckdb open and queries it in a loop: no lock error, no
lost row, and every query sees each batch whole (per batch, a table has 0 rows or all)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from content_core.discovery import discover_pending
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import PIPELINE_TABLES, ContentStore

REPO = Path(__file__).resolve().parents[2]

WRITER = r"""
import sys


def main():
    import dagster as dg
    from content_assets.definitions import build_definitions
    from content_assets.triggers import worker_tags

    store_dir, batch_id = sys.argv[1], sys.argv[2]
    defs = build_definitions({"CONTENT_STORE_DIR": store_dir})
    job = defs.resolve_job_def("ingest_batch_job")
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            instance=instance, partition_key=batch_id, tags=worker_tags()
        )
    sys.exit(0 if result.success else 1)


if __name__ == "__main__":
    main()
"""

READER = r"""
import json
import sys
import time
from pathlib import Path

import duckdb

catalog, stop, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
tables = sys.argv[4].split(",")
connection = duckdb.connect(catalog)  # held open read-write, as a user's DuckDB CLI would
observations, errors = [], []
ready = out.with_suffix(".ready")
deadline = time.monotonic() + 1800  # bounded, whatever happens to the test
while time.monotonic() < deadline:
    last = stop.exists()  # a round that starts once `stop` exists sees the final store
    seen = {}
    try:
        for table in tables:
            rows = connection.execute(
                f"SELECT batch_id, count(*) FROM {table} GROUP BY batch_id"
            ).fetchall()
            seen[table] = {batch: count for batch, count in rows}
        connection.execute("SELECT count(*) FROM current_chunks").fetchone()
        observations.append(seen)
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    if not ready.exists():
        ready.write_text("one round done")  # the writers start now
    if last:
        break
    time.sleep(0.01)
connection.close()
out.write_text(json.dumps({"observations": observations, "errors": errors}))
"""


@pytest.mark.slow
@pytest.mark.timeout(900)  # four Dagster runs in processes of their own, on a loaded machine
def test_parallel_batch_runs_while_a_reader_queries_the_catalog(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    shutil.copytree(REPO / "examples" / "inbox", folder)
    for number in range(54):
        (folder / f"memo-{number:03d}.txt").write_text(
            f"Memo {number}. Invoice {number * 31} for client {number % 9}, due in March."
        )
    store = ContentStore(tmp_path / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="par")
    found = discover_pending(source, store, set(), max_batch_files=15, settle_s=0.0)
    batches = list(found.batch_ids)
    assert len(batches) == 4
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("ingest_batches", batches)
    (tmp_path / "writer.py").write_text(WRITER)
    (tmp_path / "reader.py").write_text(READER)
    stop, out = tmp_path / "stop", tmp_path / "reader.json"
    ready = out.with_suffix(".ready")
    reader = subprocess.Popen(
        [
            sys.executable,
            str(tmp_path / "reader.py"),
            str(store.catalog_path),
            str(stop),
            str(out),
            ",".join(PIPELINE_TABLES),
        ],
        cwd=REPO,
        env=env,
    )
    writers: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / f"writer-{n}.log" for n in range(len(batches))]
    try:
        # The reader has queried the empty store before any writer starts (a poll, no sleep).
        deadline = time.monotonic() + 120
        while not ready.exists() and reader.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the reader did not query"
        for batch, log in zip(batches, logs, strict=True):
            with log.open("wb") as stderr:  # a file, never a pipe nobody drains
                writers.append(
                    subprocess.Popen(
                        [sys.executable, str(tmp_path / "writer.py"), str(store.root), batch],
                        cwd=REPO,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=stderr,
                    )
                )
        deadline = time.monotonic() + 600
        codes = [w.wait(timeout=max(1.0, deadline - time.monotonic())) for w in writers]
        failures = [
            log.read_text()[-2000:] for w, log in zip(writers, logs, strict=True) if w.returncode
        ]
        assert codes == [0] * len(batches), failures
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait(timeout=30)
        stop.write_text("done")  # the reader's last round starts after this: the final store
        try:
            reader.wait(timeout=120)
        except subprocess.TimeoutExpired:
            reader.kill()
            reader.wait(timeout=30)
    report = json.loads(out.read_text())
    assert report["errors"] == []
    final = {
        table: {
            r["batch_id"]: r["n"]
            for r in store.query(
                f"SELECT batch_id, count(*) AS n FROM {table} GROUP BY batch_id"
            ).to_pylist()
        }
        for table in PIPELINE_TABLES
    }
    assert set(final["raw_files"]) == set(batches)
    assert sum(final["raw_files"].values()) == 60  # every file, once
    observations = report["observations"]
    assert len(observations) > 10
    partial = [
        (table, batch, count, final[table].get(batch))
        for seen in observations
        for table, counts in seen.items()
        for batch, count in counts.items()
        if count != final[table].get(batch)
    ]
    assert partial == []  # never a part of a batch
    # The reader saw the store grow while runs were under way, not only before or after.
    totals = {sum(seen["raw_files"].values()) for seen in observations}
    assert min(totals) < 60 and 60 in totals
    assert all(store.is_finished(b) for b in batches)
