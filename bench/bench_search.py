"""Search: recall on a known-answer set from the test corpus, and latency at scale.

    .venv/bin/python bench/bench_search.py recall  [--store DIR] [--queries 240]
    .venv/bin/python bench/bench_search.py latency [--chunks 1000000] [--queries 200]

recall: the corpus documents (tests/corpus MANIFEST rows) ingested in process (no Dagster; OCR
off; every chunk embedded by the offline WordLlama model, 256-d) into a temporary store unless
--store names one; queries are tests/fixtures/search_queries.tsv (phrases, paraphrases and
questions in a dozen languages, each with the files that answer it), each file's MANIFEST
`must_contain` phrase, then exact phrases (six-word windows, up to three a chunk) and headings
picked from the extracted chunks with a fixed seed. A query is answered at k when one of its
first k hits is an answer file (for a phrase: a corpus file whose chunks contain it). Every
mode is reported per kind and language of query, searched by one `Searcher` holding the
WordLlama vectors in memory (as `RAG` does), then the fusion's weights and constant tried.

latency: N synthetic chunks (Zipf-like words of a 30,000-word vocabulary, 40-120 words each,
20 per file) in a DuckDB file, the BM25 term tables built over them in full (time and peak
memory), then one batch of 1,000 chunks applied incrementally on top (50 files: half new, half
replacing indexed files, so postings are added and removed), timed, with the copy of the index
file a batch step makes first (`search.index` writes a copy and renames it); then p50/p95 of
queries of two or three words drawn from the same distribution, k = 10. Then one random unit
256-d vector per chunk (bench_vectors' generator) loaded as a `VectorIndex` holds them (its
table in memory, load time and memory reported), and the same queries by vector (the query
embedded by WordLlama, then `rank_vectors`, what `VectorIndex.ranking` runs) and hybrid (BM25
and vectors 50 deep each, fused by reciprocal rank, what `Searcher.ranking` runs). The
Parquet scan of a one-shot search is measured by bench/bench_vectors.py.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

from bench.bench_vectors import DIM, unit_vectors  # noqa: E402
from content_core.embeddings import EmbedderConfig, WordLlamaEmbedder  # noqa: E402
from content_core.search import SEARCH_MODES, Searcher, SearchFilters  # noqa: E402
from content_core.search.bm25 import bm25_ranking  # noqa: E402
from content_core.search.collapse import DocumentKey, chunk_copies, collapse_search  # noqa: E402
from content_core.search.engine import VECTOR_WEIGHT, reciprocal_rank_fusion  # noqa: E402
from content_core.search.matrix import VectorMatrix  # noqa: E402
from content_core.search.segment import active_tokenizer  # noqa: E402
from content_core.search.terms import (  # noqa: E402
    DOCS_TABLE,
    INDEX_COLUMNS,
    apply_rows,
    bound_memory,
    create_tables,
    index_counts,
)
from content_core.search.types import SearchHit  # noqa: E402
from content_core.search.vector import VECTORS_TABLE, rank_vectors  # noqa: E402
from content_core.store import load_extension  # noqa: E402
from tests.fixtures.corpus import CORPUS, KnownAnswer, manifest_rows, search_queries  # noqa: E402

SEED = 14
FILTERS = SearchFilters()
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]{2,}")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    """CPU seconds of this process (user + system): on a shared machine the wall time of a
    step depends on the others' load, its CPU time much less."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_mb() -> float:
    """Resident memory now (the peak hides what a later step adds after a bigger one)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- recall ------------------------------------------------------------------------------------


def build_corpus_store(root: Path) -> Path:
    """Ingest the documents of tests/corpus (its MANIFEST rows, copied to `root`/corpus: the
    MANIFEST itself, NOTICE and the layout truth files quote every known phrase, and would
    answer them all) in this process."""
    from content_core.discovery import discover_pending
    from content_core.ocr import OcrConfig
    from content_core.pipeline import PipelineConfig, run_batch
    from content_core.pipeline.config import ProcessingConfig
    from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
    from content_core.store import ContentStore

    documents = root / "corpus"
    for row in manifest_rows():
        (documents / row["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CORPUS / row["path"], documents / row["path"])
    store = ContentStore(root / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=documents))
    config = PipelineConfig(
        processing=ProcessingConfig(ocr=OcrConfig(mode="off")),
        embedder=EmbedderConfig(kind="wordllama"),
    )
    found = discover_pending(source, store, set(), time_budget_s=float("inf"), settle_s=0.0)
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, config)
    store.ensure_layout()
    return store.root


def _language(phrase: str) -> str:
    """The script of a MANIFEST phrase, for the per-language table (its rows have none)."""
    for code, pattern in (
        ("ko", "[\uac00-\ud7af]"),
        ("ja", "[\u3041-\u30ff]"),
        ("zh", "[\u4e00-\u9fff]"),
        ("th", "[\u0e00-\u0e7f]"),
    ):
        if re.search(pattern, phrase):
            return code
    return "latin"


def known_answers(store: Path, count: int) -> list[KnownAnswer]:
    """The known-answer set: tests/fixtures/search_queries.tsv (phrases, paraphrases and
    questions in many languages, with their files), the MANIFEST `must_contain` phrases, then
    picked phrases and headings up to `count` queries in all. A MANIFEST or picked phrase is
    answered by the corpus files (MANIFEST rows) whose chunks contain it: MANIFEST.tsv itself,
    NOTICE and the layout truth files hold the phrases too, and are no answer."""
    connection = duckdb.connect()
    chunks = connection.execute(
        f"SELECT path, content, breadcrumb FROM read_parquet('{store}/tables/chunks/*/*.parquet')"
        " WHERE content IS NOT NULL ORDER BY path, chunk_id"
    ).fetchall()
    documents = {row["path"] for row in manifest_rows()}
    flat = [(path, " ".join(content.split()).lower()) for path, content, _ in chunks]

    def answers(phrase: str) -> frozenset[str]:
        needle = " ".join(phrase.split()).lower()
        return frozenset(path for path, text in flat if needle in text and path in documents)

    queries: dict[str, KnownAnswer] = {known.query: known for known in search_queries()}
    for row in manifest_rows():
        phrase = row.get("must_contain", "").strip()
        if phrase and phrase not in queries and answers(phrase):
            queries[phrase] = KnownAnswer(phrase, "manifest", _language(phrase), answers(phrase))
    rng = random.Random(SEED)
    by_path: dict[str, list[tuple[str, str | None]]] = {}
    for path, content, breadcrumb in chunks:
        by_path.setdefault(path, []).append((content, breadcrumb))
    candidates: list[str] = []
    for path in sorted(by_path):
        for content, breadcrumb in rng.sample(by_path[path], min(8, len(by_path[path]))):
            words = _WORD.findall(content)
            for start in rng.sample(range(max(len(words) - 5, 0)), min(3, max(len(words) - 5, 0))):
                window = words[start : start + 6]
                # The words as they stand in the text, so the phrase is exact.
                match = re.search(r"\W+".join(map(re.escape, window)), content)
                if match:
                    candidates.append(match.group(0))
            heading = (breadcrumb or "").split(" > ")[-1].strip()
            if len(_WORD.findall(heading)) >= 2:
                candidates.append(heading)
    rng.shuffle(candidates)
    for phrase in candidates:
        if len(queries) >= count:
            break
        found = answers(phrase)
        if found and phrase not in queries:
            queries[phrase] = KnownAnswer(phrase, "window", "latin", found)
    return list(queries.values())


# Weights of the vector ranking against BM25's (1) and RRF constants tried for the fusion.
VECTOR_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5)
RRF_KS = (10, 30, 60)
DEPTH = 50  # the engine's fusion depth


def _paths_of(searcher: Searcher) -> dict[str, set[str]]:
    rows = searcher.connection().execute("SELECT chunk_id, path FROM chunk_index").fetchall()
    paths: dict[str, set[str]] = {}
    for chunk, path in rows:
        paths.setdefault(str(chunk), set()).add(str(path))
    return paths


def _rank_of_answer(
    ranking: list[tuple[str, float]], paths: dict[str, set[str]], answers: frozenset[str]
) -> int | None:
    """The 1-based rank of the first chunk of an answer file in the top 5, else None."""
    for rank, (chunk, _) in enumerate(ranking[:5], start=1):
        if paths.get(chunk, set()) & answers:
            return rank
    return None


def _table(title: str, rows: dict[str, dict[str, tuple[int, int, int]]]) -> None:
    """A Markdown table: per group, per mode, recall@1 / recall@5 (n queries)."""
    modes = list(next(iter(rows.values())))
    print(f"\n{title}\n")
    print("| queries | n | " + " | ".join(f"{m} @1 / @5" for m in modes) + " |")
    print("|---|---|" + "---|" * len(modes))
    for group, by_mode in rows.items():
        n = next(iter(by_mode.values()))[2]
        cells = " | ".join(f"{a1 / n:.3f} / {a5 / n:.3f}" for a1, a5, _ in by_mode.values())
        print(f"| {group} | {n} | {cells} |")


def recall(store: Path, queries: list[KnownAnswer]) -> None:
    """recall@1 and recall@5 of every mode (as `Searcher.ranking` runs it) and of each
    weighting of the fusion, per group of queries (kind, language), as Markdown tables."""
    with Searcher(store, WordLlamaEmbedder()) as searcher:
        paths = _paths_of(searcher)
        # Per query: the rank of the first answer for each mode and fusion tried.
        ranks: list[dict[str, int | None]] = []
        for known in queries:
            keyword = searcher.ranking(known.query, DEPTH, "bm25", FILTERS)
            vectors = searcher.ranking(known.query, DEPTH, "vector", FILTERS)
            found: dict[str, int | None] = {
                mode: _rank_of_answer(searcher.ranking(known.query, 5, mode, FILTERS), paths,
                                      known.answers)
                for mode in SEARCH_MODES
            }
            for rrf_k in RRF_KS:
                for weight in VECTOR_WEIGHTS:
                    fused = reciprocal_rank_fusion([keyword, vectors], 5, rrf_k, (1.0, weight))
                    found[f"rrf{rrf_k} w{weight}"] = _rank_of_answer(fused, paths, known.answers)
            ranks.append(found)

    def tally(selected: list[int], mode: str) -> tuple[int, int, int]:
        at = [ranks[i][mode] for i in selected]
        return sum(r == 1 for r in at), sum(r is not None for r in at), len(selected)

    groups: dict[str, list[int]] = {"all": list(range(len(queries)))}
    for number, known in enumerate(queries):
        groups.setdefault(f"kind {known.kind}", []).append(number)
    for number, known in enumerate(queries):
        groups.setdefault(f"language {known.language}", []).append(number)
    _table(
        "Modes (as `Searcher.ranking` runs them), recall@1 / recall@5:",
        {g: {m: tally(sel, m) for m in SEARCH_MODES} for g, sel in groups.items()},
    )
    fusions = [m for m in ranks[0] if m not in SEARCH_MODES]
    best = max(fusions, key=lambda m: (tally(groups["all"], m)[1], tally(groups["all"], m)[0]))
    print(f"\nFusion grid (BM25 weight 1, vector weight w, 1 / (rrf_k + rank)); best: {best}\n")
    print("| fusion | recall@1 | recall@5 |")
    print("|---|---|---|")
    for mode in fusions:
        a1, a5, n = tally(groups["all"], mode)
        print(f"| {mode} | {a1 / n:.3f} | {a5 / n:.3f} |")
    misses = [q.query for q, r in zip(queries, ranks, strict=True) if r["hybrid"] is None]
    print(f"\nhybrid misses ({len(misses)}): " + "; ".join(misses))


def recall_main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        store = args.store or build_corpus_store(Path(tmp))
        print(f"store: {store} ({time.perf_counter() - started:.0f} s to build)")
        queries = known_answers(Path(store), args.queries)
        counts = duckdb.connect().execute(
            f"SELECT count(*), count(embedding) FILTER (WHERE model LIKE 'wordllama%') "
            f"FROM read_parquet('{store}/tables/chunk_embeddings/*/*.parquet')"
        ).fetchone()
        print(f"{len(queries)} known-answer queries; embedding rows, WordLlama vectors: {counts}")
        print(f"tokenizer: {active_tokenizer().name}")
        recall(Path(store), queries)


# -- latency -----------------------------------------------------------------------------------


def synthetic_chunks(
    connection: duckdb.DuckDBPyConnection, count: int, *, batch: int = 1, first: int = 0
) -> None:
    """Tables `chunks` and `raw` of batch `b<batch>`: `count` generated chunks numbered from
    `first` (words w<rank>, Zipf-like ranks), 20 per file, and one raw_files row per file."""
    connection.execute(f"SELECT setseed({SEED / 100 + batch / 1000})")
    connection.execute(
        f"CREATE OR REPLACE TABLE chunks AS SELECT 'b{batch}' AS batch_id, "
        f"'c{batch}-' || i AS chunk_id, 's' || ((i // 20) % 7) AS source_id, "
        "'doc' || (i // 20) || '.txt' AS path, NULL::INTEGER AS page_start, "
        "NULL::INTEGER AS page_end, NULL::VARCHAR AS breadcrumb, NULL::VARCHAR AS metadata, "
        "NULL::VARCHAR AS error_type, array_to_string(list_transform(range(40 + (i % 81)), "
        "x -> 'w' || CAST(floor(pow(30000, random())) AS INTEGER)), ' ') AS content "
        f"FROM range({first}, {first + count}) t(i)"
    )
    connection.execute(
        f"CREATE OR REPLACE TABLE raw AS SELECT DISTINCT 'b{batch}' AS batch_id, source_id, "
        f"path, {batch}::BIGINT AS batch_seq, 'added' AS change, 'text/plain' AS media_type "
        "FROM chunks"
    )


def _percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


BATCH_CHUNKS = 1_000


def bm25_latency(connection: duckdb.DuckDBPyConnection, path: Path, queries: list[str]) -> None:
    """Build the term tables in full, apply one batch incrementally, time BM25 queries."""
    before = _peak_rss_mb()
    started, cpu = time.perf_counter(), _cpu_s()
    create_tables(connection)
    apply_rows(connection, "raw", "chunks")
    connection.execute("CHECKPOINT")
    built, cpu = time.perf_counter() - started, _cpu_s() - cpu
    docs, postings = index_counts(connection)
    print(
        f"bm25   : full build of {docs} documents, {postings} postings in {built:.1f} s "
        f"({cpu:.1f} s CPU), "
        f"peak RSS {_peak_rss_mb():.0f} MB (was {before:.0f} MB), "
        f"file {path.stat().st_size / 2**20:.0f} MB"
    )
    total = docs
    # Half the batch in files already indexed (replaced), half in new files.
    synthetic_chunks(connection, BATCH_CHUNKS, batch=2, first=total - BATCH_CHUNKS // 2)
    started = time.perf_counter()
    copy = path.with_name("copy.duckdb")
    shutil.copyfile(path, copy)
    copied = time.perf_counter() - started
    copy.unlink()
    started, cpu = time.perf_counter(), _cpu_s()
    counts = apply_rows(connection, "raw", "chunks")
    connection.execute("CHECKPOINT")
    applied, cpu = time.perf_counter() - started, _cpu_s() - cpu
    print(
        f"bm25   : batch of {BATCH_CHUNKS} chunks applied in {applied:.2f} s ({cpu:.2f} s CPU) "
        f"(+{counts.docs_added} -{counts.docs_removed} documents, +{counts.postings_added} "
        f"-{counts.postings_removed} postings); copying the index file first: {copied:.2f} s"
    )
    # Searches run on connections of their own, without the build's memory limit.
    connection.execute("RESET memory_limit")
    _time_modes(connection, "bm25", queries, lambda q, k: bm25_ranking(connection, q, k, FILTERS))


Ranking = Callable[[str, int], list[tuple[str, float]]]


def _per_document(
    connection: duckdb.DuckDBPyConnection, rank: Ranking
) -> Callable[[str], list[SearchHit]]:
    """A search of `rank` collapsed per document as `Searcher.search` runs it by default:
    `k * COLLAPSE_DEPTH` chunks ranked, their index rows read (`Searcher._hits`), collapsed
    (`collapse_search`, a deeper fetch while fewer than k documents), k = 10; no
    near-duplicate groups (the synthetic files have none)."""
    groups: dict[DocumentKey, DocumentKey] = {}
    columns = ", ".join(INDEX_COLUMNS)

    def search(query: str) -> list[SearchHit]:
        def fetch(n: int) -> tuple[list[SearchHit], dict[str, list[DocumentKey]], int]:
            ranked = rank(query, n)
            if not ranked:
                return [], {}, 0
            rows = connection.execute(
                f"SELECT {columns} FROM {DOCS_TABLE} WHERE chunk_id IN (SELECT unnest(?)) "
                "ORDER BY docid",
                [[key for key, _ in ranked]],
            ).fetchall()
            by_id: dict[str, tuple[object, ...]] = {}
            for found in rows:
                by_id.setdefault(found[0], found)
            hits = [
                SearchHit(score=score, **dict(zip(INDEX_COLUMNS, by_id[key], strict=True)))
                for key, score in ranked
                if key in by_id
            ]
            return hits, chunk_copies(rows, INDEX_COLUMNS), len(ranked)

        return collapse_search(fetch, 10, groups)

    return search


def _time_modes(connection: duckdb.DuckDBPyConnection, mode: str, queries: list[str],
                rank: Ranking) -> None:
    """p50/p95 of the plain ranking (k = 10), then of the search collapsed per document."""
    _time_queries(mode, queries, lambda q: rank(q, 10))
    search = _per_document(connection, rank)
    _time_queries(f"{mode}/doc", queries, search)
    documents = [len({(h.source_id, h.path) for h in search(q)}) for q in queries[:20]]
    print(f"{mode}/doc: documents per result (first 20 queries) {statistics.mean(documents):.1f}")


def _time_queries(mode: str, queries: list[str], run: Callable[[str], object]) -> None:
    run(queries[0])  # warm the caches once
    times = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        times.append((time.perf_counter() - started) * 1000)
    p50, p95 = _percentiles(times)
    print(
        f"{mode:7s}: {len(queries)} queries p50 {p50:.1f} ms  p95 {p95:.1f} ms  "
        f"peak RSS {_peak_rss_mb():.0f} MB"
    )


def load_vectors(connection: duckdb.DuckDBPyConnection, count: int) -> None:
    """`VECTORS_TABLE` as a `VectorIndex` loads it (in memory, `FLOAT[256]`), one random unit
    vector per synthetic chunk, built 100,000 rows at a time."""
    import pyarrow as pa

    connection.execute(
        f"CREATE TEMP TABLE {VECTORS_TABLE} (chunk_id VARCHAR, source_id VARCHAR, path VARCHAR, "
        "page_start INTEGER, page_end INTEGER, media_type VARCHAR, "
        f"embedding FLOAT[{DIM}])"
    )
    step = 100_000
    for start in range(0, count, step):
        rows = min(step, count - start)
        flat = pa.array(unit_vectors(rows, start).reshape(-1), type=pa.float32())
        block = pa.table(
            {
                "i": pa.array(range(start, start + rows), type=pa.int64()),
                "embedding": pa.FixedSizeListArray.from_arrays(flat, DIM),
            }
        )
        connection.register("block", block)
        connection.execute(
            f"INSERT INTO {VECTORS_TABLE} SELECT 'c1-' || i, 's' || (i % 7), "
            "'doc' || (i // 20) || '.txt', NULL, NULL, 'text/plain', embedding FROM block"
        )
        connection.unregister("block")


def load_matrix(connection: duckdb.DuckDBPyConnection, count: int) -> VectorMatrix:
    """A `VectorMatrix` as a `VectorIndex` loads it, of the vectors `load_vectors` makes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    matrix = VectorMatrix(connection, DIM)
    step = 100_000
    for start in range(0, count, step):
        rows = min(step, count - start)
        i = pa.array(range(start, start + rows), type=pa.int64())
        flat = pa.array(unit_vectors(rows, start).reshape(-1), type=pa.float32())
        text = pc.cast(i, pa.string())
        files = pc.cast(pc.divide(i, 20), pa.string())
        matrix.append(
            pa.table(
                {
                    "chunk_id": pc.binary_join_element_wise("c1-", text, ""),
                    "source_id": pc.binary_join_element_wise(
                        "s", pc.cast(pc.remainder(i, 7), pa.string()), ""
                    ),
                    "path": pc.binary_join_element_wise("doc", files, ".txt", ""),
                    "page_start": pa.nulls(rows, pa.int32()),
                    "page_end": pa.nulls(rows, pa.int32()),
                    "media_type": pa.array(["text/plain"] * rows),
                    "embedding": pa.FixedSizeListArray.from_arrays(flat, DIM),
                }
            )
        )
    return matrix


