"""Crash safety with real SIGKILLs: a driver process discovers, ticks the sensor or runs
batches, is killed at several points, then everything runs again to completion. The store must
then equal a clean run's store: no change lost, no row twice, no half-written file visible, and
the interrupted batch completed (by the CLI-style rerun, or by the sensor's retry run key)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import pytest

from content_assets.definitions import build_definitions
from content_assets.partitions import INGEST_BATCHES
from content_core.discovery import discover_pending
from content_core.pipeline import PipelineConfig, run_batch
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import PIPELINE_TABLES, ContentStore

REPO = Path(__file__).resolve().parents[2]
BATCH = 15
# A driver process gets up to 240 s to reach its kill point on a loaded machine, then the rerun.
pytestmark = pytest.mark.timeout(600)
# Write times, and the stat facts of this copy of the files (the clean run reads another copy).
_VOLATILE = {"fetched_at", "discovered_at", "source_root", "signature", "batch_id"}

DRIVER = r"""
import math
import sys
from pathlib import Path


def main():
    mode, folder, store_dir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    batch = int(sys.argv[4])

    from content_core.discovery import discover_pending
    from content_core.pipeline import PipelineConfig, run_batch
    from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
    from content_core.store import ContentStore

    store = ContentStore(store_dir)
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="crash")
    if mode == "plain":
        found = discover_pending(
            source, store, set(), max_batch_files=batch, time_budget_s=1e9, settle_s=0.0
        )
        for batch_id in found.batch_ids:
            run_batch(store, batch_id, PipelineConfig())
        return

    import dagster as dg
    from content_assets.definitions import build_definitions
    from content_assets.partitions import INGEST_BATCHES
    from content_assets.resources import SourceResource

    defs = build_definitions({"CONTENT_STORE_DIR": str(store_dir)})
    resources = dict(defs.resources)
    resources["source"] = SourceResource(
        uri=str(folder), source_id="crash", max_batch_files=batch, settle_s=0
    )
    instance = dg.DagsterInstance.get()
    sensor = defs.resolve_sensor_def("source_sensor")
    result = sensor(dg.build_sensor_context(instance=instance, resources=resources))
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(INGEST_BATCHES, list(request.partition_keys))
    if mode == "job":
        job = defs.resolve_job_def("ingest_batch_job")
        for request in result.run_requests or []:
            # No worker tags: the sensor finds the pid in the run's engine events.
            job.execute_in_process(
                instance=instance, partition_key=request.partition_key, tags=request.tags
            )


if __name__ == "__main__":  # worker processes re-import this file
    main()
"""


def _folder(root: Path, count: int = 45) -> Path:
    folder = root / "inbox"
    shutil.copytree(REPO / "examples" / "inbox", folder)
    for number in range(count):
        (folder / f"note-{number:03d}.txt").write_text(
            f"Note {number}: invoice {number * 13} is due for customer {number % 5}."
        )
    return folder


def _start(mode: str, folder: Path, store: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    script = store.parent / "driver.py"
    script.write_text(DRIVER)
    return subprocess.Popen(
        [sys.executable, str(script), mode, str(folder), str(store), str(BATCH)],
        cwd=REPO,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its worker processes die with it
    )


def _kill_when(process: subprocess.Popen[bytes], ready: Callable[[], bool], limit: float) -> bool:
    """SIGKILL the driver's process group once `ready()` holds; False if it ended first."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and process.poll() is None:
        if ready():
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            return True
        time.sleep(0.005)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        return True
    return False


def _complete(folder: Path, store: ContentStore) -> None:
    """What `content-pipeline ingest` does: discover, then run every unfinished batch."""
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="crash")
    found = discover_pending(
        source, store, set(), max_batch_files=BATCH, time_budget_s=1e9, settle_s=0.0
    )
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, PipelineConfig())


def _tables(store: ContentStore) -> dict[str, list[tuple[str, ...]]]:
    result = {}
    for table in ("batches", *PIPELINE_TABLES):
        rows = store.query(f"SELECT * FROM {table}").to_pylist()
        result[table] = sorted(
            tuple(f"{k}={v}" for k, v in row.items() if k not in _VOLATILE) for row in rows
        )
    return result


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[tuple[str, ...]]]]:
    """The tables of an uninterrupted run over the same files."""
    root = tmp_path_factory.mktemp("clean")
    store = ContentStore(root / "store")
    _complete(_folder(root), store)
    yield _tables(store)


def _assert_like_clean(store: ContentStore, clean: dict[str, list[tuple[str, ...]]]) -> None:
    tables = _tables(store)
    for table, rows in clean.items():
        extra = sorted(set(tables[table]) - set(rows))[:2]
        missing = sorted(set(rows) - set(tables[table]))[:2]
        assert tables[table] == rows, (table, len(tables[table]), len(rows), extra, missing)
    for batch_id in store.list_batches("crash"):
        assert store.is_finished(batch_id)
    keys = store.query(
        "SELECT path, count(*) AS n FROM current_raw_files GROUP BY path HAVING n > 1"
    ).to_pylist()
    assert keys == []


def _visible_parquet_is_whole(store: ContentStore) -> None:
    """Every file a view glob matches opens (no half-written Parquet), temps are hidden."""
    connection = store.connect()
    try:
        for table in ("batches", *PIPELINE_TABLES):
            connection.execute(f"SELECT count(*) FROM {table}").fetchone()
    finally:
        connection.close()
    for temp in store.root.rglob("*.tmp"):
        assert temp.name.startswith(".")


def _manifests(store: ContentStore, at_least: int) -> Callable[[], bool]:
    return lambda: len(store.list_batches("crash")) >= at_least


