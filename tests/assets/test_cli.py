"""The `content-pipeline` command as people and scripts use it, run as a real subprocess on a
real ingest: query formats that parse back with full values, --output files DuckDB reads, the
missing-store error, the query path's imports, quiet and verbose ingest output without bar
control characters off a terminal, the per-source sample, status, and retry of a failed batch
or of a batch holding worker-crash rows (same rows as a clean run, none twice)."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from content_core.processing import FileInput, _worker_failure
from content_core.sandbox import TaskFailure
from content_core.store import NORMALISED_ARTIFACTS, PIPELINE_TABLES, ContentStore
from tests.conftest import SAMPLE_INBOX

REPO = Path(__file__).resolve().parents[2]
# Ingests run several subprocesses of the real CLI; each may take a minute on a loaded machine.
pytestmark = pytest.mark.timeout(900)
# Longer than any terminal column, with the characters CSV and Markdown must escape.
LONG_TEXT = (
    "QCLI-LONG-START "
    + ", ".join(f'item {n} "quoted" | piped' for n in range(40))
    + (" QCLI-LONG-END")
)
LONG_SQL = "SELECT path, text FROM current_normalised_artifacts WHERE path = 'long.txt'"
# Columns that differ between two ingests of the same files: write times, this copy's stat.
_VOLATILE = {"fetched_at", "discovered_at", "source_root", "mtime_ns", "ctime_ns", "inode"}


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    shutil.copytree(SAMPLE_INBOX, folder)
    (folder / "long.txt").write_text(LONG_TEXT + "\n", encoding="utf-8")
    return folder


def _cli(
    *args: str, home: Path, store: Path | None, cwd: Path = REPO, **env: str
) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess whose stdout is a pipe (not a terminal)."""
    environ = {k: v for k, v in os.environ.items() if k != "CONTENT_STORE_DIR"}
    environ.update(PYTHONPATH=str(REPO), DAGSTER_HOME=str(home), **env)
    if store is not None:
        environ["CONTENT_STORE_DIR"] = str(store)
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "content_assets.cli", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        encoding="utf-8",
        timeout=600,
    )


@dataclass(frozen=True)
class Ingested:
    """A store holding two sources, and what their ingests printed."""

    root: Path
    store: Path
    home: Path
    first: subprocess.CompletedProcess[str]
    second: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    root = tmp_path_factory.mktemp("cli")
    store, home = root / "store", root / "home"
    first = _cli("ingest", str(_folder(root, "alpha")), home=home, store=store)
    assert first.returncode == 0, first.stdout + first.stderr
    second = _cli("ingest", str(_folder(root, "beta")), home=home, store=store)
    assert second.returncode == 0, second.stdout + second.stderr
    return Ingested(root, store, home, first, second)


def _query(ingested: Ingested, *args: str) -> subprocess.CompletedProcess[str]:
    done = _cli("query", *args, home=ingested.home, store=ingested.store)
    assert done.returncode == 0, done.stderr
    return done


def _source_ids(store: Path) -> list[str]:
    rows = ContentStore(store).query("SELECT DISTINCT source_id FROM batches ORDER BY 1")
    return [row["source_id"] for row in rows.to_pylist()]


# -- query ------------------------------------------------------------------------------------


