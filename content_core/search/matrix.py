"""The vectors a `VectorIndex` holds: unit float32 rows in a memory-mapped file, their columns
(chunk, source, path, pages, media type) in a DuckDB table for the filters.

Memory per million 256-d vectors (bench/bench_search.py latency, docs/reference/search.md):
the file is 1,024 MB (4 bytes x 256 per vector), held in the page cache, which the kernel
shares and can reclaim; the columns table and chunk ids about 330 MB of the process's own
(RSS grew 1,309 MB at 1M, 977 MB of it the mapped file).
The DuckDB `FLOAT[256]` table this replaces held 1.2 to 1.4 GB of the process's memory.
int8 quantisation (256 MB) with float rescoring was measured too and answered slower here:
numpy has no int8 matrix product, so each query converts every row.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

import duckdb

from content_core.search.types import SearchFilters

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

__all__ = ["ROWS_TABLE", "VectorMatrix"]

# The columns of each row of a `VectorMatrix`, `row` its row in the file.
ROWS_TABLE = "vector_rows"
_COLUMNS = ("chunk_id", "source_id", "path", "page_start", "page_end", "media_type")


class VectorMatrix:
    """Unit vectors of one dimension, appended in Arrow batches, searched by cosine similarity.

    Args:
        connection: the DuckDB connection that keeps the rows' columns (`ROWS_TABLE`).
        dimension: the length of every vector.
        directory: where the vectors' file is made (deleted on `close`); default the system's
            temporary directory.
    """

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        dimension: int,
        directory: Path | None = None,
    ) -> None:
        self.connection = connection
        self.dimension = int(dimension)
        self.rows = 0
        self._file: IO[bytes] | None = tempfile.TemporaryFile(dir=directory)
        self._matrix: npt.NDArray[np.float32] | None = None
        self._chunk_ids: list[str] = []
        connection.execute(
            f"CREATE OR REPLACE TEMP TABLE {ROWS_TABLE} (row BIGINT, chunk_id VARCHAR, "
            "source_id VARCHAR, path VARCHAR, page_start INTEGER, page_end INTEGER, "
            "media_type VARCHAR)"
        )

    def append(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Add rows: the `_COLUMNS` and `embedding` (a list of `dimension` floats each)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._file is None or self._matrix is not None:
            raise ValueError("a VectorMatrix takes rows until its first search")
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        if not table.num_rows:
            return
        embedding = table.column("embedding").combine_chunks()
        flat = pc.list_flatten(embedding).to_numpy(zero_copy_only=False)
        vectors = np.asarray(flat, dtype=np.float32).reshape(table.num_rows, self.dimension)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        self._file.write(vectors.tobytes())
        rows = table.select(list(_COLUMNS)).append_column(
            "row", pa.array(range(self.rows, self.rows + table.num_rows), type=pa.int64())
        )
        self.connection.register("_vector_batch", rows)
        try:
            self.connection.execute(
                f"INSERT INTO {ROWS_TABLE} SELECT row, {', '.join(_COLUMNS)} FROM _vector_batch"
            )
        finally:
            self.connection.unregister("_vector_batch")
        self._chunk_ids.extend(str(c) for c in table.column("chunk_id").to_pylist())
        self.rows += table.num_rows

    def _mapped(self) -> npt.NDArray[np.float32]:
        import numpy as np

        if self._matrix is None:
            if self._file is None:
                raise ValueError("the VectorMatrix is closed")
            self._file.flush()
            if self.rows:
                self._matrix = np.memmap(
                    self._file, dtype=np.float32, mode="r", shape=(self.rows, self.dimension)
                )
            else:
                self._matrix = np.zeros((0, self.dimension), dtype=np.float32)
        return self._matrix

    def ranking(
        self, vector: Sequence[float], k: int, filters: SearchFilters | None = None
    ) -> list[tuple[str, float]]:
        """The `k` chunks nearest `vector`, best first, as `(chunk_id, cosine similarity)`:
        a chunk with several rows (several paths) is one hit, at its best row."""
        import numpy as np

        matrix = self._mapped()
        if k <= 0 or not self.rows:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm > 0:
            query = query / norm
        clause, params = (filters or SearchFilters()).where()
        if clause == "TRUE":
            rows = None
            scores = matrix @ query
        else:
            found = self.connection.execute(
                f"SELECT row FROM {ROWS_TABLE} WHERE {clause} ORDER BY row", params
            ).fetchall()
            rows = np.fromiter((r for (r,) in found), dtype=np.int64, count=len(found))
            scores = matrix[rows] @ query if len(rows) else np.zeros(0, dtype=np.float32)
        depth = 4 * k
        while True:
            top = _top(scores, depth)
            best: dict[str, float] = {}
            for position in top:  # best first: a chunk's first row is its best
                row = int(position if rows is None else rows[position])
                best.setdefault(self._chunk_ids[row], float(scores[position]))
            if len(best) >= k or len(top) == len(scores):
                return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
            depth *= 4

    @property
    def file_bytes(self) -> int:
        """The size of the vectors' file (4 bytes per float)."""
        return self.rows * self.dimension * 4

    def close(self) -> None:
        """Delete the file and the rows table."""
        self._matrix = None
        if self._file is not None:
            self._file.close()
            self._file = None
        self.connection.execute(f"DROP TABLE IF EXISTS {ROWS_TABLE}")


def _top(scores: npt.NDArray[np.float32], depth: int) -> npt.NDArray[np.int64]:
    """The positions of the `depth` highest scores, highest first (position breaks ties)."""
    import numpy as np

    if depth < len(scores):
        chosen = np.argpartition(-scores, depth - 1)[:depth]
    else:
        chosen = np.arange(len(scores))
    order = np.lexsort((chosen, -scores[chosen]))
    return chosen[order].astype(np.int64)
