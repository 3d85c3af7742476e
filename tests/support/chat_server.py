"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

It answers `POST /v1/chat/completions` (any path ending in `/chat/completions`): with a
`json_schema` response format it replies with a JSON object built from the schema and the
user's text, otherwise with plain text. It can add latency, play scripted faults (429 with
`Retry-After`, 5xx, malformed bodies) and reply malformed JSON to prompts holding a marker.
Every call is recorded, with the highest number of requests in flight at once, and the
image parts of its messages (`RecordedCall.images`); `page_markdown` answers a page image
with Markdown derived from its pixels, as a document VLM would answer with the page's text.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatServer", "Fault", "RecordedCall", "page_markdown", "sample_from_schema"]

MALFORMED_MARKER = "<<MALFORMED>>"
INVALID_MARKER = "<<INVALID>>"


@dataclass(frozen=True)
class Fault:
    """A scripted answer for one upcoming request instead of a normal reply."""

    status: int = 429
    retry_after: str | None = None
    body: str = '{"error": {"message": "scripted fault"}}'


@dataclass
class RecordedCall:
    """One request the server received and what it answered."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    status: int
    started: float
    finished: float = 0.0

    @property
    def user_text(self) -> str:
        """The text of the last user message."""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def images(self) -> list[bytes]:
        """The decoded bytes of every `image_url` part with a base64 `data:` URL, in order."""
        found = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = str(part.get("image_url", {}).get("url", ""))
                    head, _, data = url.partition(",")
                    if head.startswith("data:") and head.endswith(";base64"):
                        found.append(base64.b64decode(data))
        return found


def page_markdown(body: dict[str, Any], text: str) -> str:
    """A page's Markdown as a document VLM would answer, derived from the request: a heading
    with the image's size and a hash of its pixels, and a formula; no image: a plain note."""
    from PIL import Image

    call = RecordedCall(path="", body=body, headers={}, status=0, started=0.0)
    if not call.images:
        return "no image in the request"
    with Image.open(io.BytesIO(call.images[0])) as image:
        size, pixels = image.size, hashlib.sha256(image.tobytes()).hexdigest()[:12]
    return f"# Page {size[0]}x{size[1]} {pixels}\n\n$$E = mc^2$$\n\nRead by the test VLM."


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def sample_from_schema(schema: dict[str, Any], text: str) -> Any:
    """A deterministic JSON value that validates against `schema`, seeded by `text`."""
    start, end = text.rfind("<document>"), text.rfind("</document>")
    if 0 <= start < end:
        text = text[start + len("<document>") : end]
    words = [w.strip(".,;:!?()[]{}\"'<>") for w in text.split()]
    words = [w for w in words if w.isalpha() and len(w) > 3][:5] or ["sample"]
    defs = schema.get("$defs", {})

    def build(node: dict[str, Any], name: str) -> Any:
        if "$ref" in node:
            return build(defs[node["$ref"].rsplit("/", 1)[-1]], name)
        for key in ("anyOf", "oneOf"):
            if key in node:
                options = [o for o in node[key] if o.get("type") != "null"] or node[key]
                return build(options[0], name)
        if "enum" in node:
            return node["enum"][0]
        kind = node.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            props = node.get("properties", {})
            return {key: build(sub, key) for key, sub in props.items()}
        if kind == "array":
            item = node.get("items", {"type": "string"})
            if item.get("type", "string") == "string" and "$ref" not in item:
                return list(words)
            return [build(item, name)]
        if kind == "integer":
            return len(text) % 97
        if kind == "number":
            return float(len(words))
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return f"{name}: {' '.join(words)}"

    return build(schema, "value")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    # Headers and body go out in two writes; with Nagle's algorithm and the client's delayed
    # ACK the body would wait ~40 ms, which a latency benchmark must not measure.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        owner = self.server.owner
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        call = RecordedCall(
            path=self.path,
            body={},
            headers={k.lower(): v for k, v in self.headers.items()},
            status=0,
            started=time.perf_counter(),
        )
        owner._enter()
        # _send records the call before writing, so a client that got its answer always
        # finds the call recorded; this `finally` covers only errors before any answer.
        try:
            if owner.latency_s:
                time.sleep(owner.latency_s)
            try:
                call.body = json.loads(raw)
            except ValueError:
                self._send(call, 400, '{"error": {"message": "body is not JSON"}}')
                return
            if not self.path.endswith("/chat/completions"):
                self._send(call, 404, '{"error": {"message": "not found"}}')
                return
            fault = owner._next_fault()
            if fault is not None:
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                self._send(call, fault.status, fault.body, headers)
                return
            self._send(call, 200, json.dumps(owner._reply(call)))
        finally:
            if not call.finished:
                owner._leave(call)

    def _send(
        self, call: RecordedCall, status: int, body: str, headers: dict[str, str] | None = None
    ) -> None:
        call.status = status
        self.server.owner._leave(call)
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout test); nothing to do


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    owner: ChatServer


@dataclass
class ChatServer:
    """Start with `with ChatServer(latency_s=0.1) as server:`; `server.base_url` ends in /v1."""

    latency_s: float = 0.0
    # Hold requests until this many are in flight at once (once; then answer freely), so a test
    # of a concurrency limit sees the limit reached however slowly a loaded machine sends them.
    # A client that never sends that many at once is answered after `gather_timeout_s`.
    gather: int = 0
    gather_timeout_s: float = 60.0
    # Optional custom reply text: (request body, user text) -> message content.
    responder: Callable[[dict[str, Any], str], str] | None = None
    calls: list[RecordedCall] = field(default_factory=list)
    max_in_flight: int = 0
    _in_flight: int = 0
    _faults: deque[Fault] = field(default_factory=deque)
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _httpd: _Server | None = None
    _thread: threading.Thread | None = None

    def start(self) -> ChatServer:
        """Bind a free port on 127.0.0.1 and serve in a background thread."""
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`, as an OpenAI base URL."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *faults: Fault) -> None:
        """Queue faults; each answers one upcoming request, in order."""
        with self._lock:
            self._faults.extend(faults)

    def reset(self) -> None:
        """Forget recorded calls, the in-flight maximum and pending faults."""
        with self._lock:
            self.calls.clear()
            self.max_in_flight = 0
            self._faults.clear()

    @property
    def completed(self) -> list[RecordedCall]:
        """Calls answered with 200."""
        with self._lock:
            return [c for c in self.calls if c.status == 200]

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._lock.notify_all()
            if self.gather:
                self._lock.wait_for(
                    lambda: self.max_in_flight >= self.gather, self.gather_timeout_s
                )

    def _leave(self, call: RecordedCall) -> None:
        call.finished = time.perf_counter()
        with self._lock:
            self._in_flight -= 1
            self.calls.append(call)

    def _reply(self, call: RecordedCall) -> dict[str, Any]:
        body = call.body
        text = call.user_text
        fmt = body.get("response_format") or {}
        if MALFORMED_MARKER in text:
            content = '{"title": "unterminated'
        elif INVALID_MARKER in text and fmt.get("type") == "json_schema":
            content = json.dumps({"key_terms": "not a list", "unexpected": 1})
        elif self.responder is not None:
            content = self.responder(body, text)
        elif fmt.get("type") == "json_schema":
            content = json.dumps(sample_from_schema(fmt["json_schema"]["schema"], text))
        else:
            content = " ".join(text.split()[:20])
        return {
            "id": f"chatcmpl-{len(self.calls)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": max(1, len(text.split())),
                "completion_tokens": max(1, len(content.split())),
                "total_tokens": max(1, len(text.split())) + max(1, len(content.split())),
            },
        }
