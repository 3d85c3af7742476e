"""chunk_embeddings: a vector per chunk, for vector search."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.assets.chunks import chunks
from content_assets.resources import ContentStoreResource, EmbedderResource, NormaliserResource
from content_core import pipeline
from content_core.store import CHUNK_EMBEDDINGS


# An endpoint down through its own retries fails the step: retry it later, whole.
@table_asset(CHUNK_EMBEDDINGS, deps=[chunks], retry_policy=dg.RetryPolicy(max_retries=2, delay=10))
def chunk_embeddings(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    embedder: EmbedderResource,
    normaliser: NormaliserResource,
) -> Iterator[TableEvent]:
    """One row per chunk: its vector (`FLOAT[n]`) from the configured embedder, the model and
    dimension, or the error that chunk met. Vectors are cached by chunk text, model and
    dimension, so a rerun with nothing changed makes no embedding call."""
    # A local model computes in the normaliser's worker pool (its workers and memory cap).
    yield from write_and_check(
        CHUNK_EMBEDDINGS, context, config, store,
        lambda: pipeline.build_chunk_embeddings(
            store.get_store(), context.partition_key, embedder.to_core(), pool=normaliser.to_core()
        ),
    )
