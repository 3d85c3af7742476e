"""agentic_extractions and merged_extractions: the agent's output per chunk and per document."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.assets.chunk_embeddings import chunk_embeddings
from content_assets.assets.chunks import chunks
from content_assets.assets.compressed_contexts import compressed_contexts
from content_assets.assets.message_parts import message_parts
from content_assets.assets.search_index import search_index
from content_assets.resources import AgentResource, ContentStoreResource, NormaliserResource
from content_core import pipeline
from content_core.store import AGENTIC_EXTRACTIONS, MERGED_EXTRACTIONS


@table_asset(
    AGENTIC_EXTRACTIONS, deps=[chunks], retry_policy=dg.RetryPolicy(max_retries=2, delay=10)
)
def agentic_extractions(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    agent: AgentResource,
    normaliser: NormaliserResource,
) -> Iterator[TableEvent]:
    """One row per chunk and extraction schema: the agent's validated JSON output, the model,
    the cache key, and the tokens it cost. Outputs are cached by chunk text, schema, model and
    prompt, so a rerun with nothing changed makes no agent call."""
    # The offline agent runs in the normaliser's worker pool (its workers and memory cap).
    yield from write_and_check(
        AGENTIC_EXTRACTIONS, context, config, store,
        lambda: pipeline.build_extractions(
            store.get_store(), context.partition_key, agent.to_core(), pool=normaliser.to_core()
        ),
    )


@table_asset(
    MERGED_EXTRACTIONS,
    # Last in every run: it marks the batch finished, so every other stage must be done by then
    # (a compression, embedding or index step still failing keeps the batch pending).
    deps=[agentic_extractions, chunk_embeddings, compressed_contexts, message_parts, search_index],
)
def merged_extractions(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    agent: AgentResource,
) -> Iterator[TableEvent]:
    """One row per document and schema: the per-chunk outputs merged by the configured strategy,
    with provenance saying which chunk gave which item."""
    yield from write_and_check(
        MERGED_EXTRACTIONS, context, config, store,
        lambda: pipeline.build_merged_extractions(
            store.get_store(), context.partition_key, agent.to_core()
        ),
    )
