"""raw_files: the file versions of an ingest batch."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import table_metadata
from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource
from content_core.ingest import build_raw_files
from content_core.store import RAW_FILES


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    metadata=table_metadata(RAW_FILES),
)
def raw_files(
    context: dg.AssetExecutionContext, store: ContentStoreResource
) -> AssetResult:
    """One row per file version in the batch (added, modified or deleted), keyed by source_id
    and path, with its SHA-256 (bytes pinned in the blob store at discovery) and the media type
    sniffed from its bytes. Written once per batch; `current_raw_files` keeps each file's latest
    version and drops deleted files."""
    return to_result(build_raw_files(store.get_store(), context.partition_key))
