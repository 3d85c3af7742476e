"""Vector search at size: brute force (`array_cosine_distance` over `FLOAT[256]`) against an
HNSW index (the `vss` extension, loaded from its package), on synthetic unit vectors.

    .venv/bin/python bench/bench_vectors.py [--sizes 100000 1000000] [--queries 20] [--k 10]

Each (size, mode) runs in a fresh subprocess, so its peak RSS is its own. Modes:
- `parquet`: what `vector_ranking` does, a scan of the Parquet file the store writes
  (`list<float>` cast to `FLOAT[256]`), nothing held between queries;
- `table`: the vectors loaded once into an in-memory DuckDB table, then scanned;
- `hnsw`: that table with an HNSW index (cosine metric); the build is timed.
Figures: build (load/index) seconds, p50/p95 query ms, peak RSS MB, recall@k of HNSW against
the exact answer.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DIM = 256
_TOPK = (
    "SELECT id FROM {source} ORDER BY array_cosine_distance({column}, ?::FLOAT[256]) LIMIT {k}"
)


def unit_vectors(n: int, seed: int):  # type: ignore[no-untyped-def]
    """`n` random unit vectors of DIM floats (float32), reproducible from `seed`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    data = rng.standard_normal((n, DIM), dtype=np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data


def _write_parquet(n: int, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = unit_vectors(n, 1)
    flat = pa.array(data.reshape(-1), type=pa.float32())
    table = pa.table(
        {
            "id": pa.array(range(n), type=pa.int64()),
            "embedding": pa.FixedSizeListArray.from_arrays(flat, DIM),
        }
    )
    pq.write_table(table, path, compression="zstd", row_group_size=100_000)


def _child(mode: str, path: Path, queries: int, k: int) -> dict[str, float]:
    import duckdb

    from content_core.store import load_extension

    connection = duckdb.connect(":memory:")
    started = time.perf_counter()
    build = 0.0
    if mode == "parquet":
        source = f"read_parquet('{path}')"
        column = "embedding::FLOAT[256]"
    else:
        connection.execute(
            "CREATE TABLE v AS SELECT id, embedding::FLOAT[256] AS embedding "
            f"FROM read_parquet('{path}')"
        )
        source, column = "v", "embedding"
        if mode == "hnsw":
            load_extension(connection, "vss")
            connection.execute("SET hnsw_enable_experimental_persistence = false")
            index_started = time.perf_counter()
            connection.execute(
                "CREATE INDEX v_hnsw ON v USING HNSW (embedding) WITH (metric = 'cosine')"
            )
            build = time.perf_counter() - index_started
    load = time.perf_counter() - started - build
    sql = _TOPK.format(source=source, column=column, k=k)
    times, answers = [], []
    for q in unit_vectors(queries, 2):
        t = time.perf_counter()
        answers.append([row[0] for row in connection.execute(sql, [q.tolist()]).fetchall()])
        times.append((time.perf_counter() - t) * 1000)
    plan = ""
    if mode == "hnsw":
        probe = unit_vectors(1, 3)[0].tolist()
        plan = str(connection.execute("EXPLAIN " + sql, [probe]).fetchall())
    times.sort()
    return {
        "load_s": round(load, 2),
        "index_build_s": round(build, 2),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "uses_index": float("HNSW" in plan.upper()) if mode == "hnsw" else 0.0,
        "answers": answers,  # type: ignore[dict-item]
    }


def _recall(exact: list[list[int]], approx: list[list[int]]) -> float:
    hits = sum(len(set(e) & set(a)) for e, a in zip(exact, approx, strict=True))
    return round(hits / sum(len(e) for e in exact), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--modes", nargs="+", default=["parquet", "table", "hnsw"])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, path = args.child
        print(json.dumps(_child(mode, Path(path), args.queries, args.k)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"vectors-{n}.parquet"
            started = time.perf_counter()
            _write_parquet(n, path)
            print(f"{n:>9} vectors: written in {time.perf_counter() - started:.1f} s, "
                  f"{path.stat().st_size / 1e6:.0f} MB of Parquet", flush=True)
            exact: list[list[int]] | None = None
            for mode in args.modes:
                done = subprocess.run(
                    [sys.executable, __file__, "--queries", str(args.queries), "--k",
                     str(args.k), "--child", mode, str(path)],
                    capture_output=True, text=True, timeout=3600, check=True,
                )
                figures = json.loads(done.stdout.strip().splitlines()[-1])
                answers = figures.pop("answers")
                if mode != "hnsw":
                    exact = exact or answers
                elif exact is not None:
                    figures["recall_at_k"] = _recall(exact, answers)
                print(f"{n:>9} {mode:>8}: {json.dumps(figures)}", flush=True)


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
