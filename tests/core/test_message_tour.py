"""One `prepare_messages` call with every part type at once: text, an image and a file by
http URL, an uploaded PDF, audio, and a `data` part reading every source type. Real servers:
an HTTP server and an MCP server (stdio) on this machine, and a store ingested from the corpus.
Run with `-s` to see the prepared parts."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from content_core import (
    DataSources,
    FetchPolicy,
    ModelCapabilities,
    OfflineExtractor,
    Uses,
    prepare_messages,
)
from content_core.chat import ApiEndpoint, AttachmentStore
from content_core.chat.messages import ChatMessage, TextPart
from content_core.store import ContentStore
from tests.core.test_mcp import png, wav
from tests.fixtures.corpus import CORPUS
from tests.support.file_server import FileServer, Route
from tests.support.kb import ingest_files
from tests.support.mcp_server import README_TEXT
from tests.support.mcp_servers import stdio_server

MEMO = CORPUS / "pdf" / "fake-memo.pdf"  # "... 20,000 bottles of water ..."
CUPS = CORPUS / "csv" / "stanley-cups.csv"


@pytest.fixture
def store(tmp_path: Path) -> ContentStore:
    return ingest_files(tmp_path, {MEMO.name: MEMO, CUPS.name: CUPS})


@pytest.fixture
def server() -> Iterator[FileServer]:
    routes = {
        "/notes.txt": Route(b"Depot closes Friday; staff move to the annex.\n", "text/plain"),
        "/red.png": Route(png(), "image/png"),
        "/status": Route(b'{"ok": true, "queue": {"depth": 3}}', "application/json"),
    }
    with FileServer(routes) as running:
        yield running


async def test_one_call_with_every_part_type(store: ContentStore, server: FileServer) -> None:
    pdf = base64.b64encode(MEMO.read_bytes()).decode()
    sources = [
        {"type": "table", "query": "SELECT path, media_type FROM current_raw_files ORDER BY 1"},
        {"type": "kb_document", "source_id": "docs", "path": CUPS.name},
        {"type": "kb_collection", "query": "bottles of water", "k": 1},
        {"type": "api", "name": "status"},
        {"type": "mcp_resource", "server": "tools", "uri": "notes://readme"},
        {"type": "model", "prompt": "Mail ops@example.org: the depot closes Friday."},
    ]
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "Brief me."},
        {"type": "image_url", "image_url": {"url": server.url("/red.png")}},
        {"type": "file", "file": {"url": server.url("/notes.txt")}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{pdf}",
                                  "filename": "memo.pdf"}},
        {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav()).decode(),
                                                "format": "wav"}},
        {"type": "data", "data": {"sources": sources}},
    ]}]
    out = await prepare_messages(
        messages,
        ModelCapabilities(),  # no vision, no audio: the MCP server's tools see and hear
        attachments=AttachmentStore(),
        fetch_policy=FetchPolicy(allow_hosts={"127.0.0.1"}),
        data_sources=DataSources(
            store=store,
            agent=OfflineExtractor(),
            endpoints={"status": ApiEndpoint(url=server.url("/status"))},
        ),
        uses=Uses(vision="mcp:tools", audio="mcp:tools"),
        mcp_servers=[stdio_server()],
    )
    (message,) = out
    assert isinstance(message, ChatMessage) and isinstance(message.content, list)
    texts = [part.text for part in message.content if isinstance(part, TextPart)]
    assert len(texts) == len(message.content) == 6
    print("\n---\n".join(texts))
    text, image, notes, memo, audio, data = texts
    assert text == "Brief me."
    assert image.startswith(f"[image {server.url('/red.png')}, described by mcp:tools: PNG")
    assert "Depot closes Friday" in notes
    assert memo.startswith("[file memo.pdf, read by mcp:tools]") and "20,000 bottles" in memo
    assert audio.startswith("[audio") and "by mcp:tools" in audio and "8000 Hz" in audio
    for source in ("table", "kb_document", "kb_collection", "api status", "mcp_resource", "model"):
        assert f"[{source}]\nSource: " in data
    assert "| fake-memo.pdf | application/pdf |" in data
    assert "| Maple Leafs | TOR | 13 |" in data
    assert "docs:fake-memo.pdf p.1" in data
    assert '"depth": 3' in data
    assert README_TEXT in data
    assert '"key_terms"' in data
