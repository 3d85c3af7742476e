"""source_folder_sensor: turns changes in the watched folder into ingest batches and runs."""

import dagster as dg

from content_assets.jobs import ingest_batch_job
from content_assets.partitions import INGEST_BATCHES, ingest_batches
from content_assets.resources import ContentStoreResource, SourceFolderResource
from content_assets.triggers import cursor_for, pending_batches


@dg.sensor(
    job=ingest_batch_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Discovers added, modified and deleted files in the source folder; one batch "
    "partition and one run per discovery that found changes.",
)
def source_folder_sensor(
    context: dg.SensorEvaluationContext,
    store: ContentStoreResource,
    source_folder: SourceFolderResource,
) -> dg.SensorResult:
    """Manifest first (in discovery), then partitions and runs, then the cursor."""
    found = pending_batches(
        context.instance.get_dynamic_partitions(INGEST_BATCHES), store, source_folder
    )
    cursor = cursor_for(found, context.cursor)
    if not found.batch_ids:
        return dg.SensorResult(skip_reason=f"no change in {found.scanned} files", cursor=cursor)
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=b, run_key=b) for b in found.batch_ids],
        dynamic_partitions_requests=[ingest_batches.build_add_request(list(found.new_batch_ids))],
        cursor=cursor,
    )
