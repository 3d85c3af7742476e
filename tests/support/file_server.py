"""A real HTTP server on 127.0.0.1 for the URL-fetching tests: files with ETag and
Last-Modified (answering conditional requests with 304), redirects, and JSON endpoints.

Routes are `Route` values by path, changeable while the server runs; every request is recorded
with its headers and the status it got.
"""

from __future__ import annotations

import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["FileServer", "Route", "Seen"]


@dataclass(frozen=True)
class Route:
    """What a path answers: a body with its declared type, or a redirect (`location`).

    `chunked` sends the body without Content-Length; `echo_headers` answers the request's
    headers as JSON instead of `body`; `stall` sends the headers, then nothing until the
    server stops."""

    body: bytes = b""
    content_type: str | None = "application/octet-stream"
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    location: str | None = None
    chunked: bool = False
    echo_headers: bool = False
    stall: bool = False


@dataclass(frozen=True)
class Seen:
    """One request: its path (with query), headers (lower-cased names) and answer status."""

    path: str
    headers: dict[str, str]
    status: int


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._answer(self.server.owner.routes.get(urlsplit(self.path).path), headers)

    def _answer(self, route: Route | None, headers: dict[str, str]) -> int:
        if route is None:
            self._send(404, b"not found", {"Content-Type": "text/plain"})
            return 404
        if route.location is not None:
            self._send(route.status, b"", {"Location": route.location})
            return route.status
        validators = {"ETag": route.etag, "Last-Modified": route.last_modified}
        present = {k: v for k, v in validators.items() if v}
        fresh = (route.etag and headers.get("if-none-match") == route.etag) or (
            not route.etag
            and route.last_modified
            and headers.get("if-modified-since") == route.last_modified
        )
        if fresh:
            self._send(304, b"", present)
            return 304
        body = json.dumps(headers).encode() if route.echo_headers else route.body
        extra = dict(present)
        if route.content_type:
            extra["Content-Type"] = route.content_type
        if route.stall:
            self._send(route.status, b"", extra, chunked=True, stall=True)
            return route.status
        self._send(route.status, body, extra, chunked=route.chunked)
        return route.status

    def _send(
        self,
        status: int,
        body: bytes,
        headers: dict[str, str],
        *,
        chunked: bool = False,
        stall: bool = False,
    ) -> None:
        owner = self.server.owner
        # Recorded before answering: a client may look as soon as it has the answer.
        seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, status)
        with owner.lock:
            owner.seen.append(seen)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if stall:
                self.wfile.flush()
                owner.stopping.wait(timeout=120)
                self.close_connection = True
                return
            try:
                for start in range(0, len(body), 4096):
                    piece = body[start : start + 4096]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading at its cap
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: FileServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner
        if owner.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*owner.tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)


@dataclass
class FileServer:
    """The server, started by `with FileServer(routes) as server:` and stopped on exit;
    HTTPS with `tls` (certificate file, key file)."""

    routes: dict[str, Route] = field(default_factory=dict)
    tls: tuple[str, str] | None = None
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    _server: _Server | None = None
    _thread: threading.Thread | None = None

    def __enter__(self) -> FileServer:
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._server is not None and self._thread is not None
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        assert self._server is not None
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The URL of `path` on this server, through `host` (a name or address of 127.0.0.1)."""
        scheme = "http" if self.tls is None else "https"
        return f"{scheme}://{host}:{self.port}{path}"

    def requests_to(self, path: str) -> list[Seen]:
        """The requests seen for `path` (query ignored), oldest first."""
        with self.lock:
            return [s for s in self.seen if urlsplit(s.path).path == path]