def _int8_ranking(
    codes: npt.NDArray[np.int8], matrix: VectorMatrix, vector: list[float], k: int, rescore: int
) -> list[str]:
    """int8 codes scored in blocks (numpy has no int8 product), the best `rescore` rescored
    from the float32 file: the form measured against the float32 one."""
    query = np.asarray(vector, dtype=np.float32)
    query /= np.linalg.norm(query)
    scores = np.empty(len(codes), dtype=np.float32)
    for start in range(0, len(codes), 65_536):
        scores[start : start + 65_536] = codes[start : start + 65_536].astype(np.float32) @ query
    top = np.argpartition(-scores, rescore)[:rescore]
    exact = matrix._mapped()[np.sort(top)] @ query
    best = np.sort(top)[np.argsort(-exact)[:k]]
    return [f"c1-{i}" for i in best]


def vector_forms(
    connection: duckdb.DuckDBPyConnection,
    matrix: VectorMatrix,
    embedder: WordLlamaEmbedder,
    queries: list[str],
    count: int,
) -> None:
    """The forms the vectors could be held in, at `count` vectors: the DuckDB `FLOAT[256]`
    table (the exact reference), the memory-mapped float32 file (`VectorMatrix`) and int8
    codes with float rescoring; memory, p50 and recall@10 against the reference."""
    embedded = [embedder.embed([q])[0] for q in queries]
    # The table is measured as a VectorIndex held it: in memory (no build memory limit).
    before = _rss_mb()
    load_vectors(connection, count)
    table_mb = _rss_mb() - before
    exact = [[c for c, _ in rank_vectors(connection, v, 10, FILTERS)] for v in embedded]
    before = _rss_mb()
    codes = np.empty((count, DIM), dtype=np.int8)
    mapped = matrix._mapped()
    for start in range(0, count, 100_000):
        block = mapped[start : start + 100_000]
        codes[start : start + 100_000] = np.round(block * 127).astype(np.int8)
    codes_mb = _rss_mb() - before
    forms: list[tuple[str, float, Callable[[list[float]], list[str]]]] = [
        ("float32 DuckDB table", table_mb,
         lambda v: [c for c, _ in rank_vectors(connection, v, 10, FILTERS)]),
        ("float32 memory-mapped", matrix.file_bytes / 2**20,
         lambda v: [c for c, _ in matrix.ranking(v, 10, FILTERS)]),
        ("int8 + rescoring 100", codes_mb, lambda v: _int8_ranking(codes, matrix, v, 10, 100)),
    ]
    million = 1_000_000 / count
    for name, mb, run in forms:
        times, found = [], 0
        for vector, truth in zip(embedded, exact, strict=True):
            started = time.perf_counter()
            got = run(vector)
            times.append((time.perf_counter() - started) * 1000)
            found += len(set(got) & set(truth))
        p50, p95 = _percentiles(times)
        print(
            f"form   : {name:22s} {mb * million:6.0f} MB per million vectors, "
            f"p50 {p50:.1f} ms p95 {p95:.1f} ms, recall@10 vs exact "
            f"{found / (10 * len(exact)):.3f}"
        )
    connection.execute(f"DROP TABLE {VECTORS_TABLE}")


