"""hourly_ingest_batch_job_schedule: the same discovery on cron, for ingests at set hours."""

import dagster as dg

from content_assets.jobs import ingest_batch_job
from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import ContentStoreResource, SourceResource
from content_assets.triggers import batch_run_requests, pending_batches


@dg.schedule(
    job=ingest_batch_job,
    cron_schedule="0 * * * *",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Hourly discovery of the source (stopped by default; the sensor runs).",
)
def hourly_ingest_batch_job_schedule(
    context: dg.ScheduleEvaluationContext,
    store: ContentStoreResource,
    source: SourceResource,
) -> list[dg.RunRequest] | dg.SkipReason:
    """Schedules cannot return partition requests, so new partitions are added directly.

    The same discovery and run requests as the sensor: every unfinished batch without a live
    run, so a batch whose run died an hour ago is retried too.
    """
    found = pending_batches(
        list(context.instance.get_dynamic_partitions(INGEST_BATCHES)), store, source
    )
    if found.new_batch_ids:
        context.instance.add_dynamic_partitions(INGEST_BATCHES, list(found.new_batch_ids))
    requests = batch_run_requests(context.instance, ingest_batch_job.name, found.batch_ids)
    if not requests:
        return dg.SkipReason(f"nothing to run after scanning {found.scanned} files")
    return requests
