"""Configurations of the test MCP server (tests/support/mcp_server.py): over stdio, or started
as a streamable HTTP server on 127.0.0.1 on a free port and stopped afterwards."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from content_core.chat.mcp import McpServerConfig
from tests.support.webserver import free_port, stop_process

__all__ = ["SCRIPT", "http_mcp_server", "stdio_server"]

SCRIPT = Path(__file__).with_name("mcp_server.py")


def stdio_server(
    server_id: str = "tools", *flags: str, timeout_s: float = 60.0, **fields: object
) -> McpServerConfig:
    """The test server over stdio, started with `flags` (`--images-only`, `--fail`, ...)."""
    return McpServerConfig.model_validate(
        {
            "id": server_id,
            "command": (sys.executable, str(SCRIPT), *flags),
            "timeout_s": timeout_s,
            **fields,
        }
    )


@contextlib.contextmanager
def http_mcp_server(server_id: str = "web", *flags: str) -> Iterator[McpServerConfig]:
    """The test server over streamable HTTP on 127.0.0.1, up within 60 s, stopped on exit."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--transport", "streamable-http", "--port", str(port),
         *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"MCP HTTP server exited with {process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError("MCP HTTP server did not listen within 60 s") from None
                time.sleep(0.1)
        yield McpServerConfig(id=server_id, url=f"http://127.0.0.1:{port}/mcp", timeout_s=60)
    finally:
        stop_process(process, timeout_s=10)
