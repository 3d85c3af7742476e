"""The batch job: every asset of one ingest batch, in one process."""

import dagster as dg

from content_assets.assets import ALL_ASSETS

# In process: a step subprocess costs about a second here, more than most stages take.
ingest_batch_job = dg.define_asset_job(
    "ingest_batch_job",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    executor_def=dg.in_process_executor,
    description="Materialise every table of one ingest batch.",
)
