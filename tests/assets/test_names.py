"""Any file name, losslessly, end to end: a folder of names that are not UTF-8, hold newlines,
control characters, Markdown syntax, 255 bytes, an NFC/NFD pair, a leading '-' and runs of
spaces goes through the real CLI (a subprocess), the real sensor and the ingest job; every table
has each file's text-form `path` and exact `path_bytes`, previews keep one row per file, a
rename and a deletion work, and compaction changes nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg

from content_assets.definitions import build_definitions
from content_core.paths import os_path_text
from content_core.pipeline.report import preview
from content_core.store import PIPELINE_TABLES, ContentStore
from tests.fixtures.names import LONG_NAME, NFC, NFD, ODD_NAMES, make_odd_folder, odd_text
from tests.support.sensors import tick_sensor

REPO = Path(__file__).resolve().parents[2]
CURRENT_VIEWS = [f"current_{table}" for table in PIPELINE_TABLES]


def _cli(tmp_path: Path, store: ContentStore, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), "CONTENT_STORE_DIR": str(store.root)}
    return subprocess.run(
        [sys.executable, "-m", "content_assets.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        encoding="utf-8",  # strict: the CLI prints valid UTF-8 whatever the names hold
        timeout=600,
    )


def _paths(store: ContentStore, view: str) -> dict[bytes, str]:
    rows = store.query(f"SELECT DISTINCT path, path_bytes FROM {view}").to_pylist()
    found = {row["path_bytes"]: row["path"] for row in rows}
    assert len(found) == len(rows), f"{view}: one path_bytes under two paths"
    return found


def _assert_every_name_everywhere(store: ContentStore, names: dict[bytes, str]) -> None:
    for view in [*PIPELINE_TABLES, *CURRENT_VIEWS]:
        assert _paths(store, view) == names, view


def _cells(line: str) -> int:
    """Cells of one Markdown table row: `|` not escaped by a backslash separates them."""
    tokens = re.findall(r"\\.|\||[^\\|]+", line)
    return tokens.count("|") - 1


def test_cli_ingests_every_name_and_query_prints_them(tmp_path: Path) -> None:
    folder = tmp_path / os.fsdecode(b"inbox-\xff")  # the folder's own name is not UTF-8 either
    contents = make_odd_folder(folder)
    store = ContentStore(tmp_path / "store")
    ingest = _cli(tmp_path, store, "ingest", str(folder))
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    assert f": {os_path_text(folder)}\n" in ingest.stdout  # "source <id>: <folder>"
    assert "FAILED" not in ingest.stdout

    _assert_every_name_everywhere(store, ODD_NAMES)
    texts = store.query(
        "SELECT path_bytes, text, error_type FROM normalised_artifacts"
    ).to_pylist()
    assert {r["path_bytes"]: (r["text"], r["error_type"]) for r in texts} == {
        raw: (text, None) for raw, text in contents.items()
    }
    (root,) = store.query("SELECT DISTINCT source_root FROM batches").to_pylist()
    assert root["source_root"] == os_path_text(folder.resolve())

    listed = _cli(tmp_path, store, "query", "SELECT path FROM current_raw_files ORDER BY path")
    assert listed.returncode == 0, listed.stderr
    for raw, text in ODD_NAMES.items():
        if raw == LONG_NAME:
            continue  # wider than a table cell: checked below
        # DuckDB's table shows a newline as \n and a tab as \t; the rest as they are.
        shown = text.replace("\n", "\\n").replace("\t", "\\t")
        assert shown.split("\x1b")[0] in listed.stdout, text
    assert NFC.decode() in listed.stdout and NFD.decode() in listed.stdout
    longest = _cli(
        tmp_path,
        store,
        "query",
        "SELECT octet_length(path_bytes) AS n FROM current_raw_files WHERE path LIKE '%-.txt'",
    )
    assert longest.returncode == 0 and re.search(r"\b255\b", longest.stdout), longest.stdout


def _defs(store: ContentStore, folder: Path) -> dg.Definitions:
    return build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(folder),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )


def _run_all(
    defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None
) -> tuple[str | None, list[dg.ExecuteInProcessResult]]:
    tick = tick_sensor(defs, instance, cursor)
    job = defs.resolve_job_def("ingest_batch_job")
    results = []
    for request in tick.run_requests or []:
        result = job.execute_in_process(
            instance=instance, partition_key=request.partition_key, tags=dict(request.tags)
        )
        assert result.success
        results.append(result)
    return tick.cursor, results


def test_sensor_previews_rename_delete_and_compaction_keep_every_name(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    folder = tmp_path / "odd"
    make_odd_folder(folder)
    store = ContentStore(tmp_path / "store")
    defs = _defs(store, folder)
    cursor, results = _run_all(defs, instance, None)
    assert len(results) == 1
    _assert_every_name_everywhere(store, ODD_NAMES)

    # Previews: one Markdown row per row, the right number of cells, in the UI's metadata ...
    (result,) = results
    for node in ("raw_files", "normalised_artifacts", "chunks", "merged_extractions"):
        (materialization,) = result.asset_materializations_for_node(node)
        lines = materialization.metadata["preview"].value.splitlines()
        assert len(lines) == 2 + 5, node
        assert len({_cells(line) for line in lines}) == 1, lines
    # ... and over every row of every table, where the newline and tab names are.
    batch = store.list_batches()[0]
    for table in PIPELINE_TABLES:
        rows = store.read_rows(table, batch).to_pylist()
        lines = preview(rows, ["path", "batch_id"], limit=len(rows)).splitlines()
        assert len(lines) == 2 + len(rows) and {_cells(line) for line in lines} == {2}, table
    markdown = preview([{"path": "line\nbreak.txt"}, {"path": "a\\\\xff.txt"}], ["path"])
    assert markdown.splitlines()[2:] == ["| line\\\\nbreak.txt |", "| a\\\\\\\\xff.txt |"]

    # A rename of one odd name to another, a deletion; the look-alike names stay.
    root = os.fsencode(folder)
    os.rename(os.path.join(root, b"line\nbreak.txt"), os.path.join(root, b"moved\r\n-\xfe.txt"))
    os.unlink(os.path.join(root, b"a\xff.txt"))
    cursor, results = _run_all(defs, instance, cursor)
    assert len(results) == 1
    changes = store.query(
        "SELECT path, path_bytes, change FROM batches WHERE batch_seq = 2 ORDER BY path"
    ).to_pylist()
    assert changes == [
        {"path": "a\\xff.txt", "path_bytes": b"a\xff.txt", "change": "deleted"},
        {"path": "line\nbreak.txt", "path_bytes": b"line\nbreak.txt", "change": "deleted"},
        {"path": "moved\r\n-\\xfe.txt", "path_bytes": b"moved\r\n-\xfe.txt", "change": "added"},
    ]
    live = {k: v for k, v in ODD_NAMES.items() if k not in (b"line\nbreak.txt", b"a\xff.txt")}
    live[b"moved\r\n-\xfe.txt"] = "moved\r\n-\\xfe.txt"
    for view in CURRENT_VIEWS:
        assert _paths(store, view) == live, view
    moved = store.query(
        "SELECT text FROM current_normalised_artifacts WHERE path_bytes = ?",
        [b"moved\r\n-\xfe.txt"],
    ).to_pylist()
    assert moved == [{"text": odd_text(list(ODD_NAMES).index(b"line\nbreak.txt"))}]
    quiet, results = _run_all(defs, instance, cursor)
    assert results == [] and quiet is not None
    schedule = defs.resolve_schedule_def("hourly_ingest_batch_job_schedule")
    context = dg.build_schedule_context(instance=instance, resources=defs.resources)
    assert isinstance(schedule(context), dg.SkipReason)  # same discovery: nothing left to do

    # Compaction folds the files and changes no row, bytes included.
    views = [*PIPELINE_TABLES, *CURRENT_VIEWS]
    before = {v: sorted(map(repr, store.query(f"SELECT * FROM {v}").to_pylist())) for v in views}
    assert defs.resolve_job_def("compact_store_job").execute_in_process(instance=instance).success
    assert not list((store.root / "tables").rglob("batch=*-*/data.parquet"))
    after = {v: sorted(map(repr, store.query(f"SELECT * FROM {v}").to_pylist())) for v in views}
    assert after == before
    for view in CURRENT_VIEWS:
        assert _paths(store, view) == live, view


def test_an_ordinary_folder_keeps_its_paths(inbox: Path, tmp_path: Path) -> None:
    """Plain names are unchanged: `path` is the name, `path_bytes` its UTF-8 bytes."""
    store = ContentStore(tmp_path / "store")
    ingest = _cli(tmp_path, store, "ingest", str(inbox))
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    names = {p.name.encode(): p.name for p in inbox.iterdir()}
    for view in ("batches", "raw_files", "current_raw_files"):
        assert _paths(store, view) == names, view
    for view in [*PIPELINE_TABLES, *CURRENT_VIEWS]:
        for raw, text in _paths(store, view).items():
            assert raw.decode() == text and text in names.values(), view
