"""The seeds' RAG: a chunker by name (sizes in characters) or as an instance, an in-memory store
for scripts and the content store for real use, `parent_content` always a string, and
`query` answering with a model over the real chat-completions protocol, citing its hits."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from content_core import (
    RAG,
    AgentConfig,
    CharacterChunker,
    Chunk,
    ChunkerBase,
    ConfigError,
    ContentStore,
    HierarchicalChunker,
    InMemoryStore,
    OpenAICompatibleAgent,
    RAGAnswer,
    RecursiveChunker,
    TokenEstimator,
    count_tokens,
)
from content_core.chunking import ChunkerBase as ChunkerBaseFromChunking
from content_core.embeddings import EmbedderConfig
from tests.support.chat_server import ChatServer

# Five sections; the last one is about termination (and nothing else mentions it).
CONTRACT = "\n\n".join(
    [
        f"Section {i}. Delivery of lot {i}. The supplier ships the goods of lot {i} in the first "
        "week of each month. Each lot comes with an invoice; each crate has its own packing "
        "list, signed by the carrier on arrival. Late lots are credited at two percent a week."
        for i in range(1, 5)
    ]
    + [
        "Section 5. Termination. The agreement may be terminated by either party with 30 days "
        "notice, under the termination conditions set out in this section."
    ]
)


class LineChunker(ChunkerBase):
    """A reader's own chunker: one chunk per non-empty line."""

    def chunk(self, content: str) -> list[Chunk]:
        spans = [m.span() for m in re.finditer(r"[^\n]+", content)]
        return [
            Chunk(
                content=content[a:b],
                index=i,
                total_chunks=len(spans),
                source_start=a,
                source_end=b,
            )
            for i, (a, b) in enumerate(spans)
        ]


def _letters(texts: list[str]) -> list[list[float]]:
    """A tiny deterministic embedding: how often each letter a-z occurs."""
    return [[float(t.lower().count(chr(c))) for c in range(97, 123)] for t in texts]


def test_chunker_base_is_exported_and_every_chunker_is_one() -> None:
    assert ChunkerBase is ChunkerBaseFromChunking
    for chunker in (RecursiveChunker(), HierarchicalChunker(), LineChunker()):
        assert isinstance(chunker, ChunkerBase)
    assert not isinstance("recursive", ChunkerBase)
    with pytest.raises(TypeError):
        ChunkerBase()  # type: ignore[abstract]


def test_a_named_chunker_counts_characters_as_the_seed_does() -> None:
    rag = RAG(
        store=InMemoryStore(),
        chunker="hierarchical",
        chunk_size=200,
        chunk_overlap=20,
        parent_chunk_size=1500,
    )
    count = rag.index(CONTRACT, source="contract")
    hits = rag.search("the section lot termination", 50)
    assert count == len(hits) > 3
    assert all(len(hit.content) <= 200 for hit in hits)
    assert all(isinstance(hit.parent_content, str) for hit in hits)
    assert all(0 < len(hit.parent_content or "") <= 1500 for hit in hits)
    # The best hit is the termination clause, and its parent is the section around it.
    best = rag.search("termination conditions")[0]
    assert "terminated by either party" in best.content
    assert best.content in (best.parent_content or "")


def test_a_chunker_instance_is_used_with_its_own_sizes() -> None:
    rag = RAG(store=InMemoryStore(), chunker=LineChunker())
    assert rag.add("alpha beta\n\ngamma delta\nepsilon", source="lines") == 3
    assert [h.content for h in rag.search("delta gamma", 5)] == ["gamma delta"]
    # A built-in chunker counting tokens, as its tokenizer says.
    tokens = RecursiveChunker(
        chunk_size=32, chunk_overlap=0, tokenizer=TokenEstimator(encoding_name="cl100k_base")
    )
    rag = RAG(store=InMemoryStore(), chunker=tokens)
    rag.index(CONTRACT, source="contract")
    hits = rag.search("lot", 50)
    counts = [TokenEstimator(encoding_name="cl100k_base").estimate(h.content) for h in hits]
    assert counts and max(counts) <= 32 and max(len(h.content) for h in hits) > 32


@pytest.mark.parametrize(
    ("chunker", "sizes", "error"),
    [
        pytest.param(LineChunker(), {"chunk_size": 10}, ValueError, id="sizes-beside-instance"),
        pytest.param(object(), {}, TypeError, id="not-a-chunker"),
        pytest.param("no-such-chunker", {}, ValueError, id="unknown-name"),
    ],
)
def test_a_chunker_rag_cannot_use_is_refused(
    chunker: Any, sizes: dict[str, int], error: type[Exception]
) -> None:
    with pytest.raises(error):
        RAG(store=InMemoryStore(), chunker=chunker, **sizes)


def test_documents_added_in_memory_are_searched_and_replaced_by_source() -> None:
    store = InMemoryStore()
    rag = RAG(store=store, chunker=CharacterChunker(chunk_size=400, chunk_overlap=0))
    documents = {"garden.txt": "The gazebo is painted teal.", "kitchen.txt": "Copper pans."}
    added = rag.add_documents(documents)
    assert added == 2 == len(store) == rag.index()
    assert rag.add_documents(["An unnamed note about a walrus."]) == 1
    assert [h.path for h in rag.search("walrus")][0].startswith("text-")
    rag.add("The gazebo was repainted ochre.", source="garden.txt")
    assert rag.search("teal") == [] and [h.path for h in rag.search("ochre")] == ["garden.txt"]
    assert len(store) == 3
    # Hits of a chunker with no parents still carry a string.
    assert all(h.parent_content == "" for h in rag.search("gazebo pans walrus", 10))