def test_csv_parses_back_with_full_values(ingested: Ingested) -> None:
    done = _query(ingested, LONG_SQL, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == len(_source_ids(ingested.store)) == 2
    assert {row["text"].strip() for row in rows} == {LONG_TEXT}
    # A multi-line value stays one CSV record.
    notes = _query(
        ingested,
        "SELECT text FROM current_normalised_artifacts WHERE path = 'notes.md' LIMIT 1",
        "-f",
        "csv",
    )
    (record,) = list(csv.DictReader(io.StringIO(notes.stdout)))
    assert "\n" in record["text"] and record["text"].startswith("# Pipeline notes")


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_and_json_lines_parse_back(ingested: Ingested, fmt: str) -> None:
    sql = (
        "SELECT source_id, path, path_bytes, page_count, derived_from, text "
        "FROM current_normalised_artifacts ORDER BY source_id, path, filename"
    )
    done = _query(ingested, sql, "--format", fmt)
    if fmt == "json":
        rows = json.loads(done.stdout)
    else:
        rows = [json.loads(line) for line in done.stdout.splitlines()]
    expected = ContentStore(ingested.store).query(sql).to_pylist()
    assert len(rows) == len(expected) > 0
    for got, want in zip(rows, expected, strict=True):
        assert (got["source_id"], got["path"], got["page_count"], got["text"]) == (
            want["source_id"],
            want["path"],
            want["page_count"],
            want["text"],
        )
        assert got["derived_from"] == want["derived_from"]
    assert sum(1 for row in rows if row["text"] and LONG_TEXT in row["text"]) == 2


def test_markdown_and_table_keep_full_values_off_a_terminal(ingested: Ingested) -> None:
    markdown = _query(ingested, LONG_SQL, "--format", "markdown").stdout.splitlines()
    assert markdown[:2] == ["| path | text |", "|---|---|"]
    escaped = LONG_TEXT.replace("|", "\\|")
    assert len(markdown) == 4 and all(escaped in line for line in markdown[2:])
    table = _query(ingested, "SELECT * FROM current_normalised_artifacts").stdout
    assert table.count(LONG_TEXT) == 2  # no value cut ...
    assert "shown)" not in table  # ... and no column or row dropped
    header = next(line for line in table.splitlines() if "artifact_id" in line)
    assert "error_message" in header and "fingerprint" in header


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".json"])
def test_output_files_are_read_by_duckdb(ingested: Ingested, suffix: str) -> None:
    target = ingested.root / f"out{suffix}"
    done = _query(ingested, LONG_SQL, "--output", str(target))
    assert done.stdout == "" and target.is_file()
    rows = duckdb.sql(f"SELECT path, text FROM '{target}'").fetchall()
    assert [(path, text.strip()) for path, text in rows] == [("long.txt", LONG_TEXT)] * 2


def test_store_option_wins_over_the_environment(ingested: Ingested, tmp_path: Path) -> None:
    done = _cli(
        "query",
        "SELECT count(*) AS n FROM current_raw_files",
        "-f",
        "jsonl",
        "--store",
        str(ingested.store),
        home=ingested.home,
        store=tmp_path / "elsewhere",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"n": 2 * (len(list(SAMPLE_INBOX.iterdir())) + 1)}


@pytest.mark.parametrize("given", ["default", "environment", "option"])
def test_missing_store_is_an_error_and_nothing_is_created(tmp_path: Path, given: str) -> None:
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    missing = tmp_path / "no-store"
    options = ["--store", str(missing)] if given == "option" else []
    done = _cli(
        "query",
        "SELECT 1",
        *options,
        home=tmp_path / "home",
        cwd=cwd,
        store=missing if given == "environment" else None,
    )
    where = cwd / "content_store" if given == "default" else missing
    assert done.returncode != 0
    assert done.stderr.strip() == (
        f"error: no content store at {where}; run `content-pipeline ingest` first "
        "or set CONTENT_STORE_DIR"
    )
    assert list(cwd.iterdir()) == [] and not missing.exists()


