"""`content-pipeline status` and `retry` on real ingests: a failed run and a batch holding
worker-crash rows show as failed with their reason, and a retry leaves the same rows as a clean
run, none twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from content_core.pipeline.stages.normalised_artifacts import _artifact_row
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, _worker_failure
from content_core.sandbox import TaskFailure
from content_core.store import NORMALISED_ARTIFACTS, PIPELINE_TABLES, ContentStore
from content_core.store.row_arrow import rows_from_table
from content_core.store.rows import NormalisedArtifactRow
from tests.support.cli import make_folder, run_cli, status_of
from tests.support.s3_server import S3Endpoint, S3Prefix

# Five ingests and retries of the real CLI; each may take a minute on a loaded machine.
pytestmark = pytest.mark.timeout(900)
# Columns that differ between two ingests of the same files: write times, this copy's stat.
# batch ids hold the store's location: two stores fed from one folder never share one
_VOLATILE = {"fetched_at", "discovered_at", "source_root", "signature", "batch_id"}


def _tables(store: Path) -> dict[str, list[str]]:
    content = ContentStore(store)
    return {
        table: sorted(
            repr(sorted((k, v) for k, v in row.items() if k not in _VOLATILE))
            for row in content.query(f"SELECT * FROM {table}").to_pylist()
        )
        for table in ("batches", *PIPELINE_TABLES)
    }


def test_the_commands_on_an_s3_store(s3: S3Endpoint, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("QS3CLI alpha\n")
    (folder / "b.md").write_text("# QS3CLI\n\nbravo\n")
    uri = f"s3://{s3.bucket}/{tmp_path.name}/store"
    home = tmp_path / "home"
    # Nothing there yet: a clear error naming the URI, and nothing is created.
    for command in ("status", "query"):
        args = (command, "SELECT 1") if command == "query" else (command,)
        done = run_cli(*args, "--store", uri, home=home, store=None)
        assert done.returncode == 2, done.stderr
        assert f"no content store at {uri}" in done.stderr and "Traceback" not in done.stderr
    assert S3Prefix(s3, f"{tmp_path.name}/store").keys() == []

    done = run_cli("ingest", str(folder), "--source-id", "docs", "--store", uri, home=home,
                   store=None)
    assert done.returncode == 0, done.stderr
    assert f"store:    {uri}" in done.stdout
    status = run_cli("status", "--store", uri, home=home, store=None)
    assert status.returncode == 0, status.stderr
    assert f"store:       {uri}" in status.stdout and "1 done" in status.stdout
    assert "files:     2 current" in status.stdout
    # Another machine (a work folder of its own) with CONTENT_STORE_DIR only: the catalog is
    # built there from the bucket.
    query = run_cli(
        "query", "SELECT path FROM current_raw_files ORDER BY path", "--format", "csv",
        home=home, store=None, CONTENT_STORE_DIR=uri,
        CONTENT_STORE_WORK_DIR=str(tmp_path / "other-machine"),
    )
    assert query.returncode == 0, query.stderr
    assert query.stdout.split() == ["path", "a.txt", "b.md"]
    retry = run_cli("retry", "--store", uri, home=home, store=None)
    assert retry.returncode == 0 and "no failed batch to retry" in retry.stdout, retry.stderr
    # search builds a local index over a folder store only: a typed refusal, exit 2.
    search = run_cli("search", "alpha", "--store", uri, home=home, store=None)
    assert search.returncode == 2 and "Traceback" not in search.stderr
    assert f"needs a store in a folder, not {uri}" in search.stderr


def test_status_with_no_store_is_an_error(tmp_path: Path) -> None:
    done = run_cli("status", home=tmp_path / "home", store=tmp_path / "none")
    assert done.returncode != 0 and "no content store at" in done.stderr
    assert not (tmp_path / "none").exists()


def test_retry_of_failed_batches_gives_a_clean_runs_rows(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, "inbox")
    clean, store, home = tmp_path / "clean", tmp_path / "store", tmp_path / "home"
    assert run_cli("ingest", str(folder), home=tmp_path / "clean-home", store=clean).returncode == 0

    # A setting a resource refuses is an error before anything runs.
    refused = run_cli("ingest", str(folder), home=home, store=store, CONTENT_CHUNKER="no-such")
    assert refused.returncode == 2 and refused.stderr.startswith("error: invalid setting: ")
    assert "Traceback" not in refused.stderr and not store.exists()

    # A run that fails: an extraction schema that cannot be imported fails agentic_extractions
    # (after its retry policy's two retries).
    schema = "no_such_schema_module:Schema"
    failed = run_cli("ingest", str(folder), home=home, store=store, CONTENT_AGENT_SCHEMA=schema)
    assert failed.returncode == 1
    assert "FAILED" in failed.stdout and "in agentic_extractions:" in failed.stdout
    assert "Traceback" not in failed.stdout + failed.stderr  # the reason, not Dagster's log
    status = status_of(store, home)
    assert "0 pending, 0 running, 1 failed, 0 done" in status
    assert "in agentic_extractions: ModuleNotFoundError" in status and "no_such_schema" in status

    retried = run_cli("retry", home=home, store=store)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "0 pending, 0 running, 0 failed, 1 done" in status_of(store, home)
    assert _tables(store) == _tables(clean)
    nothing = run_cli("retry", home=home, store=store)
    assert nothing.returncode == 0 and "no failed batch to retry" in nothing.stdout

    # A batch holding a worker-crash row (as the worker pool writes it when a worker dies).
    content = ContentStore(store)
    (batch_id,) = content.list_batches()
    rows = rows_from_table(
        NormalisedArtifactRow, content.read_rows(NORMALISED_ARTIFACTS, batch_id)
    )
    keep = [row for row in rows if row.path != "plain.txt"]
    victim = next(row for row in rows if row.path == "plain.txt")
    crashed = _worker_failure(
        FileInput(key="plain.txt", path=folder / "plain.txt", filename="plain.txt"),
        TaskFailure("WorkerCrashedError", "the worker process died (SIGKILL)"),
    )
    raw = {
        "batch_id": victim.batch_id,
        "source_id": victim.source_id,
        "path": victim.path,
        "path_bytes": victim.path_bytes,
        "sha256": victim.raw_sha256,
    }
    crash_row = _artifact_row(crashed, raw, victim.fingerprint)
    content.write_rows(NORMALISED_ARTIFACTS, batch_id, [*keep, crash_row])
    status = status_of(store, home)
    assert "1 failed" in status and "1 WorkerCrashedError" in status

    retried = run_cli("retry", batch_id, home=home, store=store)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "0 pending, 0 running, 0 failed, 1 done" in status_of(store, home)
    assert _tables(store) == _tables(clean)  # replaced, not duplicated


def test_a_dagster_home_that_does_not_exist_yet_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Dagster refuses a DAGSTER_HOME that is not a folder yet: the command once ended there
    # with Dagster's traceback.
    from content_assets.state import dagster_home

    wanted = tmp_path / "new" / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(wanted))
    assert dagster_home() == wanted and wanted.is_dir()
    # configured explicitly: no telemetry, no first-visit dialog, no "no dagster.yaml" warning
    assert "enabled: false" in (wanted / "dagster.yaml").read_text(encoding="utf-8")


def test_two_stores_fed_from_one_folder_share_one_instance(tmp_path: Path) -> None:
    # Batch ids are partitions and run keys of the one instance: the second store's first
    # batch once had the first store's id, and its run was taken for a retry of the other's.
    folder = make_folder(tmp_path, "inbox")
    home = tmp_path / "home"
    for name in ("one", "two"):
        done = run_cli("ingest", str(folder), home=home, store=tmp_path / name)
        assert done.returncode == 0, done.stdout + done.stderr
    files = len(list(folder.iterdir()))
    ids = []
    for name in ("one", "two"):
        store = ContentStore(tmp_path / name)
        ids.append({r["batch_id"] for r in store.query("SELECT batch_id FROM batches").to_pylist()})
        rows = store.query("SELECT count(*) AS n FROM current_raw_files").to_pylist()
        assert rows == [{"n": files}], name
    assert ids[0] and ids[1] and not ids[0] & ids[1]
