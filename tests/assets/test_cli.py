"""The `content-pipeline` command as people and scripts use it, run as a real subprocess on a
real ingest of two sources: query formats that parse back with full values, --output files
DuckDB reads, the missing-store error, the query path's imports, quiet, verbose and terminal
ingest output, the per-source sample, and status (retry: test_cli_batches.py)."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from content_assets.cli import _parser
from content_core.logs import MAX_NOTES
from content_core.store import ContentStore
from tests.conftest import SAMPLE_INBOX
from tests.support.cli import LONG_TEXT, REPO, main_imports, make_folder, run_cli, status_of

# Ingests run several subprocesses of the real CLI; each may take a minute on a loaded machine.
pytestmark = pytest.mark.timeout(900)
LONG_SQL = "SELECT path, text FROM current_normalised_artifacts WHERE path = 'long.txt'"


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
    first = run_cli("ingest", str(make_folder(root, "alpha")), home=home, store=store)
    assert first.returncode == 0, first.stdout + first.stderr
    second = run_cli("ingest", str(make_folder(root, "beta")), home=home, store=store)
    assert second.returncode == 0, second.stdout + second.stderr
    return Ingested(root, store, home, first, second)


def _query(ingested: Ingested, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli("query", *args, home=ingested.home, store=ingested.store)
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
    done = run_cli(
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
    done = run_cli(
        "query",
        "SELECT 1",
        *options,
        home=tmp_path / "home",
        cwd=cwd,
        store=missing if given == "environment" else None,
        XDG_DATA_HOME=str(tmp_path / "xdg"),
    )
    # outside the project, the default store is the per-user one, never the current folder's
    per_user = tmp_path / "xdg" / "content-pipeline" / "content_store"
    where = per_user if given == "default" else missing
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
    done = run_cli("query", "SELEC 1", home=ingested.home, store=ingested.store)
    assert done.returncode == 1 and "syntax error" in done.stderr and done.stdout == ""


def test_the_query_path_imports_neither_dagster_nor_pyarrow(ingested: Ingested) -> None:
    """What keeps a query interactive (bench/bench_query.py measures it)."""
    argv = ["query", "SELECT count(*) FROM current_chunks", "--store", str(ingested.store)]
    heavy = ("dagster", "pyarrow", "pandas", "content_core.pipeline")
    assert main_imports(argv, heavy) == "0 []"


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
    folder = make_folder(tmp_path, "inbox")
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


def _malformed_folder(root: Path) -> Path:
    """Real corpus files a parser complains about: an Outlook message cut at three quarters
    (extract_msg logs "incomplete OLE sector"), a PDF whose startxref points nowhere and whose
    page has no content (PDFium repairs it; pypdf, checking the empty page, logs its
    repairs), a PDF whose objects are all gone (pypdf logs one line per missing object), and
    a good message (extract_msg logs INFO lines about streams it does not find)."""
    corpus = REPO / "tests" / "corpus"
    folder = root / "malformed"
    folder.mkdir()
    message = (corpus / "msg" / "fake-email-attachment.msg").read_bytes()
    (folder / "cut.msg").write_bytes(message[: len(message) * 3 // 4])
    shutil.copy(corpus / "msg" / "fake-email.msg", folder / "good.msg")
    memo = (corpus / "pdf" / "fake-memo.pdf").read_bytes()
    emptied = memo.replace(b"/Contents", b"/Contentz")
    (folder / "startxref.pdf").write_bytes(re.sub(rb"startxref\s+\d+", b"startxref\n999", emptied))
    (folder / "no-objects.pdf").write_bytes(memo[:20] + b"\n" + memo[memo.index(b"\nxref") :])
    return folder


def test_library_messages_go_to_the_rows_not_the_console(tmp_path: Path) -> None:
    """A parser's complaints about a file are that file's notes; the console shows them only
    with -v (before, hundreds of INFO:extract_msg lines ran between the progress lines)."""
    folder = _malformed_folder(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # no banner
    quiet = run_cli("ingest", str(folder), home=home, store=tmp_path / "store")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert quiet.stderr == ""
    assert "extract_msg" not in quiet.stdout and "pypdf" not in quiet.stdout
    assert "rows written" in quiet.stdout

    rows = ContentStore(tmp_path / "store").query(
        "SELECT path, error_type, notes FROM current_normalised_artifacts WHERE derived_from = []"
    ).to_pylist()
    notes = {row["path"]: row["notes"] for row in rows}
    errors = {row["path"]: row["error_type"] for row in rows}
    assert "extract_msg.msg_classes.msg error: incomplete OLE sector" in notes["cut.msg"]
    assert errors["cut.msg"] == "CorruptFileError"
    assert errors["startxref.pdf"] is None  # read all the same, with what pypdf said
    assert "pypdf._reader warning: incorrect startxref pointer(1)" in notes["startxref.pdf"]
    # One line per missing object: de-duplicated and capped, the rest counted.
    lost = notes["no-objects.pdf"]
    assert errors["no-objects.pdf"] == "CorruptFileError"
    assert len(lost) == MAX_NOTES + 1
    assert re.fullmatch(r"\.\.\. and \d+ more library messages", lost[-1])
    assert all(n.startswith("pypdf.") for n in lost[:-1]) and len(set(lost)) == len(lost)
    assert not notes["good.msg"]  # INFO is no note

    loud = run_cli("ingest", "-v", str(folder), home=home, store=tmp_path / "loud")
    assert loud.returncode == 0, loud.stdout + loud.stderr
    for line in (
        "ERROR:extract_msg.msg_classes.msg:incomplete OLE sector",
        "WARNING:pypdf._reader:incorrect startxref pointer(1)",
    ):
        assert line in loud.stderr.splitlines()
    assert "INFO:extract_msg" in loud.stderr and "dagster - DEBUG" in loud.stderr


def test_verbose_ingest_shows_dagster_debug_lines(tmp_path: Path) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "a.txt").write_text("A single note for the verbose ingest QCLI-V01.")
    done = run_cli("ingest", "-v", str(folder), home=tmp_path / "home", store=tmp_path / "store")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dagster - DEBUG" in done.stderr


# -- status -------------------------------------------------------------------------


def test_status_after_a_good_ingest(ingested: Ingested) -> None:
    out = status_of(ingested.store, ingested.home)
    # The size in a unit that suits it (the search index alone takes a few MB of blocks).
    assert "last tick:" in out and re.search(r"store: .*\(\d+(\.\d+)? [KM]B\)", out)
    files = len(list(SAMPLE_INBOX.iterdir())) + 1
    for source_id in _source_ids(ingested.store):
        section = out.split(f"source {source_id}\n", 1)[1].split("\n\n")[0]
        assert "batches:   0 pending, 0 running, 0 failed, 1 done" in section
        assert f"files:     {files} current" in section
        assert "merged_extractions" in section and "failed " not in section


# -- exits by convention: help, closed pipes, Ctrl-C ---------------------------------------------


def test_no_arguments_prints_the_help_and_version_is_known(tmp_path: Path) -> None:
    bare = run_cli(home=tmp_path / "home", store=None)
    assert bare.returncode == 0, bare.stderr
    assert "usage: content-pipeline" in bare.stdout and "examples:" in bare.stdout
    for command in ("ingest", "query", "search", "status", "retry"):
        assert command in bare.stdout
    version = run_cli("--version", home=tmp_path / "home", store=None)
    assert version.returncode == 0 and version.stdout.startswith("content-pipeline 0.")


@pytest.mark.parametrize("command", ["ingest", "query", "search", "status", "retry"])
def test_every_argument_is_described_with_its_default_and_examples(
    tmp_path: Path, command: str
) -> None:
    done = run_cli(command, "--help", home=tmp_path / "home", store=None)
    assert done.returncode == 0, done.stderr
    subcommand = _parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    for action in subcommand._actions:
        assert action.help, action.dest
        # argparse folds a help's whitespace; the first words are on the option's line
        assert " ".join(action.help.split()[:2]) in " ".join(done.stdout.split()), action.dest
    assert f"content-pipeline {command}" in done.stdout.split("examples:", 1)[1]
    if command == "ingest":
        assert re.search(r"files per batch.*?\(default: \d+\)", done.stdout, re.S)


def _into_a_closed_pipe(args: list[str], home: Path, store: Path) -> tuple[int, str]:
    """Run the command with stdout a pipe whose reader is already gone (`| head` that has
    read its line); return its exit code and stderr."""
    env = {k: v for k, v in os.environ.items() if k != "CONTENT_STORE_DIR"}
    env.update(PYTHONPATH=str(REPO), DAGSTER_HOME=str(home), CONTENT_STORE_DIR=str(store))
    process = subprocess.Popen(
        [sys.executable, "-m", "content_assets.cli", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    try:
        _, err = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    return process.returncode, err.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "args",
    [
        ["query", "SELECT path FROM current_normalised_artifacts"],
        ["search", "invoice"],
        ["status"],
        ["retry"],
    ],
    ids=lambda args: args[0],
)
def test_a_closed_pipe_ends_the_command_quietly(ingested: Ingested, args: list[str]) -> None:
    code, err = _into_a_closed_pipe(args, ingested.home, ingested.store)
    assert code == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_an_ingest_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, "inbox")
    code, err = _into_a_closed_pipe(["ingest", str(folder)], tmp_path / "home", tmp_path / "store")
    assert code == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_ctrl_c_during_an_ingest_exits_130_without_a_traceback(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, "inbox")
    env = {k: v for k, v in os.environ.items() if k != "CONTENT_STORE_DIR"}
    env.update(
        PYTHONPATH=str(REPO),
        DAGSTER_HOME=str(tmp_path / "home"),
        CONTENT_STORE_DIR=str(tmp_path / "store"),
    )
    (tmp_path / "home").mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "content_assets.cli", "ingest", str(folder)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        # Interrupt once the ingest is under way (it has printed its first line).
        first = process.stdout.readline()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    text = err.decode("utf-8", "replace")
    assert first and process.returncode == 130, (out, text)
    assert "Traceback" not in text and "interrupted" in text


def test_state_never_follows_the_current_folder(tmp_path: Path) -> None:
    # Run from a folder outside the project with neither CONTENT_STORE_DIR nor DAGSTER_HOME:
    # the store and the instance go to the per-user folder, and nothing lands where it ran.
    elsewhere, data = tmp_path / "elsewhere", tmp_path / "xdg"
    elsewhere.mkdir()
    folder = make_folder(tmp_path, "inbox")
    env = {
        k: v for k, v in os.environ.items() if k not in ("CONTENT_STORE_DIR", "DAGSTER_HOME")
    }
    env.update(PYTHONPATH=str(REPO), XDG_DATA_HOME=str(data))
    done = subprocess.run(
        [sys.executable, "-m", "content_assets.cli", "ingest", str(folder)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(elsewhere.iterdir()) == []
    store = data / "content-pipeline" / "content_store"
    assert f"new store: {store}" in done.stdout
    assert f"store:    {store}" in done.stdout
    assert (data / "content-pipeline" / "dagster_home" / "dagster.yaml").is_file()
    for noise in ("No dagster instance configuration", "Telemetry", "Welcome to Dagster"):
        assert noise not in done.stdout + done.stderr
    home = data / "content-pipeline" / "dagster_home"
    again = run_cli("status", home=home, store=None, cwd=elsewhere, XDG_DATA_HOME=str(data))
    assert again.returncode == 0 and f"store:       {store}" in again.stdout, again.stderr


def test_the_printed_sample_command_runs_as_printed(ingested: Ingested) -> None:
    line = next(x for x in ingested.second.stdout.splitlines() if x.startswith("sample:"))
    command = shlex.split(line.removeprefix("sample:"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "CONTENT_STORE_DIR": str(ingested.store)}
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, encoding="utf-8", timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "source_id" in done.stdout and "long.txt" in done.stdout
    ui = next(x for x in ingested.second.stdout.splitlines() if x.startswith("ui:"))
    assert f"{Path(sys.executable).parent / 'dg'} dev -m content_assets.definitions" in ui


def _readme_commands(*commands: str) -> list[list[str]]:
    """The README's example lines of these subcommands, as arguments (comments and pipes off)."""
    found = []
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith(".venv/bin/content-pipeline "):
            continue
        words = shlex.split(line.split(" | ")[0], comments=True)
        if words[1] in commands:
            found.append(words[1:])
    return found