def test_query_answers_while_another_process_holds_the_catalog(ingested: Ingested) -> None:
    """A read-only open is refused while the DuckDB CLI (say) holds the file read-write; the
    query then runs on the same views built in memory."""
    ready = ingested.root / "holder-ready"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import pathlib, sys, duckdb\n"
            "connection = duckdb.connect(sys.argv[1])\n"
            "pathlib.Path(sys.argv[2]).touch()\n"
            "sys.stdin.read()\n",
            str(ingested.store / "content.duckdb"),
            str(ready),
        ],
        stdin=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # generous: the holder only starts DuckDB
        while not ready.exists():
            assert time.monotonic() < deadline and holder.poll() is None, "holder never ready"
            time.sleep(0.05)
        done = _query(ingested, "SELECT count(*) AS n FROM current_raw_files", "-f", "jsonl")
        assert json.loads(done.stdout) == {"n": 2 * (len(list(SAMPLE_INBOX.iterdir())) + 1)}
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_a_bad_query_is_an_error(ingested: Ingested) -> None:
    done = _cli("query", "SELEC 1", home=ingested.home, store=ingested.store)
    assert done.returncode == 1 and "syntax error" in done.stderr and done.stdout == ""


def test_the_query_path_imports_neither_dagster_nor_pyarrow(ingested: Ingested) -> None:
    """What keeps a query interactive (bench/bench_query.py measures it)."""
    argv = ["query", "SELECT count(*) FROM current_chunks", "--store", str(ingested.store)]
    heavy = ("dagster", "pyarrow", "pandas", "content_core.ingest")
    code = (
        "import sys\n"
        "from content_assets.cli import main\n"
        f"code = main({argv!r})\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        encoding="utf-8",
        timeout=300,
    )
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr


# -- ingest output ----------------------------------------------------------------------------


def test_quiet_ingest_has_no_debug_lines_and_no_bar_off_a_terminal(ingested: Ingested) -> None:
    for done in (ingested.first, ingested.second):
        output = done.stdout + done.stderr
        assert "DEBUG" not in output and "dagster - " not in output
        assert "\r" not in output and "\x1b" not in output  # no bar redraws, no colours
        for stage in ("raw_files", "normalised_artifacts", "merged_extractions"):
            assert f"    {stage:<22}" in done.stdout  # a plain line per stage ...
        assert "rows written" in done.stdout  # ... and the summary table


def test_the_sample_query_shows_only_the_ingested_source(ingested: Ingested) -> None:
    alpha, beta = _source_ids(ingested.store)
    sample = ingested.second.stdout.split("sample:", 1)[1]
    assert "source_id" in sample and f"WHERE source_id = '{beta}'" in sample
    assert beta in sample.split("\n", 1)[1] and alpha not in sample


