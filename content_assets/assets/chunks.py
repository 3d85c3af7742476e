"""chunks: documents split to exact token budgets."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import table_metadata
from content_assets.assets.normalised_artifacts import normalised_artifacts
from content_assets.partitions import ingest_batches
from content_assets.resources import ChunkerResource, ContentStoreResource, NormaliserResource
from content_core.ingest import build_chunks
from content_core.store import CHUNKS


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    deps=[normalised_artifacts],
    metadata=table_metadata(CHUNKS),
)
def chunks(
    context: dg.AssetExecutionContext,
    store: ContentStoreResource,
    chunker: ChunkerResource,
    normaliser: NormaliserResource,
) -> AssetResult:
    """One row per chunk of every artifact with text: content, exact character offsets into the
    artifact text (`source_start`, `source_end`), page, breadcrumb, exact cl100k token count and
    the chunker's fingerprint. Chunk ids are stable across reruns."""
    # Chunkers run in the normaliser's worker pool (its workers and memory cap).
    report = build_chunks(
        store.get_store(), context.partition_key, chunker.to_core(), pool=normaliser.to_core()
    )
    return to_result(report)
