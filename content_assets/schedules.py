"""hourly_ingest_batch_job_schedule: the same discovery on cron, for ingests at set hours."""

import dagster as dg

from content_assets.jobs import ingest_batch_job
from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import ContentStoreResource, SourceFolderResource
from content_assets.triggers import pending_batches


@dg.schedule(
    job=ingest_batch_job,
    cron_schedule="0 * * * *",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Hourly discovery of the source folder (stopped by default; the sensor runs).",
)
def hourly_ingest_batch_job_schedule(
    context: dg.ScheduleEvaluationContext,
    store: ContentStoreResource,
    source_folder: SourceFolderResource,
) -> list[dg.RunRequest] | dg.SkipReason:
    """Schedules cannot return partition requests, so new partitions are added directly."""
    found = pending_batches(
        context.instance.get_dynamic_partitions(INGEST_BATCHES), store, source_folder
    )
    if not found.new_batch_ids:
        return dg.SkipReason(f"no new batch in {found.scanned} files")
    context.instance.add_dynamic_partitions(INGEST_BATCHES, list(found.new_batch_ids))
    return [dg.RunRequest(partition_key=b, run_key=b) for b in found.new_batch_ids]