def _on_a_terminal(args: list[str], env: dict[str, str], limit_s: float) -> str:
    """Run the command with stdout and stderr on a pseudo-terminal; return all it wrote."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "content_assets.cli", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    chunks = []
    deadline = time.monotonic() + limit_s
    try:
        while time.monotonic() < deadline:
            readable, _, _ = select.select([main], [], [], 1.0)
            if readable:
                try:
                    data = os.read(main, 65536)
                except OSError:  # EIO: the command ended and closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
        assert process.wait(timeout=max(1.0, deadline - time.monotonic())) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


def test_ingest_on_a_terminal_shows_a_bar_per_stage(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "inbox")
    env = {
        **{k: v for k, v in os.environ.items() if k != "CONTENT_STORE_DIR"},
        "PYTHONPATH": str(REPO),
        "DAGSTER_HOME": str(tmp_path / "home"),
        "CONTENT_STORE_DIR": str(tmp_path / "store"),
        "COLUMNS": "160",
        "TERM": "xterm",
    }
    (tmp_path / "home").mkdir()
    output = _on_a_terminal(["ingest", str(folder)], env, limit_s=600)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output)
    files = len(list(folder.iterdir()))
    for stage in ("raw_files", "normalised_artifacts", "merged_extractions"):
        assert re.search(rf"{stage}\s.*{files}/{files} files .*files/s .*ETA", plain), stage
    assert "\r" in output or "\x1b[" in output  # redrawn in place
    assert "rows written" in plain and "DEBUG" not in plain


def test_verbose_ingest_shows_dagster_debug_lines(tmp_path: Path) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "a.txt").write_text("A single note for the verbose ingest QCLI-V01.")
    done = _cli("ingest", "-v", str(folder), home=tmp_path / "home", store=tmp_path / "store")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dagster - DEBUG" in done.stderr


# -- status and retry -------------------------------------------------------------------------


def _tables(store: Path) -> dict[str, list[str]]:
    content = ContentStore(store)
    return {
        table: sorted(
            repr(sorted((k, v) for k, v in row.items() if k not in _VOLATILE))
            for row in content.query(f"SELECT * FROM {table}").to_pylist()
        )
        for table in ("batches", *PIPELINE_TABLES)
    }


def _status(store: Path, home: Path) -> str:
    done = _cli("status", home=home, store=store)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_status_after_a_good_ingest(ingested: Ingested) -> None:
    out = _status(ingested.store, ingested.home)
    assert "last tick:" in out and "store:" in out and " KB)" in out
    files = len(list(SAMPLE_INBOX.iterdir())) + 1
    for source_id in _source_ids(ingested.store):
        section = out.split(f"source {source_id}\n", 1)[1].split("\n\n")[0]
        assert "batches:   0 pending, 0 running, 0 failed, 1 done" in section
        assert f"files:     {files} current" in section
        assert "merged_extractions" in section and "failed " not in section


def test_status_with_no_store_is_an_error(tmp_path: Path) -> None:
    done = _cli("status", home=tmp_path / "home", store=tmp_path / "none")
    assert done.returncode != 0 and "no content store at" in done.stderr
    assert not (tmp_path / "none").exists()


def test_retry_of_failed_batches_gives_a_clean_runs_rows(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "inbox")
    clean, store, home = tmp_path / "clean", tmp_path / "store", tmp_path / "home"
    assert _cli("ingest", str(folder), home=tmp_path / "clean-home", store=clean).returncode == 0

    # A run that fails: a chunker that does not exist fails the chunks step.
    failed = _cli("ingest", str(folder), home=home, store=store, CONTENT_CHUNKER="no-such")
    assert failed.returncode == 1
    assert "FAILED" in failed.stdout and "in chunks:" in failed.stdout
    assert "Traceback" not in failed.stdout + failed.stderr  # the reason, not Dagster's log
    status = _status(store, home)
    assert "0 pending, 0 running, 1 failed, 0 done" in status
    assert "in chunks:" in status and "ChunkingConfig" in status

    retried = _cli("retry", home=home, store=store)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "0 pending, 0 running, 0 failed, 1 done" in _status(store, home)
    assert _tables(store) == _tables(clean)
    nothing = _cli("retry", home=home, store=store)
    assert nothing.returncode == 0 and "no failed batch to retry" in nothing.stdout

    # A batch holding a worker-crash row (as the worker pool writes it when a worker dies).
    content = ContentStore(store)
    (batch_id,) = content.list_batches()
    rows = content.read_rows(NORMALISED_ARTIFACTS, batch_id).to_pylist()
    keep = [row for row in rows if row["path"] != "plain.txt"]
    victim = next(row for row in rows if row["path"] == "plain.txt")
    crashed = _worker_failure(
        FileInput(key="plain.txt", path=folder / "plain.txt", filename="plain.txt"),
        TaskFailure("WorkerCrashedError", "the worker process died (SIGKILL)"),
    )
    crash_row = {**victim, **crashed.model_dump(exclude={"derived_from", "pages"})}
    crash_row.update(derived_from=[], pages=[])
    content.write_rows(NORMALISED_ARTIFACTS, batch_id, [*keep, crash_row])
    status = _status(store, home)
    assert "1 failed" in status and "1 WorkerCrashedError" in status

    retried = _cli("retry", batch_id, home=home, store=store)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "0 pending, 0 running, 0 failed, 1 done" in _status(store, home)
    assert _tables(store) == _tables(clean)  # replaced, not duplicated
