"""`content-pipeline search`: the store's chunks that best match a query, by BM25, vectors or
both, printed with path, page, document title, breadcrumb, score and a highlighted snippet, or
as JSON lines.

Like `query`, this path imports no Dagster: it reads the store's files and its search index.
Queries are embedded by the embedder the `chunk_embeddings` asset is configured with, from the
same environment variables (CONTENT_EMBEDDER, CONTENT_EMBED_MODEL, CONTENT_EMBED_URL,
CONTENT_EMBED_DIM, CONTENT_EMBED_API_KEY), so they meet vectors of the model the store holds.
"""

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from content_assets.cli.query import (
    ObjectStoreNotSupportedError,
    StoreNotFoundError,
    existing_store,
    object_store,
)
from content_core.embeddings import Embedder, EmbedderConfig, make_embedder
from content_core.errors import ContentError
from content_core.search import (
    SEARCH_MODES,
    Searcher,
    SearchFilters,
    SearchHit,
    highlight,
    snippet,
)
from content_core.search.highlight import ANSI_MARKS, PLAIN_MARKS

__all__ = ["SEARCH_FORMATS", "add_search_parser", "search_command"]

SEARCH_FORMATS = ("table", "jsonl")
_PAGES = re.compile(r"(\d+)(?:-(\d+))?")
_PARENT_CHARS = 240


def _pages(text: str) -> tuple[int, int]:
    match = _PAGES.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a page or a page range (N or N-M): {text!r}")
    first = int(match.group(1))
    return first, int(match.group(2) or first)


def add_search_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the `search` subcommand to the CLI's parser."""
    search = commands.add_parser("search", help="find the chunks that match a query")
    search.add_argument(
        "text",
        metavar="query",
        help="words or a phrase to look for",
    )
    search.add_argument("--k", "-k", type=int, default=10, help="hits to print")
    search.add_argument(
        "--mode",
        choices=SEARCH_MODES,
        default="hybrid",
        help="hybrid (default, the best measured) fuses BM25 and vectors; it is BM25 while "
        "there are no embeddings",
    )
    search.add_argument(
        "--format", "-f", choices=SEARCH_FORMATS, default="table", help="output format"
    )
    search.add_argument("--source-id", default=None, help="only this source")
    search.add_argument("--path-prefix", default=None, help="only paths starting with this")
    search.add_argument("--media-type", default=None, help="only files of this media type")
    search.add_argument(
        "--page", type=_pages, default=None, help="only chunks on page N or pages N-M"
    )
    collapse = search.add_mutually_exclusive_group()
    collapse.add_argument(
        "--per-document",
        dest="per_document",
        action="store_true",
        default=True,
        help="one hit per file, its other matching chunks counted, copies and near-duplicate "
        "files folded in as 'also in' (the default)",
    )
    collapse.add_argument(
        "--all-chunks",
        dest="per_document",
        action="store_false",
        help="every matching chunk its own hit, files repeated",
    )


def _json_line(hit: SearchHit) -> str:
    return json.dumps(
        {
            "source_id": hit.source_id,
            "path": hit.path,
            "title": hit.title,
            "page_start": hit.page_start,
            "page_end": hit.page_end,
            "breadcrumb": hit.breadcrumb,
            "score": hit.score,
            "chunk_id": hit.chunk_id,
            "media_type": hit.media_type,
            "content": hit.content,
            "parent_content": hit.parent_content,
            "more_in_document": hit.more_in_document,
            "also_in": list(hit.also_in),
            "boxes": [box._asdict() for box in hit.boxes],
        },
        ensure_ascii=False,
    )


def _block(number: int, hit: SearchHit, query: str, searcher: Searcher, ansi: bool) -> str:
    marks = ANSI_MARKS if ansi else PLAIN_MARKS
    page = ""
    if hit.page_start is not None:
        same = hit.page_end in (None, hit.page_start)
        page = f"  p.{hit.page_start}" if same else f"  pp.{hit.page_start}-{hit.page_end}"
    lines = [f"{number}. {hit.source_id}:{hit.path}{page}  score {hit.score:.4f}"]
    if hit.title:
        lines.append("   title: " + highlight(hit.title, query, marks, searcher.stem))
    if hit.breadcrumb:
        lines.append(f"   {hit.breadcrumb}")
    lines.append("   " + snippet(hit.content, query, marks, searcher.stem))
    if hit.parent_content:
        parent = snippet(hit.parent_content, query, marks, searcher.stem, _PARENT_CHARS)
        lines.append(f"   parent: {parent}")
    if hit.more_in_document:
        lines.append(f"   +{hit.more_in_document} more in this file")
    if hit.also_in:
        own = f"{hit.source_id}:"  # files of the hit's own source are named by path
        names = [name.removeprefix(own) for name in hit.also_in]
        lines.append("   also in: " + ", ".join(names))
    return "\n".join(lines)


