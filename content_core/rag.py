"""The seeds' RAG layer: `RAG(embed, store, chunker=...)` with `index`/`add`/`add_documents`,
`search` and `query`, over a content store or over an `InMemoryStore`.

Over a content store (its folder, the default), `index(text, source=...)` ingests a text handed
in, as the seeds' does: it becomes a batch of the store (source `rag`, path `source`), run
through every stage (chunked with the RAG's chunker, embedded, added to the search index) and
searchable at once; indexing the same source again replaces its text. `index()` with no text
brings the index up to the store's chunks (what `content-pipeline ingest` wrote). Over an
`InMemoryStore` the text is chunked, embedded and held in memory: for a quick script.

The chunker is a name with the seed's sizes (characters, as FFAI counts them:
`chunker="hierarchical", chunk_size=200, parent_chunk_size=1500`), or any `ChunkerBase`
instance, whose own settings say what its sizes count; with neither, the pipeline's
`ChunkingConfig()` (tokens). Every hit's `parent_content` is a string: the enclosing section
for a chunk of the hierarchical chunker, else empty. `query(question, agent=...)` answers from
the hits with a model and returns the answer with the hits it cites.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from content_core.embeddings import EmbedderConfig
from content_core.errors import ConfigError
from content_core.search.engine import Searcher
from content_core.search.highlight import format_hits
from content_core.search.index import ensure_index
from content_core.search.memory import InMemoryStore
from content_core.search.terms import DOCS_TABLE
from content_core.search.types import SearchFilters, SearchHit, SearchMode

if TYPE_CHECKING:
    from content_core.agents import Agent, AgentConfig
    from content_core.chunking import Chunk, Chunker, ChunkerBase, ChunkingConfig
    from content_core.embeddings import Embedder, EmbedFunction
    from content_core.search.vector import VectorIndex
    from content_core.store import ContentStore

__all__ = ["RAG", "RAGAnswer", "RAG_SOURCE_ID"]

# The source of the texts `RAG.index` is handed.
RAG_SOURCE_ID = "rag"
# The prompt `query` sends (a file, as every prompt of the package).
_ANSWER_PROMPT = Path(__file__).resolve().parent / "agents" / "prompts" / "rag_answer.md"
# How much of a hit's parent section goes to the model with it.
_PARENT_CONTEXT_CHARS = 2000
_CITATION = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class RAGAnswer:
    """What `RAG.query` returns: the model's answer, the hits it was given (best first) and,
    of those, the ones the answer cites (`[n]` markers), in the order first cited."""

    question: str
    answer: str
    hits: tuple[SearchHit, ...]
    citations: tuple[SearchHit, ...]
    model: str | None = None


def _with_parent_text(hit: SearchHit) -> SearchHit:
    """`hit` with `parent_content` a string (empty when the chunk has no parent)."""
    return hit if hit.parent_content is not None else replace(hit, parent_content="")


class RAG:
    """Retrieval over a content store's current chunks, or over chunks held in memory.

    Args:
        embed: what embeds queries (and, in memory, chunks) for the vector half: an
            `Embedder` or, as the seeds pass, a function `list[str] -> list[vector]`. With
            one, searches default to hybrid (BM25 and vectors fused by reciprocal rank),
            without, to BM25.
        store: a `ContentStore` or its folder, or an `InMemoryStore`.
        k: hits a search returns unless told otherwise.
        mode: `bm25`, `vector` or `hybrid`; default as `embed` says.
        embed_model: the model a function `embed` computes (only stored vectors of that model
            are compared); default: the model the environment configures (CONTENT_EMBEDDER...).
        chunker: a chunker name (`list_chunkers()`) or a `ChunkerBase` instance.
        chunk_size, chunk_overlap, parent_chunk_size: a named chunker's sizes, in characters
            as the seeds count them (a chunker instance carries its own).
        agent: the model `query` answers with unless given one: an `AgentConfig(kind="openai",
            model=..., base_url=...)` (the pipeline's configuration of its endpoint), an
            `OpenAICompatibleAgent(model, base_url=..., output_type=str)`, or any agent whose
            `run` returns text.

    The vectors of a content store are held in memory between searches and reloaded when the
    store changes.
    """

    def __init__(
        self,
        embed: Embedder | EmbedFunction | None = None,
        store: ContentStore | InMemoryStore | Path | str = "content_store",
        *,
        k: int = 5,
        mode: SearchMode | None = None,
        embed_model: str | None = None,
        chunker: str | ChunkerBase | Chunker | None = None,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        parent_chunk_size: int | None = None,
        agent: Agent | AgentConfig | None = None,
    ) -> None:
        from content_core.chunking import ChunkingConfig
        from content_core.embeddings import as_embedder

        self.embedder = None if embed is None else as_embedder(embed, embed_model)
        self.k = k
        self.mode: SearchMode = mode or ("bm25" if embed is None else "hybrid")
        self.agent = agent
        self.chunking: ChunkingConfig = ChunkingConfig()
        self.chunker = _chunker_of(chunker, chunk_size, chunk_overlap, parent_chunk_size)
        self.memory = store if isinstance(store, InMemoryStore) else None
        self.root: Path | None = None
        self._searcher: Searcher | None = None
        if not isinstance(store, InMemoryStore):
            folder = store if isinstance(store, (str, Path)) else store.root
            self.root = Path(folder).expanduser().resolve()
            self._searcher = Searcher(self.root, self.embedder)
        # One searcher (one index connection, one copy of the vectors) for `search` and
        # `asearch`: DuckDB connections take one statement at a time.
        self._lock = threading.Lock()

    @property
    def vector_index(self) -> VectorIndex | None:
        """The store's vectors held in memory, once a vector or hybrid search loaded them."""
        return None if self._searcher is None else self._searcher.vector_index

    # ------------------------------------------------------------------ indexing

    def index(self, text: str | None = None, *, source: str | None = None) -> int:
        """Ingest `text` as the document `source` (default: a name from its hash) and make it
        searchable; return its chunk count. Without `text`, bring the index up to the store's
        chunks and return how many it holds.

        Raises:
            SearchError: the index could not be written.
        """
        if text is None:
            return self._count()
        path = source or f"text-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}.txt"
        if self.memory is not None:
            return self._index_in_memory(text, path)
        from content_core.discovery.discover import record_bytes
        from content_core.pipeline import PipelineConfig, run_batch
        from content_core.store import ContentStore

        assert self.root is not None  # a content store when not in memory
        store = ContentStore(self.root)
        batch = record_bytes(store, RAG_SOURCE_ID, path, text.encode("utf-8"), location="RAG")
        # Without an embedder of its own the RAG embeds as the pipeline is configured.
        config = PipelineConfig(chunking=self.chunking, embedder=EmbedderConfig.from_environ())
        reports = run_batch(
            store, batch.batch_id, config, embedder=self.embedder, chunker=self.chunker
        )
        chunks = next(r for r in reports if r.table == "chunks")
        return chunks.rows - chunks.failures

    def add(self, text: str, *, source: str | None = None) -> int:
        """`index(text, source=...)`: add one document; return its chunk count."""
        return self.index(text, source=source)

    def add_documents(self, documents: Mapping[str, str] | Iterable[str]) -> int:
        """Add several documents, `{source: text}` or texts (named by their hash); return how
        many chunks they made in all."""
        if isinstance(documents, Mapping):
            return sum(self.index(text, source=name) for name, text in documents.items())
        return sum(self.index(text) for text in documents)

    def _index_in_memory(self, text: str, path: str) -> int:
        from content_core.chunking import build_chunker

        assert self.memory is not None
        chunker = self.chunker or build_chunker(self.chunking)
        # Parent chunks (include_parents) are context, not hits: the seeds never index them.
        chunks = [c for c in chunker.chunk(text) if c.metadata.get("hierarchy") != "parent"]
        hits = [_memory_hit(path, chunk) for chunk in chunks]
        vectors = None
        if self.embedder is not None and hits:
            vectors = self.embedder.embed([hit.content for hit in hits])
        with self._lock:
            self.memory.remove(RAG_SOURCE_ID, path)
            self.memory.add(hits, vectors)
        return len(hits)

    def _count(self) -> int:
        if self.memory is not None:
            return len(self.memory)
        import duckdb

        assert self.root is not None
        path = ensure_index(self.root)
        connection = duckdb.connect(str(path), read_only=True)
        try:
            row = connection.execute(f"SELECT count(*) FROM {DOCS_TABLE}").fetchone()
        finally:
            connection.close()
        return int(row[0]) if row else 0

    async def aindex(self, text: str | None = None, *, source: str | None = None) -> int:
        """`index` in a worker thread."""
        return await asyncio.to_thread(self.index, text, source=source)

    # ------------------------------------------------------------------ searching

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """The best chunks for `query`, best first (the index is refreshed first if stale)."""
        how = mode or self.mode
        if self.memory is not None:
            vector = None
            if self.embedder is not None and how != "bm25":
                vector = self.embedder.embed([query])[0]
            with self._lock:
                hits = self.memory.search(query, k or self.k, how, filters, vector)
        else:
            assert self._searcher is not None
            with self._lock:
                # Chunks, not documents: a context wants a document's best passages.
                hits = self._searcher.search(
                    query, k or self.k, how, filters, per_document=False
                )
        return [_with_parent_text(hit) for hit in hits]

    async def asearch(
        self,
        query: str,
        k: int | None = None,
        *,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """`search` in a worker thread."""
        return await asyncio.to_thread(self.search, query, k, mode=mode, filters=filters)

    def context(self, query: str, k: int | None = None) -> str:
        """The hits of `query` formatted for a prompt (`format_hits`)."""
        return format_hits(self.search(query, k))

    # ------------------------------------------------------------------ answering

    def query(
        self,
        question: str,
        *,
        agent: Agent | AgentConfig | None = None,
        k: int | None = None,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> RAGAnswer:
        """Answer `question` with `agent` (default: the RAG's) from the best hits, each sent
        with its parent section; return the answer and the hits it cites.

        Raises:
            ConfigError: no agent, here or on the RAG.
            LLMError: the model could not be reached or refused the call.
        """
        from content_core.agents.calls import run_sync

        chosen = agent or self.agent
        self._agent(chosen)  # refuse a missing agent before searching

        async def once() -> RAGAnswer:
            try:
                return await self.aquery(question, agent=chosen, k=k, mode=mode, filters=filters)
            finally:
                # A sync call runs its own event loop: close the client bound to it.
                close = getattr(chosen, "aclose", None)
                if close is not None:
                    await close()

        return run_sync(once())

    async def aquery(
        self,
        question: str,
        *,
        agent: Agent | AgentConfig | None = None,
        k: int | None = None,
        mode: SearchMode | None = None,
        filters: SearchFilters | None = None,
    ) -> RAGAnswer:
        """`query` for an event loop."""
        from content_core.compression.strategies import render_template

        chosen = self._agent(agent)
        hits = await self.asearch(question, k, mode=mode, filters=filters)
        prompt = render_template(
            _ANSWER_PROMPT.read_text(encoding="utf-8"),
            {"question": question, "context": _context(hits)},
        )
        try:
            reply = await chosen.run(prompt)
        finally:
            built = chosen is not agent and chosen is not self.agent
            close = getattr(chosen, "aclose", None)
            if built and close is not None:  # made here from an AgentConfig: ours to close
                await close()
        answer = _text_of(reply.output if hasattr(reply, "output") else reply)
        cited: list[SearchHit] = []
        for number in _CITATION.findall(answer):
            position = int(number) - 1
            if 0 <= position < len(hits) and hits[position] not in cited:
                cited.append(hits[position])
        model = getattr(chosen, "model", None)
        return RAGAnswer(
            question=question,
            answer=answer,
            hits=tuple(hits),
            citations=tuple(cited),
            model=model if isinstance(model, str) else None,
        )

    def _agent(self, agent: Agent | AgentConfig | None) -> Agent:
        from content_core.agents import AgentConfig, OpenAICompatibleAgent
        from content_core.agents.extraction import DEFAULT_BASE_URL

        chosen = agent or self.agent
        if chosen is None or (isinstance(chosen, AgentConfig) and chosen.kind != "openai"):
            raise ConfigError(
                "RAG.query needs a model to answer with: pass agent=... to query() or to RAG() "
                "(AgentConfig(kind='openai', model=..., base_url=...), or "
                "OpenAICompatibleAgent(model, base_url=..., output_type=str))",
                stage="rag",
            )
        if not isinstance(chosen, AgentConfig):
            return chosen
        return OpenAICompatibleAgent(
            chosen.model_name,
            base_url=chosen.base_url or DEFAULT_BASE_URL,
            api_key=chosen.api_key,
            output_type=str,
            timeout_s=chosen.timeout_s,
            max_retries=chosen.max_retries,
        )

    def close(self) -> None:
        """Close the index connection and drop the vectors held."""
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()


def _chunker_of(
    chunker: str | ChunkerBase | Chunker | None,
    chunk_size: int | None,
    chunk_overlap: int | None,
    parent_chunk_size: int | None,
) -> Chunker | None:
    """The chunker `RAG` was configured with; None for the pipeline's `ChunkingConfig()`."""
    from content_core.chunking import ChunkerBase, get_chunker

    sizes = {
        name: value
        for name, value in (
            ("chunk_size", chunk_size),
            ("chunk_overlap", chunk_overlap),
            ("parent_chunk_size", parent_chunk_size),
        )
        if value is not None
    }
    if chunker is None and not sizes:
        return None
    if chunker is None or isinstance(chunker, str):
        return get_chunker(chunker or "recursive", **sizes)
    if not isinstance(chunker, ChunkerBase):
        raise TypeError(f"chunker must be a name or a ChunkerBase, not {type(chunker).__name__}")
    if sizes:
        raise ValueError(
            f"{', '.join(sizes)} belong to the chunker instance: set them on "
            f"{type(chunker).__name__}(...) instead"
        )
    return chunker


def _memory_hit(path: str, chunk: Chunk) -> SearchHit:
    """A chunk held in memory, as the hit a search returns."""
    key = f"{RAG_SOURCE_ID}:{path}:{chunk.index}:{chunk.source_start}:{chunk.source_end}"
    breadcrumb = chunk.metadata.get("breadcrumb")
    parent = chunk.metadata.get("parent_content")
    return SearchHit(
        chunk_id=hashlib.sha256(key.encode("utf-8")).hexdigest()[:32],
        score=0.0,
        content=chunk.content,
        source_id=RAG_SOURCE_ID,
        path=path,
        breadcrumb=breadcrumb if isinstance(breadcrumb, str) else None,
        parent_content=parent if isinstance(parent, str) else "",
    )


def _context(hits: list[SearchHit]) -> str:
    """The numbered passages `query` sends: each hit whole, with its parent section."""
    blocks = []
    for number, hit in enumerate(hits, start=1):
        lines = [f"[{number}] {hit.source}", hit.content]
        if hit.parent_content:
            lines.append(f"[Parent context: {hit.parent_content[:_PARENT_CONTEXT_CHARS]}]")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) or "(no passages found)"


def _text_of(output: object) -> str:
    """The answer text of an agent's output: a string, or a model's `answer` field, else its
    JSON."""
    if isinstance(output, str):
        return output.strip()
    answer = getattr(output, "answer", None)
    if isinstance(answer, str):
        return answer.strip()
    dump = getattr(output, "model_dump_json", None)
    return str(dump()) if callable(dump) else str(output)
