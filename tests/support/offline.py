"""Run Python code in a fresh interpreter whose sockets cannot connect: proof that something
needs no network (models inside their wheels)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

__all__ = ["run_offline"]

REPO = Path(__file__).resolve().parents[2]

_REFUSE = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network refused by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
"""


def run_offline(
    script: str, *, env: dict[str, str] | None = None, timeout_s: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run `script` (dedented) after the socket connects are replaced by a refusal."""
    return subprocess.run(
        [sys.executable, "-c", _REFUSE + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=REPO,
        env=env,
    )
