"""`content-pipeline show CHUNK_ID`: one chunk's text, pages and boxes on the page, or with
`--png` a picture of its page(s) with the boxes highlighted.

Like `query`, this path imports no Dagster: it reads the store's views and its blobs.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

from content_assets.cli.query import StoreNotFoundError, existing_store

__all__ = ["add_show_parser", "show_command"]

_PDF = "application/pdf"


def add_show_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the `show` subcommand to the CLI's parser."""
    show = commands.add_parser("show", help="show a chunk: its text, pages and boxes")
    show.add_argument("chunk_id", metavar="CHUNK_ID", help="a chunk's id (chunks.chunk_id)")
    show.add_argument(
        "--png",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the chunk's page(s) with its boxes highlighted to FILE, a PNG",
    )
    show.add_argument(
        "--scale", type=float, default=1.5, help="pixels per PDF point in the PNG"
    )


def _chunk(root: Path, chunk_id: str) -> dict[str, Any] | None:
    """The chunk's row with its artifact's media type and kind (None when no such chunk)."""
    from content_core.store import ContentStore

    # Any: a row read back from Parquet, keyed by column name.
    rows: list[dict[str, Any]] = (
        ContentStore(root)
        .query(
            "SELECT c.chunk_id, c.path, c.artifact_id, c.content, c.page_start, c.page_end, "
            "c.boxes, a.media_type, a.kind FROM current_chunks c "
            "JOIN current_normalised_artifacts a USING (source_id, path, artifact_id) "
            "WHERE c.chunk_id = ? AND c.content IS NOT NULL LIMIT 1",
            [chunk_id],
        )
        .to_pylist()
    )
    return rows[0] if rows else None


def _describe(chunk: dict[str, Any]) -> str:
    pages = ""
    if chunk["page_start"] is not None:
        first, last = chunk["page_start"], chunk["page_end"]
        pages = f"page {first}" if last in (None, first) else f"pages {first}-{last}"
    lines = [f"chunk {chunk['chunk_id']}  {chunk['path']}  {pages}".rstrip()]
    unit = "pt" if chunk["media_type"] == _PDF else "px"
    boxes = chunk["boxes"] or []
    lines.append(f"boxes ({len(boxes)}, {unit}, x0 y0 x1 y1):" if boxes else "boxes: none")
    lines += [
        f"  p.{b['page']}  {b['x0']:.1f} {b['y0']:.1f} {b['x1']:.1f} {b['y1']:.1f}"
        for b in boxes
    ]
    lines += ["", chunk["content"]]
    return "\n".join(lines)


def show_command(args: argparse.Namespace, store: Path | str | None) -> int:
    """The `show` subcommand; returns the exit code (2: no store, no such chunk, or a chunk
    without boxes for --png; 1: its file cannot be drawn)."""
    try:
        root = existing_store(store)
    except StoreNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    chunk = _chunk(root, args.chunk_id)
    if chunk is None:
        print(f"error: no chunk {args.chunk_id!r} in the store at {root} (ids are in "
              "current_chunks.chunk_id; search --format jsonl prints them)", file=sys.stderr)
        return 2
    if args.png is None:
        print(_describe(chunk))
        return 0
    if not chunk["boxes"]:
        print(f"error: chunk {args.chunk_id} has no boxes to draw ({chunk['media_type']}: "
              "only PDFs and images read by OCR have them)", file=sys.stderr)
        return 2
    from content_core.errors import ContentError
    from content_core.extract import PageBox, render_boxes
    from content_core.store import ContentStore

    boxes = [PageBox(b["page"], b["x0"], b["y0"], b["x1"], b["y1"]) for b in chunk["boxes"]]
    try:
        data = ContentStore(root).blobs.get(chunk["artifact_id"])
        png = render_boxes(data, boxes, pdf=chunk["media_type"] == _PDF, scale=args.scale)
    except (ContentError, OSError) as exc:
        print(f"error: cannot draw chunk {args.chunk_id}: {exc}", file=sys.stderr)
        return 1
    args.png.write_bytes(png)
    print(f"wrote {args.png} (pages {', '.join(str(p) for p in sorted({b.page for b in boxes}))})",
          file=sys.stderr)
    return 0
