"""A Gotenberg stand-in on 127.0.0.1 for tests: `POST /forms/libreoffice/convert` (multipart,
field `files`) answers with a PDF, converted by the local soffice when present, otherwise a
generated PDF naming the received file. `GET /health` answers like Gotenberg's health route.
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import PurePosixPath

from content_core.binary import media_types as mt
from content_core.binary.office import LibreOfficeConverter
from content_core.binary.textpdf import text_to_pdf
from content_core.errors import ContentError

__all__ = ["GotenbergServer"]

_BY_EXTENSION = {
    ".docx": mt.DOCX,
    ".xlsx": mt.XLSX,
    ".pptx": mt.PPTX,
    ".odt": mt.ODT,
    ".ods": mt.ODS,
    ".odp": mt.ODP,
    ".doc": mt.DOC,
    ".xls": mt.XLS,
    ".ppt": mt.PPT,
    ".rtf": mt.RTF,
}


class GotenbergServer:
    """Run the stand-in in a background thread; use as a context manager; `url` is its base."""

    def __init__(self, *, use_soffice: bool = True, delay_s: float = 0.0) -> None:
        self.use_soffice = use_soffice and shutil.which("soffice") is not None
        self.delay_s = delay_s  # answer this late, to exercise client time limits
        self.requests: list[tuple[str, str]] = []  # (route, received file name)
        self._converter = LibreOfficeConverter(timeout_s=120) if self.use_soffice else None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.block_on_close = False  # never wait for a deliberately slow answer
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:43123."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> GotenbergServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._converter is not None:
            self._converter.close()

    def convert(self, name: str, data: bytes) -> tuple[int, bytes]:
        """Return (status, body) for one received file, as Gotenberg would."""
        extension = PurePosixPath(name).suffix.lower()
        media_type = _BY_EXTENSION.get(extension)
        if media_type is None:
            return 400, f"Invalid form data: file extension {extension!r} not supported".encode()
        if self._converter is None:
            return 200, text_to_pdf(f"Converted by the test Gotenberg: {name}")
        with self._lock:  # one soffice at a time, as a single Gotenberg instance would
            try:
                pdf = asyncio.run(self._converter.convert(data, media_type=media_type))
            except ContentError as exc:
                return 500, f"LibreOffice conversion failed: {exc}".encode()
        return 200, pdf or b""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return None

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path == "/health":
                    self._reply(200, json.dumps({"status": "up"}).encode(), "application/json")
                else:
                    self._reply(404, b"Not Found", "text/plain")

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path != "/forms/libreoffice/convert":
                    self._reply(404, b"Not Found", "text/plain")
                    return
                header = f"Content-Type: {self.headers.get('Content-Type', '')}\r\n\r\n".encode()
                message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    header + body
                )
                files = (
                    [
                        part
                        for part in message.iter_parts()
                        if part.get_param("name", header="content-disposition") == "files"
                    ]
                    if message.is_multipart()
                    else []
                )
                if not files:
                    self._reply(
                        400, b"Invalid form data: no form file found for key 'files'", "text/plain"
                    )
                    return
                part = files[0]
                name = part.get_filename() or ""
                owner.requests.append((self.path, name))
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                status, payload = owner.convert(name, part.get_payload(decode=True) or b"")
                kind = "application/pdf" if status == 200 else "text/plain"
                self._reply(status, payload, kind)

            def _reply(self, status: int, payload: bytes, kind: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (its time limit), as clients may

        return Handler
