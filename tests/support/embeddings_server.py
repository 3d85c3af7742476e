"""A real OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 for tests.

Each input text gets a deterministic unit vector of `dimension` floats drawn from its SHA-256
(or of the `dimensions` the request asks for). An input holding `REJECT_MARKER` makes the whole
request a 400, as a real endpoint refuses an over-long input; queued statuses (429, 503) answer
upcoming requests first. Every request body is recorded.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["REJECT_MARKER", "EmbeddingsServer", "fake_vector"]

REJECT_MARKER = "<<REJECT>>"


def fake_vector(text: str, dimension: int) -> list[float]:
    """The server's unit vector for `text`."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        owner = self.server.owner
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with owner.lock:
            owner.requests.append(body)
            status = owner.faults.popleft() if owner.faults else 200
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        if not self.path.endswith("/embeddings"):
            status = 404
        elif status == 200 and any(REJECT_MARKER in t for t in texts):
            status = 400
        if status != 200:
            self._send(status, {"error": {"message": f"scripted {status}"}}, retry=status == 429)
            return
        dimension = int(body.get("dimensions") or owner.dimension)
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, dimension)}
            for i, t in enumerate(texts)
        ]
        # Out of order on purpose: clients must sort by `index`.
        self._send(200, {"object": "list", "data": data[::-1], "model": body.get("model")})

    def _send(self, status: int, payload: dict[str, Any], *, retry: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: EmbeddingsServer


class EmbeddingsServer:
    """Start with `with EmbeddingsServer(dimension=8) as server:`; `base_url` ends in /v1."""

    def __init__(self, dimension: int = 16) -> None:
        self.dimension = dimension
        self.requests: list[dict[str, Any]] = []
        self.faults: deque[int] = deque()
        self.lock = threading.Lock()
        self._httpd: _Server | None = None

    def __enter__(self) -> EmbeddingsServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def texts_sent(self) -> int:
        """How many texts all requests carried."""
        return sum(len(r["input"]) for r in self.requests)
