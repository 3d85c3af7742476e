"""agentic_extractions and merged_extractions: the agent's output per chunk and per document."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import table_metadata
from content_assets.assets.chunk_embeddings import chunk_embeddings
from content_assets.assets.chunks import chunks
from content_assets.assets.compressed_contexts import compressed_contexts
from content_assets.assets.message_parts import message_parts
from content_assets.assets.search_index import search_index
from content_assets.partitions import ingest_batches
from content_assets.resources import AgentResource, ContentStoreResource, NormaliserResource
from content_core.ingest import build_extractions, build_merged_extractions
from content_core.store import AGENTIC_EXTRACTIONS, MERGED_EXTRACTIONS


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    deps=[chunks],
    metadata=table_metadata(AGENTIC_EXTRACTIONS),
    retry_policy=dg.RetryPolicy(max_retries=2, delay=10),
)
def agentic_extractions(
    context: dg.AssetExecutionContext,
    store: ContentStoreResource,
    agent: AgentResource,
    normaliser: NormaliserResource,
) -> AssetResult:
    """One row per chunk and extraction schema: the agent's validated JSON output, the model,
    the cache key, and the tokens it cost. Outputs are cached by chunk text, schema, model and
    prompt, so a rerun with nothing changed makes no agent call."""
    # The offline agent runs in the normaliser's worker pool (its workers and memory cap).
    report = build_extractions(
        store.get_store(), context.partition_key, agent.to_core(), pool=normaliser.to_core()
    )
    return to_result(report)


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    # Last in every run: it marks the batch finished, so every other stage must be done by then
    # (a compression, embedding or index step still failing keeps the batch pending).
    deps=[agentic_extractions, chunk_embeddings, compressed_contexts, message_parts, search_index],
    metadata=table_metadata(MERGED_EXTRACTIONS),
)
def merged_extractions(
    context: dg.AssetExecutionContext, store: ContentStoreResource, agent: AgentResource
) -> AssetResult:
    """One row per document and schema: the per-chunk outputs merged by the configured strategy,
    with provenance saying which chunk gave which item."""
    report = build_merged_extractions(store.get_store(), context.partition_key, agent.to_core())
    return to_result(report)
