"""The boxes on the page of search hits, read at hit time from the chunks Parquet files of
the hits' batches only (the index keeps no boxes: a hit names its batch)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import duckdb

from content_core.search.types import HitBox, SearchHit

__all__ = ["with_boxes"]


def with_boxes(root: Path, hits: Sequence[SearchHit]) -> list[SearchHit]:
    """`hits` with their chunks' boxes (`chunks.boxes`); a hit whose batch was written before
    boxes existed, or is gone, keeps none. A batch compacted into the store's packed files is
    read back through the table's view (`ContentStore.read_rows`)."""
    # Imported here: the store brings pyarrow, which the CLI's query path never loads.
    from content_core.store import CHUNKS, ContentStore

    store = ContentStore(root)
    wanted = [hit.chunk_id for hit in hits]
    batches = sorted({hit.batch_id for hit in hits if hit.batch_id})
    files = [store.table_path(CHUNKS, batch) for batch in batches]
    found: dict[str, tuple[HitBox, ...]] = {}
    present = [str(file) for file in files if file.exists()]
    if present:
        found.update(_boxes_in_files(present, wanted))
    for batch, file in zip(batches, files, strict=True):
        if not file.exists():  # compacted: the view reads the batch from its packed file
            table = store.read_rows(CHUNKS, batch)
            if "boxes" in table.column_names:
                for chunk_id, boxes in zip(
                    table.column("chunk_id").to_pylist(),
                    table.column("boxes").to_pylist(),
                    strict=True,
                ):
                    if chunk_id in wanted:
                        found[str(chunk_id)] = _hit_boxes(boxes)
    return [
        dataclasses.replace(hit, boxes=found[hit.chunk_id]) if hit.chunk_id in found else hit
        for hit in hits
    ]


def _boxes_in_files(files: list[str], chunk_ids: list[str]) -> dict[str, tuple[HitBox, ...]]:
    """The boxes of `chunk_ids` in the chunks files `files` (none from files without them)."""
    connection = duckdb.connect()
    try:
        relation = connection.sql(
            "SELECT * FROM read_parquet(?, union_by_name = true)", params=[files]
        )
        if "boxes" not in relation.columns:  # every file written before boxes existed
            return {}
        rows = connection.execute(
            "SELECT chunk_id, boxes FROM read_parquet(?, union_by_name = true) "
            "WHERE chunk_id IN (SELECT unnest(?))",
            [files, chunk_ids],
        ).fetchall()
    except duckdb.Error:  # a file half-replaced by a rerun: the hits stand without boxes
        return {}
    finally:
        connection.close()
    return {str(chunk_id): _hit_boxes(boxes) for chunk_id, boxes in rows}


def _hit_boxes(boxes: Sequence[dict[str, float]] | None) -> tuple[HitBox, ...]:
    return tuple(
        HitBox(int(b["page"]), float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"]))
        for b in boxes or ()
    )