def print_hits(
    hits: list[SearchHit], query: str, searcher: Searcher, fmt: str, out: TextIO
) -> None:
    """Write `hits` to `out` in `fmt` (bold marks when `out` is a terminal)."""
    if fmt == "jsonl":
        for hit in hits:
            out.write(_json_line(hit) + "\n")
        return
    if not hits:
        out.write("no match\n")
        return
    ansi = out.isatty()
    out.write("\n\n".join(_block(n, h, query, searcher, ansi) for n, h in enumerate(hits, 1)))
    out.write("\n")


def _configured_embedder(mode: str) -> Embedder | None:
    """The asset's embedder, from the environment (none is built for a BM25 search)."""
    return None if mode == "bm25" else make_embedder(EmbedderConfig.from_environ())


def _stored_vectors(root: Path) -> int:
    """The current chunks of the store that have a vector (of any model)."""
    # Imported here: the CLI's parser imports this module for every command, and the store
    # brings pyarrow, which `query` never loads.
    from content_core.store import CHUNK_EMBEDDINGS, ContentStore

    rows = (
        ContentStore(root)
        .query(f"SELECT count(*) AS n FROM current_{CHUNK_EMBEDDINGS} WHERE embedding IS NOT NULL")
        .to_pylist()
    )
    return int(rows[0]["n"]) if rows else 0


def _without_vectors(mode: str, embedder: Embedder | None, root: Path) -> str | None:
    """Why a vector or hybrid search cannot use vectors here (None: it can): embeddings are
    off in this environment, or the store holds none."""
    if mode == "bm25":
        return None
    if embedder is None:
        return "embeddings are off here (install the embeddings extra, or set CONTENT_EMBEDDER)"
    if not _stored_vectors(root):
        return (
            f"there are no embeddings in this store ({root}); ingest with embeddings on "
            "(the embeddings extra installed) to make them"
        )
    return None


def search_command(args: argparse.Namespace, store: Path | str | None) -> int:
    """The `search` subcommand; returns the exit code (1: the search failed, 2: no store, or
    an `s3://` store, whose search index this command does not build)."""
    try:
        uri = object_store(store)
        if uri is not None:
            raise ObjectStoreNotSupportedError("search", uri)
        root = existing_store(store)
    except (StoreNotFoundError, ObjectStoreNotSupportedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    page_from, page_to = args.page or (None, None)
    filters = SearchFilters(
        source_id=args.source_id,
        path_prefix=args.path_prefix,
        media_type=args.media_type,
        page_from=page_from,
        page_to=page_to,
    )
    try:
        embedder = _configured_embedder(args.mode)
    except (ValidationError, ValueError) as exc:  # a bad CONTENT_EMBED* variable
        print(f"error: the embedder configuration: {exc}", file=sys.stderr)
        return 1
    try:
        missing = _without_vectors(args.mode, embedder, root)
    except ContentError as exc:  # an unreadable store
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if missing is not None and args.mode == "vector":
        print(f"error: no vector search: {missing}", file=sys.stderr)
        return 1
    mode = args.mode
    if missing is not None:  # hybrid: the keyword half alone, said once on stderr
        print(f"note: hybrid search is BM25 only: {missing}", file=sys.stderr)
        mode = "bm25"
    # One search: a Parquet scan costs less than loading every vector into memory first.
    with Searcher(root, embedder, hold_vectors=False) as searcher:
        try:
            hits = searcher.search(
                args.text, args.k, mode, filters, per_document=args.per_document
            )
        except ContentError as exc:  # no fts package, no vectors, an unreadable store
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print_hits(hits, args.text, searcher, args.format, sys.stdout)
    return 0
