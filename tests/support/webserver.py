"""The real Dagster webserver on 127.0.0.1 and a free port, serving the repository's
workspace.yaml, started and stopped around a test."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

__all__ = ["REPOSITORY_QUERY", "free_port", "running_webserver", "stop_process"]

REPO = Path(__file__).resolve().parents[2]

REPOSITORY_QUERY = """
{ repositoriesOrError { ... on RepositoryConnection { nodes {
    assetNodes { assetKey { path } }
    sensors { name sensorState { status } }
    schedules { name scheduleState { status } }
} } } }
"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop_process(process: subprocess.Popen[Any], timeout_s: float = 60) -> None:
    """Terminate `process` and wait for it; kill it if it outlives `timeout_s`."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


def _repositories(base_url: str) -> list[dict[str, Any]] | None:
    try:
        response = httpx.post(f"{base_url}/graphql", json={"query": REPOSITORY_QUERY}, timeout=60)
        nodes = response.json()["data"]["repositoriesOrError"]["nodes"]
    except (httpx.HTTPError, KeyError, TypeError, ValueError):
        return None
    return list(nodes) or None


@contextmanager
def running_webserver(
    env: Mapping[str, str], *, start_timeout_s: float = 240, log: Path | None = None
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Start `dagster-webserver -w workspace.yaml` from the repository root with `env`, wait
    until its GraphQL API lists the code location's repository, and stop it on exit.

    Yields the base URL and the repository nodes of `REPOSITORY_QUERY`. `log` receives the
    server's output (else it is discarded). The start is given `start_timeout_s`: on a loaded
    2-core machine loading the code takes a while.
    """
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    webserver = Path(sys.executable).parent / "dagster-webserver"
    with ExitStack() as stack:
        output = stack.enter_context(open(log, "wb")) if log else subprocess.DEVNULL
        process = subprocess.Popen(
            [str(webserver), "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=REPO,
            env=dict(env),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + start_timeout_s
            nodes = None
            while nodes is None and time.monotonic() < deadline and process.poll() is None:
                nodes = _repositories(base_url)
                if nodes is None:
                    time.sleep(0.5)
            assert nodes, f"the webserver did not answer (exit code {process.poll()})"
            yield base_url, nodes
        finally:
            stop_process(process)
