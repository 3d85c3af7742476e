"""normalised_artifacts: every raw file fanned out into artifacts with extracted text."""

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import table_metadata
from content_assets.assets.raw_files import raw_files
from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource, NormaliserResource
from content_core.ingest import build_normalised_artifacts
from content_core.store import NORMALISED_ARTIFACTS


@dg.asset(
    partitions_def=ingest_batches,
    group_name="content",
    kinds={"parquet", "duckdb"},
    deps=[raw_files],
    metadata=table_metadata(NORMALISED_ARTIFACTS),
)
def normalised_artifacts(
    context: dg.AssetExecutionContext, store: ContentStoreResource, normaliser: NormaliserResource
) -> AssetResult:
    """One row per artifact: the raw file itself, archive members, email bodies and attachments,
    converted images and Office renders, each with `derived_from` back to its raw file, its
    media type, page count and extracted text. A file that cannot be read is a row with
    `error_type` and `error_message` set; the rest of the batch goes on."""
    report = build_normalised_artifacts(
        store.get_store(), context.partition_key, normaliser.to_core()
    )
    return to_result(report)
