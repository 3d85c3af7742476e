"""Uses.search and Uses.fetch: the store's search adds hits to the last user message; URLs are
fetched under the fetch policy (against a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from content_core import Uses
from content_core.agents import ChatMessage, ModelCapabilities
from content_core.chat import DataSources, FetchPolicy, prepare_messages
from content_core.chat.messages import TextPart
from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS
from tests.support.file_server import FileServer, Route
from tests.support.kb import ingest_files

FILES = {
    "memo/fake-memo.pdf": CORPUS / "pdf" / "fake-memo.pdf",
    "stanley-cups.csv": CORPUS / "csv" / "stanley-cups.csv",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ContentStore:
    return ingest_files(tmp_path_factory.mktemp("kb"), FILES)


@pytest.fixture
def server() -> Iterator[FileServer]:
    with FileServer({"/notes": Route(b"Fetched notes USES-3141.\n", "text/plain")}) as running:
        yield running


def texts(message: ChatMessage) -> list[str]:
    assert isinstance(message.content, list)
    out = []
    for part in message.content:
        assert isinstance(part, TextPart)
        out.append(part.text)
    return out


CHAT = [
    {"role": "user", "content": "How many bottles of water?"},
    {"role": "assistant", "content": "Let me look."},
    {"role": "user", "content": [{"type": "text", "text": "bottles of water in the memo"}]},
]


async def test_search_adds_the_store_hits_to_the_last_user_message(store: ContentStore) -> None:
    first, answer, last = await prepare_messages(
        CHAT, ModelCapabilities(), uses=Uses(search="store"), search_store=store.root
    )
    assert first.content == "How many bottles of water?" and answer.content == "Let me look."
    question, hits = texts(last)
    assert question == "bottles of water in the memo"
    assert hits.startswith("[search bm25: ")
    assert "docs:memo/fake-memo.pdf p.1" in hits and "20,000 bottles" in hits
    # The store may come from the data sources instead; a string message becomes parts.
    (only,) = await prepare_messages(
        CHAT[:1],
        ModelCapabilities(),
        uses=Uses(search="store"),
        data_sources=DataSources(store=store, max_hits=1),
    )
    asked, found = texts(only)
    assert asked == "How many bottles of water?" and found.startswith("[search bm25: 1 hit in")


async def test_search_without_hits_or_without_an_index_says_so(tmp_path: Path) -> None:
    (message,) = await prepare_messages(
        CHAT[:1], ModelCapabilities(), uses=Uses(search="store"), search_store=tmp_path / "none"
    )
    _, note = texts(message)
    assert note.startswith("[search bm25: failed (")


async def test_search_needs_a_store() -> None:
    with pytest.raises(ValueError, match=r'Uses\(search="store"\) needs search_store='):
        await prepare_messages(CHAT, ModelCapabilities(), uses=Uses(search="store"))


async def test_fetch_routes_urls_to_the_fetch_policy(server: FileServer) -> None:
    part = {"type": "file", "file": {"url": server.url("/notes"), "filename": "notes.txt"}}
    message = [{"role": "user", "content": [part]}]
    # Without the route or a policy nothing is fetched.
    (plain,) = await prepare_messages(message, ModelCapabilities())
    assert "could not be read" in texts(plain)[0] and server.seen == []
    # The route with no policy given uses the default one, which refuses a loopback address.
    (refused,) = await prepare_messages(message, ModelCapabilities(), uses=Uses(fetch="policy"))
    assert "refused 127.0.0.1: a loopback address" in texts(refused)[0]
    assert server.seen == []
    # The route with the caller's policy fetches under it.
    (fetched,) = await prepare_messages(
        message,
        ModelCapabilities(),
        uses=Uses(fetch="policy"),
        fetch_policy=FetchPolicy(allow_hosts={"127.0.0.1"}),
    )
    assert texts(fetched) == ["[file notes.txt]\nFetched notes USES-3141."]


@pytest.mark.parametrize(
    "fields", [{"search": "web"}, {"fetch": "agent"}, {"browse": "store"}], ids=str
)
def test_unknown_routes_are_refused(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        Uses.model_validate(fields)
