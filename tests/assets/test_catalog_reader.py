"""A process holding content.duckdb open read-write does not block an ingest, and sees it."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import dagster as dg

from content_assets.cli import main as cli_main
from content_assets.triggers import WORKER_HOST_TAG, WORKER_PID_TAG
from content_core.store import ContentStore

_HOLDER = """
import sys, duckdb
connection = duckdb.connect(sys.argv[1])  # read-write, as the DuckDB CLI opens it
print("ready", flush=True)
for line in sys.stdin:
    count = connection.execute("SELECT count(*) FROM current_raw_files").fetchone()[0]
    print(count, flush=True)
"""


# Generous: the holder only starts Python and DuckDB, but the machine may be loaded.
ANSWER_WITHIN_S = 120


def _line_reader(stream: IO[str]) -> queue.Queue[str]:
    """Lines of `stream` as they arrive, so each read can have a timeout (readline has none)."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_ingest_while_catalog_is_held_open(inbox: Path, tmp_path: Path, monkeypatch) -> None:
    store = ContentStore(tmp_path / "store")
    monkeypatch.setenv("CONTENT_STORE_DIR", str(store.root))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    assert cli_main(["ingest", str(inbox)]) == 0
    # Each run names the CLI's process, so a trigger can fail it should the CLI die mid-run.
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
    assert runs and all(
        (r.tags[WORKER_PID_TAG], r.tags[WORKER_HOST_TAG])
        == (str(os.getpid()), socket.gethostname())
        for r in runs
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(store.catalog_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        answers = _line_reader(holder.stdout)
        assert answers.get(timeout=ANSWER_WITHIN_S).strip() == "ready"
        holder.stdin.write("\n")
        holder.stdin.flush()
        before = int(answers.get(timeout=ANSWER_WITHIN_S))
        (inbox / "late.txt").write_text("A file that arrives while someone queries the catalog.")
        assert cli_main(["ingest", str(inbox)]) == 0
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert int(answers.get(timeout=ANSWER_WITHIN_S)) == before + 1
    finally:
        holder.kill()
        holder.wait(timeout=30)
