"""Bounded time in every stage: an artifact past its stage's budget becomes a StageTimeoutError
row while the rest of the batch goes on, and the pathological inputs of issue 9 finish through
the real stage functions (a stage that went quadratic would hit the pytest timeout).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from content_core.agents import AgentConfig, ExtractionInput, extract_facts, run_extractions
from content_core.agents.base import AgentResult, Usage
from content_core.agents.schemas import ExtractedFacts
from content_core.cache import ExtractionCache
from content_core.chunking import ChunkingConfig, build_chunker
from content_core.compression import CompressionConfig, compress_text
from content_core.discovery import discover_pending
from content_core.embeddings import EmbedderConfig, WordLlamaEmbedder, embed_cached
from content_core.errors import ContentError
from content_core.extract import extract_text
from content_core.pipeline import (
    build_chunks,
    build_compressed_contexts,
    build_extractions,
    build_merged_extractions,
    build_normalised_artifacts,
    build_raw_files,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.pool import (
    _grouped,
    _run_bounded,
    chunk_documents,
    compress_documents,
    embed_locally,
    extract_offline,
)
from content_core.sandbox import TaskFailure
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from tests.fixtures.pathological import PATHOLOGICAL

NORMAL = {
    "a_memo.txt": "Memo M-1182: the northern depot closes on Friday. Staff move to the annex.\n",
    "b_note.txt": "Note N-5531: invoices over 1,200 EUR need a second signature from finance.\n",
}
# Long enough that chunking it into 16-token chunks, or compressing it, takes seconds of CPU
# on any machine, against a budget of half a second.
SLOW_TEXT = ("The committee reviewed item R-7 of the depot budget. Nothing was decided. " * 60
             + "\n\n") * 3500


def _batch(tmp_path: Path) -> tuple[ContentStore, str]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in NORMAL.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "z_slow.txt").write_text(SLOW_TEXT, encoding="utf-8")
    store = ContentStore(tmp_path / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="docs")
    (batch_id,) = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0).batch_ids
    build_raw_files(store, batch_id)
    build_normalised_artifacts(store, batch_id, ProcessingConfig(isolate=False))
    return store, batch_id


def _warm(config: ChunkingConfig) -> None:
    # Workers that start during the test import the stage code on their first task: warm them
    # with a generous budget so the small one measures only the documents.
    warm = [NORMAL["a_memo.txt"]] * ProcessingConfig().workers
    assert all(isinstance(r, list) for r in chunk_documents(warm, config))
    ok = compress_documents(warm, CompressionConfig())
    assert not any(hasattr(r, "error_type") for r in ok)


@pytest.mark.timeout(900)
def test_a_document_past_its_budget_is_a_stage_timeout_row_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    store, batch_id = _batch(tmp_path)
    _warm(ChunkingConfig(chunk_size=16, chunk_overlap=0))

    chunking = ChunkingConfig(chunk_size=16, chunk_overlap=0, timeout_s=0.5)
    report = build_chunks(store, batch_id, chunking)
    chunks = store.read_rows("chunks", batch_id).to_pylist()
    slow = [r for r in chunks if r["path"] == "z_slow.txt"]
    assert len(slow) == 1
    assert slow[0]["error_type"] == "StageTimeoutError"
    assert "chunks" in slow[0]["error_message"] and "0.5 s" in slow[0]["error_message"]
    assert slow[0]["content"] is None and slow[0]["artifact_id"]
    assert report.failures == 1
    for name, text in NORMAL.items():
        rows = [r for r in chunks if r["path"] == name]
        assert " ".join(r["content"] for r in rows) == text.strip()
        assert all(r["error_type"] is None and r["token_count"] > 0 for r in rows)

    report = build_compressed_contexts(
        store, batch_id, CompressionConfig(max_tokens=64, timeout_s=0.5)
    )
    contexts = {r["path"]: r for r in store.read_rows("compressed_contexts", batch_id).to_pylist()}
    assert contexts["z_slow.txt"]["error_type"] == "StageTimeoutError"
    assert "compressed_contexts" in contexts["z_slow.txt"]["error_message"]
    assert contexts["z_slow.txt"]["text"] is None
    for name, text in NORMAL.items():
        assert contexts[name]["error_type"] is None
        assert contexts[name]["text"] == text.strip()
    assert report.failures == 1

    # The later stages skip the failure row and extract from the others' chunks.
    build_extractions(store, batch_id, AgentConfig())
    build_merged_extractions(store, batch_id, AgentConfig())
    merged = {r["path"] for r in store.read_rows("merged_extractions", batch_id).to_pylist()}
    assert merged == set(NORMAL)


class _SlowAgent:
    """An agent whose endpoint never answers for one marker and answers at once otherwise."""

    model = "slow-endpoint"

    async def run(self, prompt: str, **kwargs: Any) -> AgentResult[ExtractedFacts]:
        del kwargs
        if "HANGS" in prompt:
            await asyncio.Event().wait()  # never set: only the budget ends this call
        return AgentResult(output=extract_facts(prompt), model=self.model, usage=Usage())


@pytest.mark.timeout(300)
def test_an_agent_call_past_its_budget_is_a_stage_timeout_row(tmp_path: Path) -> None:
    items = [
        ExtractionInput(
            chunk_id=f"c{i}", artifact_id="a", path="p.txt", content=text, index=i, total_chunks=3
        )
        for i, text in enumerate(["Depot D-1 opens.", "This endpoint HANGS.", "Depot D-2 shuts."])
    ]
    run = run_extractions(
        items, AgentConfig(chunk_timeout_s=0.2), cache_dir=tmp_path, agent=_SlowAgent()
    )
    by_chunk = {r.chunk_id: r for r in run.records}
    assert by_chunk["c1"].error_type == "StageTimeoutError"
    assert "chunk_timeout_s" in (by_chunk["c1"].error_message or "")
    assert by_chunk["c0"].error_type is None and by_chunk["c2"].error_type is None
    assert "D-1" in json.loads(by_chunk["c0"].output_json or "{}")["summary"]


@pytest.mark.timeout(600)
def test_offline_extraction_in_the_pool_matches_a_run_in_this_process(tmp_path: Path) -> None:
    """Each long document is one task of the worker pool (short ones share a task); records
    keep the input order, equal to the in-process run's, and the figures add up (the second
    run hits the cache: same keys)."""
    # Chunks of 7,000 characters: each document over the 20,000 a shared task holds.
    filler = " The annex keeps the ledger." * 250
    items = [
        ExtractionInput(chunk_id=f"{doc}-{i}", artifact_id=doc, path=f"{doc}.txt",
                        content=f"Depot D-{doc}{i} shuts on 2026-0{i + 1}-11; ask {doc}@x.org."
                        + filler,
                        index=i, total_chunks=3)
        for doc in ("north", "south", "east", "west")
        for i in range(3)
    ]
    sizes = [float(sum(len(item.content) for item in items if item.artifact_id == doc))
             for doc in ("north", "south", "east", "west")]
    assert len(_grouped(sizes)) == 4
    # Interleave the documents: the pool groups them, the records must come back in this order.
    items = items[::2] + items[1::2]
    pooled = extract_offline(items, AgentConfig(), cache_dir=tmp_path / "pooled",
                             pool=ProcessingConfig(workers=2))
    here = run_extractions(items, AgentConfig(), cache_dir=tmp_path / "here")
    assert [r.chunk_id for r in pooled.records] == [item.chunk_id for item in items]
    assert pooled.records == here.records
    assert (pooled.calls, pooled.cache_hits) == (here.calls, here.cache_hits) == (12, 0)
    again = extract_offline(items, AgentConfig(), cache_dir=tmp_path / "pooled",
                            pool=ProcessingConfig(workers=2))
    assert (again.calls, again.cache_hits) == (0, 12)
    assert [r.output_json for r in again.records] == [r.output_json for r in here.records]


@pytest.mark.timeout(600)
def test_local_embeddings_in_the_pool_match_a_run_in_this_process(tmp_path: Path) -> None:
    """600 texts: several tasks of the pool; the vectors come back in input order."""
    texts = [f"Depot D-{i} ships {i % 7} pallets of item K-{i % 13} to the annex."
             for i in range(600)]
    config = EmbedderConfig(kind="wordllama")
    embedder = WordLlamaEmbedder(config.dimension)
    pooled = embed_locally(texts, config, embedder, cache_dir=tmp_path / "pooled",
                           pool=ProcessingConfig(workers=2))
    here = embed_cached(texts, embedder, tmp_path / "here", batch_size=config.batch_size)
    assert len(pooled.results) == len(texts)
    assert pooled.results == here.results
    # Calls count the model's batches, which follow the tasks' slices; none was cached.
    assert pooled.cache_hits == here.cache_hits == 0 and pooled.calls >= here.calls

    # Copies (as copies of a file give): each distinct text computed once, every copy answered.
    copies = texts[:100] * 3
    again = embed_locally(copies, config, embedder, cache_dir=tmp_path / "copies",
                          pool=ProcessingConfig(workers=2))
    assert again.results == here.results[:100] * 3
    assert len(ExtractionCache(tmp_path / "copies")) == 100


def test_the_time_budget_leaves_fingerprints_alone() -> None:
    # Chunk ids and stored fingerprints must not change with a budget that changes no output.
    assert ChunkingConfig(timeout_s=5).fingerprint() == ChunkingConfig().fingerprint()
    assert CompressionConfig(timeout_s=5).fingerprint() == CompressionConfig().fingerprint()


# Small enough for a loaded machine, large enough that a quadratic step would never finish.
SCALE = 0.05


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", PATHOLOGICAL, ids=[c.name for c in PATHOLOGICAL])
def test_pathological_input_goes_through_every_stage(case: Any) -> None:
    data = case.data(SCALE)
    try:
        text = extract_text(data, case.media_type, filename=case.filename).text
    except ContentError:  # deep JSON is refused on purpose; its text still reaches the rest
        text = extract_text(data, "text/plain", filename=case.filename).text
    assert text
    chunks = []
    for name in ("markdown", "recursive", "token"):
        config = ChunkingConfig(chunker=name)
        chunks = build_chunker(config).chunk(text)
        assert chunks and all(c.metadata["token_count"] <= config.chunk_size for c in chunks)
    result = compress_text(text, CompressionConfig())
    assert 0 < result.tokens_after <= CompressionConfig().max_tokens
    facts = [extract_facts(c.content) for c in build_chunker(ChunkingConfig()).chunk(text)]
    assert len(facts) >= 1
    # a title only from a line with a letter or a digit; none for a text of brackets alone
    title = extract_facts(text).title
    assert title is None or any(ch.isalnum() for ch in title)


# Runs that made a regex backtrack quadratically before: each took minutes at this size, so a
# regression fails on the timeout (the fixed code takes seconds).
_N = 300_000
HOSTILE_RUNS = {
    "dotted_words": "a." * _N,  # a word boundary at every other character (e-mail)
    "at_signs": "a@" * _N,
    "slashes": "a/" * _N + " x",  # path-like (URL stripping); also too deep for ast.parse
    "comment_lines": "# a\n" * (_N // 2),  # comment lead above a declaration (code chunker)
    "identifier_lines": "a\n" * _N,  # C signature scan across lines (code chunker)
    "escaped_quotes": '"' + '\\"' * _N,  # JSON string scan
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("text", HOSTILE_RUNS.values(), ids=list(HOSTILE_RUNS))
def test_hostile_runs_finish_in_every_text_stage(text: str) -> None:
    for name in ("markdown", "code", "recursive"):
        chunks = build_chunker(ChunkingConfig(chunker=name)).chunk(text)
        assert chunks and "".join(c.content for c in chunks).strip()
    assert compress_text(text, CompressionConfig()).tokens_after <= 1024
    facts = extract_facts(text)
    # a title only from a line with a letter or a digit (none for a run of quotes)
    assert (facts.title is not None) == any(ch.isalnum() for ch in text.splitlines()[0])
    assert extract_text(text.encode(), "text/plain").text.strip() == text.strip()
    # Not JSON: the depth scan finishes, json.loads refuses, the plain-text handler takes over.
    assert extract_text(text.encode(), "application/json").text.strip() == text.strip()


def _upper_unless_marked(text: str) -> str:
    if text == "HANGS":
        time.sleep(120)  # only the budget ends it
    return text.upper()


def test_small_artifacts_share_tasks_largest_first() -> None:
    sizes = [30_000.0, 5.0, 19_999.0, 7.0] + [1.0] * 40
    groups = _grouped(sizes)
    assert groups[0] == [0]  # over the group size: alone
    assert groups[1] == [2]  # the group is full with it alone
    assert sorted(i for group in groups for i in group) == list(range(len(sizes)))
    assert all(len(group) <= 32 for group in groups) and len(groups) == 4


@pytest.mark.timeout(300)
def test_a_failure_in_a_shared_task_stays_the_one_artifacts() -> None:
    texts = [f"note {i}" for i in range(40)] + ["HANGS"]
    results = _run_bounded(
        "chunks", _upper_unless_marked, texts, 3.0, ProcessingConfig(workers=2),
        [float(len(text)) for text in texts],
    )
    assert results[:40] == [text.upper() for text in texts[:40]]
    failure = results[40]
    assert isinstance(failure, TaskFailure) and failure.error_type == "StageTimeoutError"
