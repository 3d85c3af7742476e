"""chunk_embeddings: a vector per chunk, for vector search."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import table_metadata
from content_assets.assets.chunks import chunks
from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource, EmbedderResource, NormaliserResource
from content_core.ingest import build_chunk_embeddings
from content_core.store import CHUNK_EMBEDDINGS


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    deps=[chunks],
    metadata=table_metadata(CHUNK_EMBEDDINGS),
    # An endpoint down through its own retries fails the step: retry it later, whole.
    retry_policy=dg.RetryPolicy(max_retries=2, delay=10),
)
def chunk_embeddings(
    context: dg.AssetExecutionContext,
    store: ContentStoreResource,
    embedder: EmbedderResource,
    normaliser: NormaliserResource,
) -> AssetResult:
    """One row per chunk: its vector (`FLOAT[n]`) from the configured embedder, the model and
    dimension, or the error that chunk met. Vectors are cached by chunk text, model and
    dimension, so a rerun with nothing changed makes no embedding call."""
    # A local model computes in the normaliser's worker pool (its workers and memory cap).
    report = build_chunk_embeddings(
        store.get_store(), context.partition_key, embedder.to_core(), pool=normaliser.to_core()
    )
    return to_result(report)