def test_every_readme_query_and_search_example_answers_on_the_sample(ingested: Ingested) -> None:
    examples = _readme_commands("query", "search")
    assert len(examples) >= 4
    for args in examples:
        done = run_cli(*args, home=ingested.home, store=ingested.store)
        assert done.returncode == 0, (args, done.stderr)
        assert done.stdout.strip() and "no match" not in done.stdout, args
        if args[0] == "search":  # the best hit holds the words looked for
            best = done.stdout.split("\n\n")[0].lower()
            assert all(word in best for word in args[1].lower().split()), (args, best)


# -- --executor celery: runs go to the instance's run queue -------------------------------------


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--executor", "celery"], {}),
        ([], {"CONTENT_EXECUTOR": "celery"}),  # the environment's choice, without the flag
    ],
    ids=["flag", "environment"],
)
def test_celery_executor_needs_an_instance_with_a_run_queue(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    """On an instance no daemon serves `--executor celery` is refused before anything is
    discovered or written, naming what it needs; `retry` likewise."""
    home, store = tmp_path / "home", tmp_path / "store"
    folder = make_folder(tmp_path, "inbox")
    done = run_cli("ingest", str(folder), *args, home=home, store=store, **env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "dagster-daemon" in done.stderr and "run queue" in done.stderr
    assert "Traceback" not in done.stderr and not (store / "tables").exists()
    retried = run_cli("retry", *args, home=home, store=store, **env)
    assert retried.returncode == 2, retried.stdout + retried.stderr
