"""The jobs tests/assets/test_launcher.py launches with content_assets.distributed.launcher: one
op that writes down which process ran it, then waits `wait_s` seconds (for a run to terminate).

No `from __future__ import annotations`: Dagster reads the op's annotation at definition time."""

import json
import os
import time
from pathlib import Path

import dagster as dg

# A process that imports this module with CONTENT_TEST_IMPORT_NOTE set writes its pid there
# (test_launcher: the fork server, which imports it before the launcher's start() returns).
if _note := os.environ.get("CONTENT_TEST_IMPORT_NOTE"):
    Path(_note).write_text(str(os.getpid()))


@dg.op(config_schema={"note": str, "wait_s": dg.Field(float, default_value=0.0)})
def note_and_wait(context: dg.OpExecutionContext) -> None:
    """Write {"pid", "parent"} of this process to `note`, then wait."""
    note = Path(context.op_config["note"])
    note.write_text(json.dumps({"pid": os.getpid(), "parent": os.getppid()}))
    deadline = time.monotonic() + context.op_config["wait_s"]
    while time.monotonic() < deadline:
        time.sleep(0.05)


@dg.job(executor_def=dg.in_process_executor)
def note_job() -> None:
    note_and_wait()


defs = dg.Definitions(jobs=[note_job])
