"""The index file of a store (`search.index`): a store written without the index step is
caught up on search (only the batches it lacks), two batches applied at once by two processes
both land, and the seeds' `RAG.index(text)` makes a text searchable."""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path

import duckdb
import pytest

from content_core import RAG, Searcher
from content_core.chunking import ChunkingConfig
from content_core.discovery import discover_pending
from content_core.discovery.discover import record_bytes
from content_core.embeddings import EmbedderConfig
from content_core.pipeline import (
    build_chunks,
    build_normalised_artifacts,
    build_raw_files,
    build_search_index,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.search.index import INDEX_FILE, ensure_index
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore, compact_store

pytestmark = pytest.mark.timeout(600)


def _batch(store: ContentStore, folder: Path) -> str:
    """Discover `folder` and write its batch's tables up to chunks, without the index step."""
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder))
    [batch_id] = discover_pending(source, store, set(), time_budget_s=60, settle_s=0.0).discovered
    build_raw_files(store, batch_id)
    build_normalised_artifacts(store, batch_id, ProcessingConfig())
    build_chunks(store, batch_id, ChunkingConfig())
    return batch_id


def _applied(store: ContentStore) -> dict[str, int]:
    """Indexed documents per batch, and the batches the index file records."""
    connection = duckdb.connect(str(store.root / INDEX_FILE), read_only=True)
    try:
        rows = connection.execute(
            "SELECT b.batch_id, count(c.docid) FROM index_batches b "
            "LEFT JOIN chunk_index c USING (batch_id) GROUP BY ALL"
        ).fetchall()
    finally:
        connection.close()
    return {str(batch): int(n) for batch, n in rows}


def _postings(store: ContentStore, path: str) -> list[tuple[object, ...]]:
    """The postings (term, document, tf, length) of the chunks of `path` in the index file."""
    connection = duckdb.connect(str(store.root / INDEX_FILE), read_only=True)
    try:
        return connection.execute(
            "SELECT p.* FROM index_postings p SEMI JOIN chunk_index c "
            "ON c.docid = p.docid AND c.path = ? ORDER BY ALL",
            [path],
        ).fetchall()
    finally:
        connection.close()


def _folder(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder


def test_a_search_catches_up_only_the_batches_the_index_lacks(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "store")
    inbox = _folder(tmp_path, "inbox", {"okapi.txt": "The okapi lives in the Ituri forest."})
    first = _batch(store, inbox)
    # No index at all: the first search builds it from the store.
    assert [h.path for h in Searcher(store.root).search("okapi", 5, "bm25")] == ["okapi.txt"]
    assert _applied(store) == {first: 1}
    okapi = _postings(store, "okapi.txt")

    (inbox / "quokka.txt").write_text("A quokka smiles on Rottnest Island.")
    second = _batch(store, inbox)  # written by a script: no index step ran
    assert _applied(store) == {first: 1}
    assert [h.path for h in Searcher(store.root).search("quokka", 5, "bm25")] == ["quokka.txt"]
    assert _applied(store) == {first: 1, second: 1}
    assert _postings(store, "okapi.txt") == okapi  # the first batch's were not rebuilt

    (inbox / "okapi.txt").unlink()
    third = _batch(store, inbox)
    assert Searcher(store.root).search("okapi", 5, "bm25") == []
    assert _applied(store) == {first: 0, second: 1, third: 0}
    path = ensure_index(store.root)
    stamp = path.stat().st_mtime_ns
    assert ensure_index(store.root) == path and path.stat().st_mtime_ns == stamp  # current

    # Compaction moves every batch into other files and changes no row: nothing re-applied.
    quokka = _postings(store, "quokka.txt")
    compact_store(store)
    assert [h.path for h in Searcher(store.root).search("quokka", 5, "bm25")] == ["quokka.txt"]
    assert _applied(store) == {first: 0, second: 1, third: 0}
    assert _postings(store, "quokka.txt") == quokka


def _apply(root: str, batch_id: str) -> int:
    report = build_search_index(ContentStore(root), batch_id)
    return int(report.figures["batches_applied"])


def test_concurrent_steps_each_add_their_own_batch(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "store")
    seed = _folder(tmp_path, "seed", {"seed.txt": "Seed text about a tapir."})
    build_search_index(store, _batch(store, seed))
    words = ("gecko", "ibis", "lemur")
    batches = []
    for word in words:
        folder = _folder(tmp_path, word, {f"{word}.txt": f"Notes on the {word} and its habits."})
        # Chunks written, no index step yet: each step below starts from an index that lacks
        # every one of these batches.
        batches.append(_batch(store, folder))
    context = multiprocessing.get_context("spawn")
    with context.Pool(3) as pool:
        runs = [pool.apply_async(_apply, (str(store.root), b)) for b in batches]
        applied = [run.get(timeout=300) for run in runs]
    # Under the lock the first step applies every batch it finds stale, the others none:
    # each batch applied exactly once, none lost.
    assert sum(applied) == len(batches)
    assert sorted(_applied(store).values()) == [1, 1, 1, 1]
    with Searcher(store.root) as searcher:
        for word in (*words, "tapir"):
            assert len(searcher.search(word, 5, "bm25")) == 1


def test_rag_index_makes_a_text_searchable(tmp_path: Path) -> None:
    # Sizes in characters, as the seed counts them for a chunker named with its sizes.
    rag = RAG(store=tmp_path / "store", chunker="hierarchical", chunk_size=200, chunk_overlap=20)
    contract = (
        "# Termination\n\nEither party may end this agreement with thirty days written "
        "notice to the other party.\n\n# Payment\n\nInvoices are due within fourteen days.\n"
    )
    assert rag.index(contract, source="contract") >= 1
    hits = rag.search("termination notice")
    assert hits and hits[0].path == "contract" and hits[0].source_id == "rag"
    assert "thirty days" in hits[0].content
    assert asyncio.run(rag.aindex("The gazebo is painted teal.", source="garden")) == 1
    assert [h.path for h in rag.search("gazebo teal", 3)] == ["garden"]
    # Indexing a source again replaces its text.
    rag.index("The gazebo was repainted ochre.", source="garden")
    assert rag.search("teal") == [] and [h.path for h in rag.search("ochre")] == ["garden"]
    assert rag.index() == len(rag.search("the", 50))  # every indexed chunk holds "the"
    rag.close()


@pytest.fixture(autouse=True)
def _no_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """RAG.index embeds as the environment says: off here (the vectors are not under test)."""
    monkeypatch.setenv("CONTENT_EMBEDDER", "off")
    assert EmbedderConfig.from_environ().kind == "off"


def test_record_bytes_pins_the_next_batch_of_its_source(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "store")
    first = record_bytes(store, "rag", "a.txt", b"one", location="test")
    second = record_bytes(store, "rag", "a.txt", b"two", location="test")
    assert (first.seq, second.seq) == (1, 2)
    assert [e.change for e in (*first.entries, *second.entries)] == ["added", "modified"]
    assert store.list_batches("rag") == [first.batch_id, second.batch_id]
