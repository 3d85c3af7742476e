"""Other DuckDB clients open the catalog of a real ingest and read every view: the oldest
supported DuckDB (1.2, in its own interpreter) and the DuckDB CLI the venv installs.

Both come from the install, never from a download here: the CLI with the `duckdb` extra,
DuckDB 1.2 in `.venv/duckdb-1.2` from `make test` (the Makefile's `$(OLD_DUCKDB)` target).
A missing one fails the test with the command that installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from content_assets.cli import main as cli_main
from content_core.store import (
    BATCHES,
    PIPELINE_TABLES,
    RAW_FILES,
    ContentStore,
    compact_store,
    extension_path,
)
from tests.conftest import SAMPLE_INBOX

OLD_DUCKDB_VERSION = "1.2.2"
OLD_DUCKDB_DIR = Path(sys.prefix) / "duckdb-1.2"
DUCKDB_CLI = Path(sys.executable).parent / "duckdb"
# Generous: each client only starts and reads a few small files, but the machine may be loaded.
CLIENT_TIMEOUT_S = 120

_OLD_CLIENT = """
import json, sys, duckdb
connection = duckdb.connect(sys.argv[1], read_only=True)
views = [r[0] for r in connection.execute(
    "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name").fetchall()]
rows = {}
for view in views:
    rows[view] = len(connection.execute(f'SELECT * FROM "{view}"').fetchall())
print(json.dumps({"version": duckdb.__version__, "rows": rows}))
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ContentStore]:
    """The store of real ingests of the sample inbox (one per module: it takes a while): two
    batches compacted, then a third, so the views read compacted and per-batch files."""
    root = tmp_path_factory.mktemp("clients")
    inbox = root / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    (root / "dagster_home").mkdir()
    store = ContentStore(root / "store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONTENT_STORE_DIR", str(store.root))
        patch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        assert cli_main(["ingest", str(inbox)]) == 0
        (inbox / "second.txt").write_text("A file of the second batch.")
        assert cli_main(["ingest", str(inbox)]) == 0
        assert any(report.files_after < report.files_before for report in compact_store(store))
        (inbox / "third.txt").write_text("A file of the third batch, after compaction.")
        assert cli_main(["ingest", str(inbox)]) == 0
        yield store


def _views(store: ContentStore) -> dict[str, int]:
    """Every view of the catalog file and its row count, as this process's DuckDB reads them."""
    connection = duckdb.connect(str(store.catalog_path), read_only=True)
    try:
        views = [
            row[0]
            for row in connection.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name"
            ).fetchall()
        ]
        return {
            view: connection.execute(f'SELECT count(*) FROM "{view}"').fetchall()[0][0]
            for view in views
        }
    finally:
        connection.close()


def _require(path: Path, install: str) -> None:
    if not path.exists():
        pytest.fail(f"{path} is missing: {install}")


def test_every_view_is_in_the_catalog_and_holds_the_ingest(catalog: ContentStore) -> None:
    views = _views(catalog)
    expected = {BATCHES, *PIPELINE_TABLES, f"current_{RAW_FILES}"}
    expected |= {f"current_{table}" for table in PIPELINE_TABLES if table != RAW_FILES}
    assert set(views) == expected
    assert views[f"current_{RAW_FILES}"] == len(list(SAMPLE_INBOX.iterdir())) + 2
    assert views["current_chunks"] > 0


def test_duckdb_1_2_reads_every_view(catalog: ContentStore) -> None:
    _require(OLD_DUCKDB_DIR, "run `make test` (or `make .venv/duckdb-1.2/.installed`)")
    finished = subprocess.run(
        [sys.executable, "-c", _OLD_CLIENT, str(catalog.catalog_path)],
        env={**os.environ, "PYTHONPATH": str(OLD_DUCKDB_DIR)},
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    answer = json.loads(finished.stdout)
    assert answer["version"] == OLD_DUCKDB_VERSION
    assert answer["rows"] == _views(catalog)


def test_the_venv_duckdb_cli_reads_every_view_and_loads_fts(catalog: ContentStore) -> None:
    _require(DUCKDB_CLI, "pip install -e '.[duckdb]' (make run and make test do)")
    views = _views(catalog)
    counts = " UNION ALL ".join(
        f"SELECT '{view}' AS view, count(*) AS n FROM \"{view}\"" for view in views
    )
    fts = str(extension_path("fts")).replace("'", "''")
    script = (
        f"LOAD '{fts}';"
        "SELECT version() AS version, "
        "(SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'fts') AS fts;"
        f"{counts};"
    )
    finished = subprocess.run(
        [str(DUCKDB_CLI), "-readonly", "-json", str(catalog.catalog_path), "-c", script],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    version_rows, count_rows = _json_results(finished.stdout)
    assert version_rows == [{"version": f"v{duckdb.__version__}", "fts": True}]
    assert {row["view"]: row["n"] for row in count_rows} == views


def _json_results(output: str) -> list[list[dict[str, object]]]:
    """The result sets the CLI printed in `-json` mode (one JSON array per statement)."""
    decoder = json.JSONDecoder()
    results: list[list[dict[str, object]]] = []
    position = 0
    while (start := output.find("[", position)) != -1:
        value, position = decoder.raw_decode(output, start)
        results.append(value)
    return results
