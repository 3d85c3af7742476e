"""chunk_embeddings in a real in-process batch run: FLOAT[256] vectors in the current view,
the checks, vector search with filters, and an endpoint on 127.0.0.1 called once per text."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from content_assets.definitions import build_definitions
from content_core.embeddings import EmbedderConfig, OpenAIEmbedder, WordLlamaEmbedder
from content_core.search import SearchFilters
from content_core.search.vector import VectorIndex, vector_ranking
from content_core.store import ContentStore
from tests.support.embeddings_server import REJECT_MARKER, EmbeddingsServer
from tests.support.sensors import tick_sensor


def _ingest(
    inbox: Path, store: ContentStore, instance: dg.DagsterInstance, **env: str
) -> tuple[dg.Definitions, str, dg.ExecuteInProcessResult]:
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(inbox),
            "CONTENT_SOURCE_SETTLE_S": "0",
            **env,
        }
    )
    tick = tick_sensor(defs, instance, None)
    batch = (tick.run_requests or [])[0].partition_key
    assert batch is not None
    result = defs.resolve_job_def("ingest_batch_job").execute_in_process(
        instance=instance, partition_key=batch
    )
    assert result.success
    return defs, batch, result


def test_offline_vectors_in_the_view_and_search_with_filters(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    _, batch, result = _ingest(inbox, store, instance)  # the default: offline wordllama
    # Parquet has no fixed-size list: DuckDB reads any list column as FLOAT[], while the file's
    # Arrow schema keeps the size for Arrow readers; the array functions take the cast.
    types = store.query(
        "SELECT DISTINCT typeof(embedding::FLOAT[256]) AS t, model, dimension "
        "FROM current_chunk_embeddings"
    ).to_pylist()
    assert types == [{"t": "FLOAT[256]", "model": "wordllama-l2_supercat", "dimension": 256}]
    stored = pq.read_schema(store.table_path("chunk_embeddings", batch))
    assert stored.field("embedding").type == pa.list_(pa.float32(), 256)
    missing = store.query(
        "SELECT c.path FROM current_chunks c ANTI JOIN current_chunk_embeddings e "
        "USING (source_id, path, chunk_id) WHERE coalesce(c.error_type, '') = ''"
    ).to_pylist()
    assert missing == []
    checks = result.get_asset_check_evaluations()
    mine = [c for c in checks if c.asset_key == dg.AssetKey("chunk_embeddings")]
    assert len(mine) == 3 and all(c.passed for c in mine)

    embedder = WordLlamaEmbedder()
    # Each chunk's own text finds that chunk first.
    sample = store.query(
        "SELECT chunk_id, content, path FROM current_chunks "
        "WHERE coalesce(error_type, '') = '' ORDER BY chunk_id LIMIT 5"
    ).to_pylist()
    for row in sample:
        [(best, score)] = vector_ranking(store, row["content"], 1, embedder=embedder)
        assert best == row["chunk_id"] and score > 0.99

    chunks = {r["chunk_id"]: r for r in store.query("SELECT * FROM current_chunks").to_pylist()}
    pdf_hits = vector_ranking(
        store, "handbook", 50, SearchFilters(media_type="application/pdf"), embedder=embedder
    )
    assert pdf_hits and {chunks[c]["path"] for c, _ in pdf_hits} == {"handbook.pdf"}
    page_two = vector_ranking(
        store,
        "handbook",
        50,
        SearchFilters(path_prefix="hand", page_from=2, page_to=2),
        embedder=embedder,
    )
    assert page_two and all(
        chunks[c]["page_start"] <= 2 <= chunks[c]["page_end"] for c, _ in page_two
    )
    assert (
        vector_ranking(
            store, "handbook", 50, SearchFilters(page_from=999, page_to=999), embedder=embedder
        )
        == []
    )
    assert len(vector_ranking(store, "handbook", 50, embedder=embedder)) > len(pdf_hits)
    scores = [s for _, s in pdf_hits]
    assert scores == sorted(scores, reverse=True)
    # The in-memory index answers the same, and loads once for many queries.
    index = VectorIndex(store, embedder)
    # (numpy sums the products in another order than DuckDB: equal to float32 precision)
    held = index.ranking("handbook", 50, SearchFilters(media_type="application/pdf"))
    assert [c for c, _ in held] == [c for c, _ in pdf_hits]
    assert [s for _, s in held] == pytest.approx([s for _, s in pdf_hits], abs=1e-6)
    held = index.ranking("handbook", 50, SearchFilters(path_prefix="hand", page_from=2, page_to=2))
    assert [c for c, _ in held] == [c for c, _ in page_two]
    assert [s for _, s in held] == pytest.approx([s for _, s in page_two], abs=1e-6)
    assert index.loads == 1
    index.close()
    elsewhere = SearchFilters(source_id="elsewhere")
    assert vector_ranking(store, "handbook", 5, elsewhere, embedder=embedder) == []
    # Vectors of another model are never compared.
    assert vector_ranking(store, "handbook", 5, embedder=WordLlamaEmbedder(64)) == []


def test_endpoint_embeddings_are_cached_and_a_refused_chunk_is_an_error_row(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    (inbox / "refused.txt").write_text(f"The endpoint refuses this one {REJECT_MARKER}.")
    store = ContentStore(tmp_path / "store")
    with EmbeddingsServer(dimension=32) as server:
        env = {
            "CONTENT_EMBEDDER": "openai",
            "CONTENT_EMBED_URL": server.base_url,
            "CONTENT_EMBED_MODEL": "test-embed",
        }
        defs, batch, first = _ingest(inbox, store, instance, **env)
        sent = server.texts_sent
        assert sent > 0
        meta = first.asset_materializations_for_node("chunk_embeddings")[0].metadata
        assert meta["calls"].value > 0 and meta["failures"].value == 1
        rows = store.query(
            "SELECT path, len(embedding) AS n, error_type FROM current_chunk_embeddings"
        ).to_pylist()
        assert {r["n"] for r in rows if r["path"] != "refused.txt"} == {32}
        assert [r["error_type"] for r in rows if r["path"] == "refused.txt"] == ["EmbeddingError"]

        again = defs.resolve_job_def("ingest_batch_job").execute_in_process(
            instance=instance, partition_key=batch
        )
        assert again.success
        meta = again.asset_materializations_for_node("chunk_embeddings")[0].metadata
        # Only the refused chunk is tried again; every other vector comes from the cache.
        assert server.texts_sent == sent + 1
        assert meta["cache_hits"].value == len(rows) - 1

        embedder = OpenAIEmbedder("test-embed", base_url=server.base_url)
        text = store.query(
            "SELECT chunk_id, content FROM current_chunks WHERE path = 'plain.txt' LIMIT 1"
        ).to_pylist()[0]
        [(best, _)] = vector_ranking(store, text["content"], 1, embedder=embedder)
        assert best == text["chunk_id"]
        index = VectorIndex(store, embedder)
        assert index.ranking(text["content"], 1)[0][0] == text["chunk_id"]
        # A rewritten batch is seen: the index reloads once, then serves from memory.
        defs.resolve_job_def("ingest_batch_job").execute_in_process(
            instance=instance, partition_key=batch
        )
        assert index.ranking(text["content"], 1)[0][0] == text["chunk_id"]
        assert index.ranking(text["content"], 2)[0][0] == text["chunk_id"]
        assert index.loads == 2
        index.close()
    assert EmbedderConfig().resolved_kind() == "wordllama"


def test_embeddings_off_write_no_rows_say_why_and_the_checks_pass(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    _, batch, result = _ingest(inbox, store, instance, CONTENT_EMBEDDER="off")
    assert store.read_rows("chunk_embeddings", batch).num_rows == 0
    chunks = store.query(
        "SELECT count(*) AS n FROM current_chunks WHERE coalesce(error_type, '') = ''"
    ).to_pylist()[0]["n"]
    assert chunks > 0  # there was something to embed
    meta = result.asset_materializations_for_node("chunk_embeddings")[0].metadata
    assert meta["model"].value == "off"
    assert str(meta["skipped"].value).startswith("embeddings off: no vectors written")
    assert meta["chunks_not_embedded"].value == chunks
    # Coverage accepts the empty batch as switched off, and says so; the others pass as well.
    checks = result.get_asset_check_evaluations()
    mine = {c.check_name: c for c in checks if c.asset_key == dg.AssetKey("chunk_embeddings")}
    assert len(mine) == 3 and all(c.passed for c in mine.values())
    cover = mine["chunk_embeddings_cover_chunks"].metadata
    assert cover["switched_off"].value == 1 and cover["expected"].value == chunks
