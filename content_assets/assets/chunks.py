"""chunks: documents split to exact token budgets."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.assets.normalised_artifacts import normalised_artifacts
from content_assets.resources import ChunkerResource, ContentStoreResource, NormaliserResource
from content_core import pipeline
from content_core.store import CHUNKS


@table_asset(CHUNKS, deps=[normalised_artifacts])
def chunks(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    chunker: ChunkerResource,
    normaliser: NormaliserResource,
) -> Iterator[TableEvent]:
    """One row per chunk of every artifact with text: content, exact character offsets into the
    artifact text (`source_start`, `source_end`), page, breadcrumb, exact cl100k token count and
    the chunker's fingerprint. Chunk ids are stable across reruns."""
    # Chunkers run in the normaliser's worker pool (its workers and memory cap).
    yield from write_and_check(
        CHUNKS, context, config, store,
        lambda: pipeline.build_chunks(
            store.get_store(), context.partition_key, chunker.to_core(), pool=normaliser.to_core()
        ),
    )