def _table_file(store: ContentStore, table: str, nth: int) -> Callable[[], bool]:
    def ready() -> bool:
        batches = store.list_batches("crash")
        return len(batches) > nth and store.table_path(table, batches[nth]).is_file()

    return ready


@pytest.mark.slow
@pytest.mark.parametrize(
    "point",
    [
        "discovery-start",  # killed while listing/reading, before any manifest
        "after-first-manifest",  # killed between two manifests of one discovery
        "after-raw-files",  # killed inside a batch run, after its first table
        "after-chunks",  # killed later inside the second batch
    ],
)
def test_plain_ingest_killed_then_rerun_equals_a_clean_run(
    point: str, tmp_path: Path, clean: dict[str, list[tuple[str, ...]]]
) -> None:
    folder = _folder(tmp_path)
    store = ContentStore(tmp_path / "store")
    store.ensure_layout()
    ready = {
        "discovery-start": lambda: (store.root / "state" / "crash.lock").exists(),
        "after-first-manifest": _manifests(store, 1),
        "after-raw-files": _table_file(store, "raw_files", 0),
        "after-chunks": _table_file(store, "chunks", 1),
    }[point]
    process = _start("plain", folder, store.root, {})
    assert _kill_when(process, ready, limit=240)
    _visible_parquet_is_whole(store)
    _complete(folder, store)
    _assert_like_clean(store, clean)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["discovery-start", "after-two-manifests", "after-manifests"])
def test_sensor_tick_killed_mid_way_loses_nothing(
    point: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path)
    store = ContentStore(tmp_path / "store")
    home = tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    ready = {
        "discovery-start": lambda: (store.root / "state" / "crash.lock").exists(),
        "after-two-manifests": _manifests(store, 2),
        "after-manifests": _manifests(store, 4),  # before partitions, runs and cursor
    }[point]
    process = _start("tick", folder, store.root, {"DAGSTER_HOME": str(home)})
    assert _kill_when(process, ready, limit=240)
    _visible_parquet_is_whole(store)
    # The next tick (in this process) finds every change, whatever the killed one had done.
    from content_assets.resources import SourceResource

    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(folder),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )
    resources = {
        **(defs.resources or {}),
        "source": SourceResource(
            uri=str(folder), source_id="crash", max_batch_files=BATCH, settle_s=0
        ),
    }
    with dg.DagsterInstance.get() as instance:
        sensor = defs.resolve_sensor_def("source_sensor")
        result = sensor(dg.build_sensor_context(instance=instance, resources=resources))
        assert isinstance(result, dg.SensorResult)
        for request in result.dynamic_partitions_requests or []:
            instance.add_dynamic_partitions(INGEST_BATCHES, list(request.partition_keys))
        batches = store.list_batches("crash")
        assert instance.get_dynamic_partitions(INGEST_BATCHES) == batches
        assert sorted(r.partition_key for r in result.run_requests or []) == batches
    recorded = store.query("SELECT path, count(*) AS n FROM batches GROUP BY path").to_pylist()
    expected = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert {r["path"] for r in recorded} == expected and {r["n"] for r in recorded} == {1}


@pytest.mark.slow
def test_killed_dagster_run_is_failed_and_retried_by_the_sensor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean: dict[str, list[tuple[str, ...]]]
) -> None:
    folder = _folder(tmp_path)
    store = ContentStore(tmp_path / "store")
    home = tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    process = _start("job", folder, store.root, {"DAGSTER_HOME": str(home)})
    assert _kill_when(process, _table_file(store, "normalised_artifacts", 0), limit=240)
    from content_assets.resources import SourceResource

    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(folder),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )
    resources = {
        **(defs.resources or {}),
        "source": SourceResource(
            uri=str(folder), source_id="crash", max_batch_files=BATCH, settle_s=0
        ),
    }
    first = store.list_batches("crash")[0]
    with dg.DagsterInstance.get() as instance:
        (killed,) = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": first}))
        assert killed.status == dg.DagsterRunStatus.STARTED  # what a SIGKILL leaves behind
        sensor = defs.resolve_sensor_def("source_sensor")
        result = sensor(dg.build_sensor_context(instance=instance, resources=resources))
        assert isinstance(result, dg.SensorResult)
        assert instance.get_run_by_id(killed.run_id).status == dg.DagsterRunStatus.FAILURE
        keys = {r.partition_key: r.run_key for r in result.run_requests or []}
        assert keys[first] == f"{first}#attempt-2"
        assert all(keys[b] == b for b in store.list_batches("crash")[1:])
        job = defs.resolve_job_def("ingest_batch_job")
        for request in result.run_requests or []:
            assert job.execute_in_process(
                instance=instance, partition_key=request.partition_key, tags=request.tags
            ).success
    _assert_like_clean(store, clean)


def test_litter_of_killed_writers_is_invisible_and_swept(tmp_path: Path) -> None:
    from content_core.store.compaction import sweep_stale_temp_files

    folder = _folder(tmp_path, count=3)
    store = ContentStore(tmp_path / "store")
    _complete(folder, store)
    batch = store.list_batches("crash")[0]
    table_dir = store.table_path("chunks", batch).parent
    stale = [
        table_dir / ".tmpabc.parquet.tmp",
        store.root / "batches" / ".tmpdef.parquet.tmp",
        store.blobs.root / ".tmp-ghi",
    ]
    for path in stale:
        path.write_bytes(b"PAR1 half a file")
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    fresh = table_dir / ".tmpjkl.parquet.tmp"
    fresh.write_bytes(b"PAR1 a writer still at work")
    before = _tables(store)  # the views never open a temporary file
    assert sweep_stale_temp_files(store) == 3
    assert not any(p.exists() for p in stale) and fresh.exists()
    assert _tables(store) == before
