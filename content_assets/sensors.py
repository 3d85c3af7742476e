"""source_sensor: turns changes in the watched source into ingest batches and runs."""

import dagster as dg

from content_assets.jobs import ingest_batch_job
from content_assets.partitions import INGEST_BATCHES, ingest_batches
from content_assets.resources import ContentStoreResource, SourceResource
from content_assets.triggers import batch_run_requests, cursor_for, pending_batches


@dg.sensor(
    job=ingest_batch_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Discovers added, modified and deleted files in the source; one batch "
    "partition per at most max_batch_files changes, one run per batch (retried with a new run "
    "key when a run failed or its worker died).",
)
def source_sensor(
    context: dg.SensorEvaluationContext,
    store: ContentStoreResource,
    source: SourceResource,
) -> dg.SensorResult:
    """Manifests first (in discovery), then partitions and runs, then the cursor.

    A tick killed at any point repeats work on the next one but loses nothing: the manifests
    are the state, and every unfinished batch without a live run is requested again.
    """
    found = pending_batches(
        list(context.instance.get_dynamic_partitions(INGEST_BATCHES)), store, source
    )
    cursor = cursor_for(found)
    requests = batch_run_requests(context.instance, ingest_batch_job.name, found.batch_ids)
    partitions = (
        [ingest_batches.build_add_request(list(found.new_batch_ids))] if found.new_batch_ids else []
    )
    if not requests and not partitions:
        reason = f"no change in {found.scanned} files"
        if found.batch_ids:
            reason = f"{len(found.batch_ids)} batch(es) under way or waiting for a manual rerun"
        return dg.SensorResult(skip_reason=reason, cursor=cursor)
    return dg.SensorResult(
        run_requests=requests, dynamic_partitions_requests=partitions, cursor=cursor
    )
