"""compressed_contexts: each document fitted to a token budget."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import table_metadata
from content_assets.assets.normalised_artifacts import normalised_artifacts
from content_assets.partitions import ingest_batches
from content_assets.resources import (
    CompressorResource,
    ContentStoreResource,
    NormaliserResource,
)
from content_core.ingest import build_compressed_contexts
from content_core.store import COMPRESSED_CONTEXTS


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    deps=[normalised_artifacts],
    metadata=table_metadata(COMPRESSED_CONTEXTS),
)
def compressed_contexts(
    context: dg.AssetExecutionContext,
    store: ContentStoreResource,
    compressor: CompressorResource,
    normaliser: NormaliserResource,
) -> AssetResult:
    """One row per document (artifact with text): its text compressed to `max_tokens` by the
    configured strategy, with the token counts before and after."""
    # Compression runs in the normaliser's worker pool (its workers and memory cap).
    report = build_compressed_contexts(
        store.get_store(), context.partition_key, compressor.to_core(), pool=normaliser.to_core()
    )
    return to_result(report)
