"""raw_files: the file versions of an ingest batch."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.resources import ContentStoreResource
from content_core import pipeline
from content_core.store import RAW_FILES


@table_asset(RAW_FILES)
def raw_files(
    context: dg.AssetExecutionContext, config: BatchChecksConfig, store: ContentStoreResource
) -> Iterator[TableEvent]:
    """One row per file version in the batch (added, modified or deleted), keyed by source_id
    and path, with its SHA-256 (bytes pinned in the blob store at discovery) and the media type
    sniffed from its bytes. Written once per batch; `current_raw_files` keeps each file's latest
    version and drops deleted files."""
    yield from write_and_check(
        RAW_FILES, context, config, store,
        lambda: pipeline.build_raw_files(store.get_store(), context.partition_key),
    )
