"""normalised_artifacts: every raw file fanned out into artifacts with extracted text."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.assets.raw_files import raw_files
from content_assets.resources import ContentStoreResource, NormaliserResource
from content_core import pipeline
from content_core.store import NORMALISED_ARTIFACTS


@table_asset(NORMALISED_ARTIFACTS, deps=[raw_files])
def normalised_artifacts(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    normaliser: NormaliserResource,
) -> Iterator[TableEvent]:
    """One row per artifact: the raw file itself, archive members, email bodies and attachments,
    converted images and Office renders, each with `derived_from` back to its raw file, its
    media type, page count and extracted text. A file that cannot be read is a row with
    `error_type` and `error_message` set; the rest of the batch goes on."""
    yield from write_and_check(
        NORMALISED_ARTIFACTS, context, config, store,
        lambda: pipeline.build_normalised_artifacts(
            store.get_store(), context.partition_key, normaliser.to_core()
        ),
    )
