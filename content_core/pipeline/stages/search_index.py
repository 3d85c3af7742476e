"""search_index: the batch's chunks added to the store's BM25 index, and the rows of the
files it replaced or deleted dropped; it runs beside the stages after chunks."""

from __future__ import annotations

from content_core.pipeline.report import StageReport
from content_core.pipeline.stage import Batch, Stage
from content_core.search.index import INDEX_FILE, update_index
from content_core.store import ContentStore

__all__ = ["SEARCH_INDEX", "build_search_index"]

# The stage's name (the asset's): not a table of the store, a file beside the catalog.
SEARCH_INDEX = "search_index"


def build_search_index(store: ContentStore, batch_id: str) -> StageReport:
    """Apply `batch_id` to `<store>/search.duckdb` incrementally (see `search.index`).

    Raises:
        SearchError: the store's tables could not be read or the index written.
        MissingDependencyError: the `fts` extension package (for `stem`) is missing.
    """
    update = update_index(store, batch_id)
    return StageReport(
        table=SEARCH_INDEX,
        batch_id=batch_id,
        rows=update.docs_added,
        figures={
            "index_file": INDEX_FILE,
            "full_build": int(update.full_build),
            "batches_applied": len(update.batches),
            "docs_added": update.docs_added,
            "docs_removed": update.docs_removed,
            "postings_added": update.postings_added,
            "index_docs": update.docs,
            "index_postings": update.postings,
            "seconds": round(update.seconds, 3),
        },
        preview_markdown=(
            f"{update.docs_added} chunks added, {update.docs_removed} removed; the index holds "
            f"{update.docs} ({'built anew' if update.full_build else 'updated in place'})"
        ),
    )


def _build(batch: Batch) -> StageReport:
    return build_search_index(batch.store, batch.batch_id)


STAGE = Stage(
    table=SEARCH_INDEX,
    row=None,
    build=_build,
    deps=("chunks",),
    description=(
        "The keyword (BM25) index of every current chunk, in `<store>/search.duckdb`: this "
        "batch's chunks are added and the chunks of the files it replaced or deleted removed, "
        "without re-indexing other batches, so a batch is searchable as soon as this "
        "partition is materialised. `content-pipeline search`, `RAG` and `Searcher` read it."
    ),
    beside=True,
)
