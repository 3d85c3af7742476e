"""The batch job: all six assets of one ingest batch, in one process."""

import dagster as dg

from content_assets.assets import ALL_ASSETS
from content_assets.partitions import ingest_batches

# In process: a step subprocess costs about a second here, more than most stages take.
ingest_batch_job = dg.define_asset_job(
    "ingest_batch_job",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    partitions_def=ingest_batches,
    executor_def=dg.in_process_executor,
    description="Materialise every table of one ingest batch.",
)
