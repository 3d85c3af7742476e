"""What the sensor, the schedule and the CLI share: one discovery call and the cursor."""

import json

from content_assets.partitions import INGEST_BATCHES
from content_assets.resources import ContentStoreResource, SourceFolderResource
from content_core.ingest import PendingBatches, discover_pending

# Under the sensor's 60 s evaluation limit, with room for Dagster's own work.
TICK_BUDGET_S = 40.0


def pending_batches(
    instance_partitions: list[str],
    store: ContentStoreResource,
    source_folder: SourceFolderResource,
    time_budget_s: float = TICK_BUDGET_S,
) -> PendingBatches:
    """Discover the watched folder and list the batches that need a run."""
    return discover_pending(
        source_folder.get_source(),
        store.get_store(),
        set(instance_partitions),
        max_batch_files=source_folder.max_batch_files,
        time_budget_s=time_budget_s,
    )


def cursor_for(found: PendingBatches, previous: str | None) -> str:
    """A small JSON cursor: the newest batch seen and whether changes are left for next tick.

    The state itself lives in the store, so the cursor stays tiny whatever the folder size.
    """
    last = json.loads(previous)["last_batch"] if previous else None
    newest = found.batch_ids[-1] if found.batch_ids else last
    return json.dumps({"last_batch": newest, "has_more": found.has_more}, sort_keys=True)


__all__ = ["INGEST_BATCHES", "TICK_BUDGET_S", "cursor_for", "pending_batches"]
