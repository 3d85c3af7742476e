"""compact_store_job: merge the many small per-batch Parquet files into one file per table.

No query result changes while it runs or after (see `content_core.store.compact_store`; a
query that starts just as old files are deleted can fail once and must be rerun, so the daily
schedule runs at a quiet hour). The schedule is stopped by default: a user turns it on or
runs the job by hand.
"""

import dagster as dg

from content_assets.resources import ContentStoreResource
from content_core.store import compact_store


@dg.op(description="Compact every table of the content store and sweep stale temporary files.")
def compact_store_op(context: dg.OpExecutionContext, store: ContentStoreResource) -> None:
    """Fold per-batch files into one compacted file per table; log what each table became."""
    for report in compact_store(store.get_store()):
        rows = f", {report.rows} rows" if report.rows >= 0 else " (too few files, left as is)"
        context.log.info(
            f"{report.table}: {report.files_before} -> {report.files_after} files{rows}"
        )


@dg.job(
    executor_def=dg.in_process_executor,
    description="Merge small per-batch Parquet files into one file per table; no query result "
    "changes, and batches may run meanwhile.",
)
def compact_store_job() -> None:
    """The single compaction op."""
    compact_store_op()


daily_compact_store_job_schedule = dg.ScheduleDefinition(
    name="daily_compact_store_job_schedule",
    job=compact_store_job,
    cron_schedule="30 3 * * *",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily compaction of the content store at 03:30 (stopped by default).",
)