def test_an_embed_function_makes_vector_and_hybrid_searches_in_memory() -> None:
    rag = RAG(_letters, InMemoryStore(), chunker=LineChunker(), embed_model="letters")
    rag.add("zzz zebra\nbanana bandana\nqqq quiz", source="words")
    assert rag.mode == "hybrid"
    # "zz" shares no word with any line: only the vectors find the zebra line.
    assert rag.search("zz", 1, mode="vector")[0].content == "zzz zebra"
    assert rag.search("zz", 3, mode="bm25") == []
    assert rag.search("zz", 1)[0].content == "zzz zebra"
    assert rag.search("banana", 1)[0].content == "banana bandana"


def test_the_content_store_chunks_with_a_chunker_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTENT_EMBEDDER", "off")  # the vectors are not under test here
    assert EmbedderConfig.from_environ().kind == "off"
    rag = RAG(store=tmp_path / "store", chunker=CharacterChunker(chunk_size=120, chunk_overlap=0))
    count = rag.index(CONTRACT, source="contract")
    hits = rag.search("termination conditions", 50)
    assert count == rag.index() == len(rag.search("the", 50)) > 4
    assert all(len(hit.content) <= 120 for hit in hits) and "30 days" in hits[0].content
    # Whole-store hits of a chunker without parents: an empty parent, never None.
    assert all(hit.parent_content == "" for hit in hits)
    rows = ContentStore(tmp_path / "store").query(
        "SELECT chunker, chunker_fingerprint, encoding, content, token_count FROM chunks"
    ).to_pylist()
    assert {(r["chunker"], len(r["chunker_fingerprint"])) for r in rows} == {("character", 16)}
    # A chunker sizing in characters: each row still has its exact count, in the encoding named.
    for row in rows:
        assert row["token_count"] == count_tokens(row["content"], row["encoding"]) > 0
    rag.close()


def _citing(body: dict[str, Any], text: str) -> str:
    """Answers as a model would: cites the passage that holds the notice period."""
    passages = re.split(r"\n\n(?=\[\d+\] )", text.split("Passages:\n", 1)[1])
    number = next(p.split("]")[0].lstrip("[") for p in passages if "30 days" in p)
    return f"Either party may end it with 30 days notice [{number}]."


def test_query_answers_with_the_model_and_cites_its_hits() -> None:
    rag = RAG(store=InMemoryStore(), chunker="hierarchical", chunk_size=200, chunk_overlap=20)
    rag.index(CONTRACT, source="contract")
    with ChatServer(responder=_citing) as server:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url, output_type=str)
        answer = rag.query("How can the agreement be terminated?", agent=agent, k=3)
    assert isinstance(answer, RAGAnswer)
    assert answer.answer.startswith("Either party may end it with 30 days notice [")
    assert len(answer.hits) == 3 and answer.model == "gpt-4o-mini"
    (cited,) = answer.citations
    assert cited in answer.hits and "30 days" in cited.content
    # One real chat-completions call: the question, each passage whole and its parent section.
    (call,) = server.calls
    assert call.body["model"] == "gpt-4o-mini" and call.body["messages"][-1]["role"] == "user"
    prompt = call.user_text
    assert "Question: How can the agreement be terminated?" in prompt
    assert all(hit.content in prompt for hit in answer.hits)
    assert prompt.count("[Parent context: ") == 3


def test_query_answers_with_the_configured_endpoint() -> None:
    rag_without = RAG(store=InMemoryStore(), chunker=LineChunker())
    with pytest.raises(ConfigError, match="agent="):
        rag_without.query("anything")
    with pytest.raises(ConfigError, match="kind='openai'"):
        rag_without.query("anything", agent=AgentConfig())  # the offline agent cannot answer
    with ChatServer(responder=_citing) as server:
        config = AgentConfig(kind="openai", model="local-model", base_url=server.base_url)
        rag = RAG(store=InMemoryStore(), chunker=LineChunker(), agent=config)
        rag.add(CONTRACT, source="contract")
        answer = rag.query("What notice ends the agreement?")
    assert answer.model == "local-model" and len(answer.citations) == 1
    assert "30 days" in answer.citations[0].content
    # A plain-text answer: no JSON schema was asked for.
    assert "response_format" not in server.calls[0].body


def test_query_uses_the_rags_agent_asynchronously_too() -> None:

    def silent(body: dict[str, Any], text: str) -> str:
        return json.dumps({"answer": "The passages do not say."})

    with ChatServer(responder=silent) as server:
        agent = OpenAICompatibleAgent("local-model", base_url=server.base_url, output_type=str)
        rag = RAG(store=InMemoryStore(), chunker=LineChunker(), agent=agent)
        rag.add("The gazebo is painted teal.", source="garden")

        async def ask() -> RAGAnswer:
            async with agent:
                return await rag.aquery("Shed colour?")

        answer = asyncio.run(ask())
    assert json.loads(answer.answer) == {"answer": "The passages do not say."}
    assert answer.citations == () and len(answer.hits) == 0
    assert "(no passages found)" in server.calls[0].user_text
