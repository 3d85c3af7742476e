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
    read back through the table's view (`table_select`), only its hits' rows and columns."""
    # Imported here: the store brings pyarrow, which the CLI's query path never loads.
    from content_core.store import CHUNKS, ContentStore
    from content_core.store.catalog import table_select

    store = ContentStore(root)
    files = {
        batch: store.table_path(CHUNKS, batch) for batch in {h.batch_id for h in hits if h.batch_id}
    }
    present = sorted(str(file) for file in files.values() if file.exists())
    packed = sorted(batch for batch, file in files.items() if not file.exists())
    wanted = [hit.chunk_id for hit in hits]
    found: dict[str, tuple[HitBox, ...]] = {}
    if present:
        found |= _boxes("read_parquet(?, union_by_name = true)", [present], wanted)
    if packed:
        view = table_select(store.root, CHUNKS)
        found |= _boxes(
            f"(SELECT * FROM ({view}) WHERE batch_id IN (SELECT unnest(?)))", [packed], wanted
        )
    return [
        dataclasses.replace(hit, boxes=found[hit.chunk_id]) if hit.chunk_id in found else hit
        for hit in hits
    ]


def _boxes(
    source: str, params: list[object], chunk_ids: list[str]
) -> dict[str, tuple[HitBox, ...]]:
    """The boxes of `chunk_ids` among the chunks rows of `source` (SQL taking `params`); none
    when its files were written before boxes existed."""
    connection = duckdb.connect()
    try:
        if "boxes" not in connection.sql(f"SELECT * FROM {source}", params=params).columns:
            return {}
        rows = connection.execute(
            f"SELECT chunk_id, boxes FROM {source} WHERE chunk_id IN (SELECT unnest(?))",
            [*params, chunk_ids],
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
