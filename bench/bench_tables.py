"""What the typed row models cost a large batch: N chunk rows built as `ChunkRow` and turned
into Arrow, against the same rows as plain dicts converted column by column (the writer before
the row models); then the Parquet write both share.

    .venv/bin/python bench/bench_tables.py --rows 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from content_core.store import CHUNKS, SCHEMAS, ChunkRow
from content_core.store.tables import rows_to_table, write_parquet_atomic


def _fields(i: int) -> dict[str, Any]:
    content = f"chunk {i} " + "lorem ipsum dolor sit amet " * 20
    return {
        "batch_id": "src-000001-0123456789",
        "source_id": "src",
        "path": f"folder/file-{i // 50}.pdf",
        "path_bytes": f"folder/file-{i // 50}.pdf".encode(),
        "artifact_id": f"{i // 50:064x}",
        "chunk_id": f"{i:032x}",
        "index": i % 50,
        "total_chunks": 50,
        "content": content,
        "source_start": 600 * (i % 50),
        "source_end": 600 * (i % 50) + len(content),
        "token_count": 130,
        "overlap_tokens": 10,
        "page_start": 1 + i % 50 // 3,
        "page_end": 1 + i % 50 // 3,
        "breadcrumb": None,
        "chunker": "markdown",
        "chunker_fingerprint": "0123456789abcdef",
        "metadata": "{}",
    }


def _as_models(values: list[dict[str, Any]]) -> pa.Table:
    return rows_to_table(CHUNKS, [ChunkRow(**v) for v in values])


def _as_dicts(values: list[dict[str, Any]]) -> pa.Table:
    rows = [dict(v) for v in values]
    schema = SCHEMAS[CHUNKS]
    return pa.Table.from_pydict({n: [r.get(n) for r in rows] for n in schema.names}, schema=schema)


def _best(run: Callable[[], object], repeat: int) -> float:
    return statistics.median(timeit.repeat(run, number=1, repeat=repeat))


def main() -> None:
    """Print the median seconds of each way, and of the Parquet write after it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    values = [_fields(i) for i in range(args.rows)]
    models = _best(lambda: _as_models(values), args.repeat)
    dicts = _best(lambda: _as_dicts(values), args.repeat)
    table = _as_models(values)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "data.parquet"
        write = _best(lambda: write_parquet_atomic(table, target), args.repeat)
    print(f"{args.rows} chunk rows, median of {args.repeat}")
    print(f"  ChunkRow models -> Arrow: {models:.3f} s")
    print(f"  dicts -> Arrow:           {dicts:.3f} s")
    print(f"  Parquet write (zstd):     {write:.3f} s")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