def vector_latency(
    connection: duckdb.DuckDBPyConnection, queries: list[str], count: int, *, forms: bool
) -> None:
    """Load the vectors as a `VectorIndex` holds them (a `VectorMatrix`), then time vector and
    hybrid queries (k = 10) as the Searcher runs them."""
    embedder = WordLlamaEmbedder()
    before = _rss_mb()
    started = time.perf_counter()
    matrix = load_matrix(connection, count)
    matrix.ranking(embedder.embed(["warm"])[0], 10)  # maps the file
    print(
        f"vectors: {count} x {DIM} loaded in {time.perf_counter() - started:.1f} s, "
        f"RSS {_rss_mb():.0f} MB (was {before:.0f} MB), peak RSS {_peak_rss_mb():.0f} MB; "
        f"file {matrix.file_bytes / 2**20:.0f} MB (page cache)"
    )
    depth = 50  # the engine's fusion depth

    def vector(query: str, k: int) -> list[tuple[str, float]]:
        [embedded] = embedder.embed([query])
        return matrix.ranking(embedded, k, FILTERS)

    def hybrid(query: str, k: int) -> list[tuple[str, float]]:
        deep = max(k, depth)
        keyword = bm25_ranking(connection, query, deep, FILTERS)
        return reciprocal_rank_fusion(
            [keyword, vector(query, deep)], k, weights=(1.0, VECTOR_WEIGHT)
        )

    _time_modes(connection, "vector", queries, vector)
    _time_modes(connection, "hybrid", queries, hybrid)
    if forms:
        vector_forms(connection, matrix, embedder, queries[:50], count)
    matrix.close()


