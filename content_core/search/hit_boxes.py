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
    """`hits` with their chunks' boxes (`chunks.boxes`); a hit whose batch file is gone, or
    was written before boxes existed, keeps none."""
    # Imported here: the store brings pyarrow, which the CLI's query path never loads.
    from content_core.store import CHUNKS, ContentStore

    store = ContentStore(root)
    files = sorted({str(store.table_path(CHUNKS, hit.batch_id)) for hit in hits if hit.batch_id})
    files = [file for file in files if Path(file).exists()]
    if not files:
        return list(hits)
    connection = duckdb.connect()
    try:
        names = {
            str(row[0])
            for row in connection.execute(
                "SELECT name FROM parquet_schema(?)", [files[0]]
            ).fetchall()
        }
        if "boxes" not in names:
            return list(hits)
        rows = connection.execute(
            "SELECT chunk_id, boxes FROM read_parquet(?, union_by_name = true) "
            "WHERE chunk_id IN (SELECT unnest(?))",
            [files, [hit.chunk_id for hit in hits]],
        ).fetchall()
    except duckdb.Error:  # a file half-replaced by a rerun: the hits stand without boxes
        return list(hits)
    finally:
        connection.close()
    found = {
        str(chunk_id): tuple(
            HitBox(int(b["page"]), float(b["x0"]), float(b["y0"]), float(b["x1"]),
                   float(b["y1"]))
            for b in boxes or ()
        )  # fmt: skip
        for chunk_id, boxes in rows
    }
    return [
        dataclasses.replace(hit, boxes=found[hit.chunk_id]) if hit.chunk_id in found else hit
        for hit in hits
    ]
