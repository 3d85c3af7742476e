"""message_parts: each artifact as the parts of a message for a vision-capable model."""

from collections.abc import Iterator

import dagster as dg

from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.assets.normalised_artifacts import normalised_artifacts
from content_assets.resources import (
    ContentStoreResource,
    MessagePartsResource,
    NormaliserResource,
)
from content_core import pipeline
from content_core.store import MESSAGE_PARTS


@table_asset(MESSAGE_PARTS, deps=[normalised_artifacts])
def message_parts(
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    parts: MessagePartsResource,
    normaliser: NormaliserResource,
) -> Iterator[TableEvent]:
    """One row per part of each artifact's message for a vision-capable model, in order
    (`part_index`): an image as an `image_url` data URL (then its OCR text), a PDF's pages as
    images when `pdf` is "pages" (CONTENT_MESSAGE_PDF), any other text as a `text` part. Read
    an artifact's parts in order and send them as one user message."""
    # Parts are made in the normaliser's worker pool (its workers and memory cap).
    yield from write_and_check(
        MESSAGE_PARTS, context, config, store,
        lambda: pipeline.build_message_parts(
            store.get_store(), context.partition_key, parts.to_core(), pool=normaliser.to_core()
        ),
    )
