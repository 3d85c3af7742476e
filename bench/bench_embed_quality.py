"""How well the embedding model finds a known document: recall@1 and recall@5 of vector search
(`vector_ranking`) on the test corpus's `must_contain` phrases, beside a plain BM25 baseline
(DuckDB `fts` over the same chunks).

    .venv/bin/python bench/bench_embed_quality.py [--embedder wordllama]

The corpus (tests/corpus) is ingested into a temporary store with no orchestrator; a query
counts when its document has a chunk holding the phrase, and it is a hit when a chunk of that
document is among the top k.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from content_core.discovery import discover_pending  # noqa: E402
from content_core.embeddings import EmbedderConfig, make_embedder  # noqa: E402
from content_core.pipeline import PipelineConfig, run_batch  # noqa: E402
from content_core.pipeline.stages.chunk_embeddings import build_chunk_embeddings  # noqa: E402
from content_core.search.vector import vector_ranking  # noqa: E402
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig  # noqa: E402
from content_core.store import ContentStore, load_extension  # noqa: E402
from tests.fixtures.corpus import CORPUS, manifest_rows  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", default="wordllama")
    args = parser.parse_args()
    config = EmbedderConfig(kind=args.embedder)
    embedder = make_embedder(config)
    assert embedder is not None, "embeddings are off"
    with tempfile.TemporaryDirectory() as tmp:
        store = ContentStore(Path(tmp) / "store")
        source = LocalFolderSource(LocalFolderSourceConfig(folder=CORPUS))
        found = discover_pending(source, store, set(), time_budget_s=float("inf"), settle_s=0.0)
        started = time.perf_counter()
        for batch_id in found.batch_ids:
            run_batch(store, batch_id, PipelineConfig())
        ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        for batch_id in found.batch_ids:
            build_chunk_embeddings(store, batch_id, config)
        embed_s = time.perf_counter() - started
        chunks = store.query(
            "SELECT chunk_id, path, content FROM current_chunks WHERE content IS NOT NULL"
        ).to_pylist()
        path_of = {c["chunk_id"]: c["path"] for c in chunks}
        queries = [
            (r["must_contain"], r["path"])
            for r in manifest_rows()
            if r["must_contain"]
            and any(
                c["path"] == r["path"] and r["must_contain"].lower() in c["content"].lower()
                for c in chunks
            )
        ]
        connection = store.connect()
        load_extension(connection, "fts")
        # A file under two paths repeats its chunk ids: the index needs a unique row id.
        connection.execute(
            "CREATE TABLE c AS SELECT row_number() OVER () AS rid, chunk_id, content "
            "FROM current_chunks"
        )
        connection.execute("PRAGMA create_fts_index('c', 'rid', 'content')")
        hits = {"vector": [0, 0], "bm25": [0, 0]}
        for phrase, path in queries:
            vector = [path_of[c] for c, _ in vector_ranking(store, phrase, 5, embedder=embedder)]
            bm25 = [
                path_of[row[0]]
                for row in connection.execute(
                    "SELECT chunk_id FROM (SELECT chunk_id, fts_main_c.match_bm25(rid, ?) "
                    "AS s FROM c) WHERE s IS NOT NULL ORDER BY s DESC LIMIT 5",
                    [phrase],
                ).fetchall()
            ]
            for name, ranked in (("vector", vector), ("bm25", bm25)):
                hits[name][0] += ranked[:1] == [path]
                hits[name][1] += path in ranked
        print(
            f"corpus: {len(chunks)} chunks, ingest {ingest_s:.1f} s, "
            f"embedding ({embedder.name}, {embedder.dimension}-d) {embed_s:.1f} s"
        )
        print(f"{len(queries)} known-answer queries (must_contain phrases)")
        for name, (at1, at5) in hits.items():
            n = len(queries)
            print(f"{name:>6}: recall@1 {at1 / n:.3f}  recall@5 {at5 / n:.3f}")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