def latency_main(args: argparse.Namespace) -> None:
    rng = random.Random(SEED)
    queries = [
        " ".join(f"w{int(30000 ** rng.random())}" for _ in range(rng.choice((2, 3))))
        for _ in range(args.queries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.duckdb"
        reuse = path.is_file()
        connection = duckdb.connect(str(path))
        bound_memory(connection, Path(tmp) / "spill")
        load_extension(connection, "fts")
        if reuse:  # --db of an earlier run: time the queries only
            _time_modes(
                connection, "bm25", queries, lambda q, k: bm25_ranking(connection, q, k, FILTERS)
            )
        else:
            started = time.perf_counter()
            synthetic_chunks(connection, args.chunks)
            took = time.perf_counter() - started
            print(f"{args.chunks} synthetic chunks generated in {took:.1f} s")
            bm25_latency(connection, path, queries)
        if not args.bm25_only:
            vector_latency(connection, queries, args.chunks, forms=args.forms)
        connection.close()


_FIGURES = {
    "build s": r"full build of .* in ([\d.]+) s",
    "build CPU s": r"full build of .* \(([\d.]+) s CPU\)",
    "build peak MB": r"full build of .*peak RSS (\d+) MB",
    "batch s": r"batch of \d+ chunks applied in ([\d.]+) s",
    "bm25 p50 ms": r"^bm25\s*: \d+ queries p50 ([\d.]+)",
    "bm25 p95 ms": r"^bm25\s*: \d+ queries p50 [\d.]+ ms\s+p95 ([\d.]+)",
    "vector p50 ms": r"^vector\s*: \d+ queries p50 ([\d.]+)",
    "vector p95 ms": r"^vector\s*: \d+ queries p50 [\d.]+ ms\s+p95 ([\d.]+)",
    "hybrid p50 ms": r"^hybrid\s*: \d+ queries p50 ([\d.]+)",
    "hybrid p95 ms": r"^hybrid\s*: \d+ queries p50 [\d.]+ ms\s+p95 ([\d.]+)",
    "bm25/doc p50 ms": r"^bm25/doc\s*: \d+ queries p50 ([\d.]+)",
    "bm25/doc p95 ms": r"^bm25/doc\s*: \d+ queries p50 [\d.]+ ms\s+p95 ([\d.]+)",
    "vector/doc p50 ms": r"^vector/doc\s*: \d+ queries p50 ([\d.]+)",
    "vector/doc p95 ms": r"^vector/doc\s*: \d+ queries p50 [\d.]+ ms\s+p95 ([\d.]+)",
    "hybrid/doc p50 ms": r"^hybrid/doc\s*: \d+ queries p50 ([\d.]+)",
    "hybrid/doc p95 ms": r"^hybrid/doc\s*: \d+ queries p50 [\d.]+ ms\s+p95 ([\d.]+)",
    "process peak MB": r"peak RSS (\d+) MB(?!.*peak RSS)",
}


def _run_latency(tree: Path, chunks: int, extra: list[str]) -> dict[str, float]:
    """`latency` of the code in `tree` in a process of its own (its peak is its own)."""
    import subprocess

    command = [sys.executable, str(tree / "bench" / "bench_search.py"), "latency"]
    command += ["--chunks", str(chunks), *extra]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    print(f"$ {' '.join(command[1:])}  (code: {tree})", flush=True)
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True)
    print(done.stdout, end="", flush=True)
    figures: dict[str, float] = {}
    for name, pattern in _FIGURES.items():
        found = re.findall(pattern, done.stdout, re.MULTILINE)
        if found:
            figures[name] = float(found[-1])
    return figures


def compare_main(args: argparse.Namespace) -> None:
    """Each size in its own process, this tree's code, then at `--old-chunks` the code in
    `--old` (a worktree of the previous commit) in the same run; a table of both and ratios."""
    runs: dict[str, dict[str, float]] = {}
    for chunks in args.sizes:
        extra = [] if chunks <= args.old_chunks else ["--bm25-only"]
        runs[f"new {chunks}"] = _run_latency(REPO, chunks, [*extra, *args.latency_args])
    if args.old is not None:
        # The old script knows only its own options: --queries is passed on, nothing else.
        given = list(args.latency_args)
        passed = [
            a
            for i, a in enumerate(given)
            if a.startswith("--queries") or (i and given[i - 1] == "--queries")
        ]
        runs[f"old {args.old_chunks}"] = _run_latency(args.old, args.old_chunks, passed)
    names = list(runs)
    print("\n| figure | " + " | ".join(names) + " | new / old |")
    print("|---|" + "---|" * (len(names) + 1))
    new, old = runs.get(f"new {args.old_chunks}", {}), runs.get(f"old {args.old_chunks}", {})
    for figure in _FIGURES:
        cells = [f"{runs[n][figure]:g}" if figure in runs[n] else "-" for n in names]
        ratio = f"{new[figure] / old[figure]:.2f}" if old.get(figure) and figure in new else "-"
        print(f"| {figure} | " + " | ".join(cells) + f" | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    rec = sub.add_parser("recall")
    rec.add_argument("--store", type=Path, default=None)
    rec.add_argument("--queries", type=int, default=240)
    lat = sub.add_parser("latency")
    lat.add_argument("--chunks", type=int, default=1_000_000)
    lat.add_argument("--queries", type=int, default=200)
    lat.add_argument("--db", type=Path, default=None, help="keep (or reuse) the index here")
    lat.add_argument("--bm25-only", action="store_true", help="skip the vector and hybrid modes")
    lat.add_argument("--forms", action="store_true", help="compare the forms of the vectors")
    com = sub.add_parser("compare", help="latency per size in subprocesses, old code beside")
    com.add_argument(
        "--sizes", type=lambda v: [int(x) for x in v.split(",")], default=[1_000_000, 5_000_000]
    )
    com.add_argument("--old", type=Path, default=None, help="a worktree of the code to compare")
    com.add_argument("--old-chunks", type=int, default=1_000_000)
    com.add_argument("latency_args", nargs="*", help="passed to latency (after --)")
    args = parser.parse_args()
    {"recall": recall_main, "latency": latency_main, "compare": compare_main}[args.what](args)


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
