"""compressed_contexts: each document fitted to a token budget."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.assets.normalised_artifacts import normalised_artifacts
from content_assets.resources import (
    CompressorResource,
    ContentStoreResource,
    NormaliserResource,
)
from content_core import pipeline
from content_core.store import COMPRESSED_CONTEXTS


@table_asset(COMPRESSED_CONTEXTS, deps=[normalised_artifacts])
def compressed_contexts(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    compressor: CompressorResource,
    normaliser: NormaliserResource,
) -> Iterator[TableEvent]:
    """One row per document (artifact with text): its text compressed to `max_tokens` by the
    configured strategy, with the token counts before and after."""
    # Compression runs in the normaliser's worker pool (its workers and memory cap).
    yield from write_and_check(
        COMPRESSED_CONTEXTS, context, config, store,
        lambda: pipeline.build_compressed_contexts(
            store.get_store(), context.partition_key, compressor.to_core(),
            pool=normaliser.to_core(),
        ),
    )
