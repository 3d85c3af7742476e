"""search_index: the batch's chunks in the store's BM25 index (`search.duckdb`)."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets.chunks import chunks
from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource
from content_core import pipeline


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"duckdb"},
    deps=[chunks],
)
def search_index(context: dg.AssetExecutionContext, store: ContentStoreResource) -> AssetResult:
    """The keyword (BM25) index of every current chunk, in `<store>/search.duckdb`: this
    batch's chunks are added and the chunks of the files it replaced or deleted removed, without
    re-indexing other batches, so a batch is searchable as soon as this partition is
    materialised. `content-pipeline search`, `RAG` and `Searcher` read it."""
    return to_result(pipeline.build_search_index(store.get_store(), context.partition_key))
