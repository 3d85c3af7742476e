"""`type="data"` parts read their sources: `table`, `kb_document` and `kb_collection` from a real
store built by ingesting corpus files, `api` from a real HTTP server on 127.0.0.1, `model` from
a real chat-completions server and the offline extractor. Each says where its text came from;
each failure is text naming it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from content_core import DataSources, FetchPolicy
from content_core.agents import (
    ChatMessage,
    ModelCapabilities,
    OfflineExtractor,
    OpenAICompatibleAgent,
)
from content_core.chat import ApiEndpoint, prepare_messages
from content_core.chat.data_sources import DataContext, SourceText
from content_core.chat.messages import TextPart
from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS
from tests.support.chat_server import ChatServer
from tests.support.file_server import FileServer, Route
from tests.support.kb import ingest_files

FILES = {
    "memo/fake-memo.pdf": CORPUS / "pdf" / "fake-memo.pdf",
    "stanley-cups.csv": CORPUS / "csv" / "stanley-cups.csv",
    "handbook-1p.docx": CORPUS / "docx" / "handbook-1p.docx",
}
STATUS = b'{"ok": true, "queue": {"depth": 3, "oldest": "API-5521"}}'


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ContentStore:
    return ingest_files(tmp_path_factory.mktemp("kb"), FILES)


@pytest.fixture
def server() -> Iterator[FileServer]:
    routes = {
        "/status": Route(STATUS, "application/json"),
        "/headers": Route(content_type="application/json", echo_headers=True),
    }
    with FileServer(routes) as running:
        running.routes["/away"] = Route(
            status=302, location=running.url("/headers", host="localhost")
        )
        yield running


async def data_text(
    *sources: Mapping[str, Any], config: DataSources, policy: FetchPolicy | None = None
) -> str:
    out = await prepare_messages(
        [{"role": "user", "content": [{"type": "data", "data": {"sources": list(sources)}}]}],
        ModelCapabilities(),
        fetch_policy=policy,
        data_sources=config,
    )
    (message,) = out
    assert isinstance(message, ChatMessage) and isinstance(message.content, list)
    (part,) = message.content
    assert isinstance(part, TextPart)
    return part.text


async def test_table_runs_one_select_on_the_store_views(store: ContentStore) -> None:
    sql = (
        "SELECT path, media_type FROM current_normalised_artifacts "
        "WHERE len(derived_from) = 0 ORDER BY path"
    )
    text = await data_text(
        {"type": "table", "name": "docs", "query": sql}, config=DataSources(store=store)
    )
    assert text == (
        "[table docs]\n"
        f"Source: table (SQL: {sql}; 3 rows)\n"
        "| path | media_type |\n|---|---|\n"
        "| handbook-1p.docx | application/vnd.openxmlformats-officedocument."
        "wordprocessingml.document |\n"
        "| memo/fake-memo.pdf | application/pdf |\n"
        "| stanley-cups.csv | text/csv |"
    )
    capped = await data_text(
        {"type": "table", "query": sql}, config=DataSources(store=store.root, max_rows=2)
    )
    assert "; first 2 rows)" in capped and "stanley-cups.csv" not in capped
    by_view = await data_text(
        {"type": "table", "name": "current_raw_files"}, config=DataSources(store=store)
    )
    assert 'Source: table (SQL: SELECT * FROM "current_raw_files"; 3 rows)' in by_view


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("DROP VIEW chunks", "only one read-only SELECT is run, not: DROP"),
        ("SELECT 1; SELECT 2", "only one read-only SELECT is run, not: SELECT, SELECT"),
        ("COPY chunks TO '{outside}/copy.csv'", "not: COPY"),
        ("SELECT * FROM read_csv('{outside}/secret.csv')", "file system operations are disabled"),
        ("SELECT * FROM no_such_view", "the query failed: Catalog Error"),
    ],
    ids=["drop", "two-statements", "copy", "file-outside-the-store", "unknown-view"],
)
async def test_table_refuses_anything_but_a_select_on_the_store(
    store: ContentStore, tmp_path: Path, query: str, reason: str
) -> None:
    (tmp_path / "secret.csv").write_text("token\nSECRET-0042\n")
    source = {"type": "table", "query": query.format(outside=tmp_path)}
    text = await data_text(source, config=DataSources(store=store))
    assert text.startswith("[table]\nSource: table (failed: SourceError: ")
    assert reason in text and "SECRET-0042" not in text
    assert not (tmp_path / "copy.csv").exists()
    views = store.query("SELECT count(*) AS n FROM current_chunks").column("n").to_pylist()
    assert views[0] > 0  # the catalog is untouched


async def test_kb_document_is_the_normalised_text_by_source_and_path(
    store: ContentStore,
) -> None:
    config = DataSources(store=store)
    text = await data_text(
        {"type": "kb_document", "source_id": "docs", "path": "memo/fake-memo.pdf"}, config=config
    )
    assert text.startswith(
        "[kb_document]\nSource: kb_document (docs:memo/fake-memo.pdf, application/pdf)\n"
    )
    assert "20,000 bottles of water" in text
    # Yao's shape: the path as `id`, the source found from the path alone.
    cups = await data_text({"type": "kb_document", "id": "stanley-cups.csv"}, config=config)
    assert "Source: kb_document (docs:stanley-cups.csv, text/csv)" in cups
    assert "Maple Leafs" in cups
    missing = await data_text({"type": "kb_document", "path": "nope.txt"}, config=config)
    assert "(failed: SourceError: no current document 'nope.txt' in any source)" in missing
    cut = await data_text(
        {"type": "kb_document", "path": "memo/fake-memo.pdf"},
        config=DataSources(store=store, max_chars=40),
    )
    assert "… (cut at 40 of " in cut


async def test_kb_collection_gives_the_top_hits_with_path_and_page(store: ContentStore) -> None:
    text = await data_text(
        {"type": "kb_collection", "name": "water", "query": "bottles of water", "k": 2},
        config=DataSources(store=store),
    )
    assert text.startswith("[kb_collection water]\nSource: kb_collection (search bm25: ")
    assert "[1] docs:memo/fake-memo.pdf p.1 (score " in text
    assert "20,000 bottles" in text
    filtered = await data_text(
        {"type": "kb_collection", "query": "bottles of water", "filters": {"path_prefix": "x/"}},
        config=DataSources(store=store),
    )
    assert "0 hits)\n(no hits)" in filtered


async def test_api_reads_a_configured_endpoint_under_the_fetch_policy(
    server: FileServer,
) -> None:
    config = DataSources(
        endpoints={
            "status": ApiEndpoint(url=server.url("/status")),
            "whoami": ApiEndpoint(url=server.url("/headers"), headers={"X-Api-Key": "key-77"}),
            "away": ApiEndpoint(url=server.url("/away"), headers={"X-Api-Key": "key-77"}),
        }
    )
    both = FetchPolicy(allow_hosts={"127.0.0.1", "localhost"})
    text = await data_text(
        {"type": "api", "name": "status", "params": {"since": "2026-11-01"}},
        config=config,
        policy=both,
    )
    assert text.startswith(
        f"[api status]\nSource: api (GET {server.url('/status')}?since=2026-11-01, "
        "application/json)\n{\n"
    )
    assert '"oldest": "API-5521"' in text and '  "queue": {' in text
    whoami = await data_text({"type": "api", "name": "whoami"}, config=config, policy=both)
    assert '"x-api-key": "key-77"' in whoami
    # Redirected to another origin, the endpoint's credentials stay behind.
    away = await data_text({"type": "api", "name": "away"}, config=config, policy=both)
    assert '"host": "localhost:' in away and "key-77" not in away

    refused = await data_text(
        {"type": "api", "name": "status"}, config=config, policy=FetchPolicy()
    )
    assert "(failed: FetchRefusedError: refused 127.0.0.1: a loopback address" in refused
    unknown = await data_text({"type": "api", "name": "nope"}, config=config, policy=both)
    assert "no api endpoint named 'nope' is configured (configured: away, status, whoami)" in (
        unknown
    )
    unfetched = await data_text({"type": "api", "name": "status"}, config=config)
    assert "api sources are fetched only under a fetch_policy" in unfetched


async def test_model_is_the_configured_agents_answer() -> None:
    with ChatServer(responder=lambda body, text: f"Answer to: {text}") as chat:
        agent = OpenAICompatibleAgent("gpt-test", base_url=chat.base_url, output_type=str)
        text = await data_text(
            {"type": "model", "name": "brief", "prompt": "Name the depot."},
            config=DataSources(agent=agent),
        )
        await agent.aclose()
    assert text == (
        "[model brief]\nSource: model (gpt-test; prompt: Name the depot.)\n"
        "Answer to: Name the depot."
    )
    facts = await data_text(
        {"type": "model", "prompt": "Write to ops@example.org about MODEL-3318."},
        config=DataSources(agent=OfflineExtractor()),
    )
    assert "Source: model (offline-facts-v2; prompt: " in facts
    assert '"ops@example.org"' in facts


class BrokenAgent:
    """A user's own agent that fails every call."""

    async def run(self, prompt: str, **kwargs: object) -> object:
        raise RuntimeError("model service is down")


async def test_failures_and_other_types_are_text_and_readers_can_be_added() -> None:
    async def resource(source: Mapping[str, Any], context: DataContext) -> SourceText:
        return SourceText(f"mcp_resource ({source['uri']})", "resource body RES-8120")

    sources = [
        {"type": "model", "prompt": "hello"},
        {"type": "mcp_resource", "uri": "docs://guide"},
        {"type": "table", "query": "SELECT 1"},
        {"type": "kb_collection", "name": "inline", "content": "given inline"},
    ]
    plain = await data_text(*sources, config=DataSources(agent=BrokenAgent()))
    assert "[model]\nSource: model (failed: LLMError: the agent failed: RuntimeError: " in plain
    assert "[mcp_resource]\nSource: mcp_resource (failed: no reader for this source type; " in (
        plain
    )
    assert "[table]\nSource: table (failed: SourceError: table sources need a content store" in (
        plain
    )
    assert plain.endswith("[kb_collection inline]\ngiven inline")

    added = await data_text(*sources[1:2], config=DataSources(resolvers={"mcp_resource": resource}))
    assert added == "[mcp_resource]\nSource: mcp_resource (docs://guide)\nresource body RES-8120"
