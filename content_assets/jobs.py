"""The batch job: every asset of one ingest batch, in the Definitions' executor (in
process by default, Celery workers with CONTENT_EXECUTOR=celery:
content_assets.distributed.executors)."""

import dagster as dg

from content_assets.assets import ALL_ASSETS

ingest_batch_job = dg.define_asset_job(
    "ingest_batch_job",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    description="Materialise every table of one ingest batch.",
)
