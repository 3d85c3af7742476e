"""The asset of a stage: its table (partitioned by ingest batch, with the table's checks in the
same step) or, for a stage that writes no table of rows, a plain asset; the resources it takes
are the stage's `uses`, one resource per part of `PipelineConfig`."""

import inspect
import warnings
from collections.abc import Iterator
from typing import Any

import dagster as dg

from content_assets.assets._result import AssetResult, to_result
from content_assets.assets._table import TableEvent, table_asset, write_and_check
from content_assets.assets.checks import BatchChecksConfig
from content_assets.partitions import ingest_batches
from content_core.pipeline import Batch, PipelineConfig, Stage, all_stages

__all__ = ["RESOURCE_OF", "stage_asset"]

# The resource that configures each part of PipelineConfig (its `to_core()` is that part).
RESOURCE_OF: dict[str, str] = {
    "processing": "normaliser",
    "chunking": "chunker",
    "compression": "compressor",
    "agent": "agent",
    "embedder": "embedder",
    "message_parts": "parts",
}
# A stage that may fail for a while (an endpoint): its step is retried.
_RETRY = dg.RetryPolicy(max_retries=2, delay=10)


def _batch(stage: Stage, context: dg.AssetExecutionContext) -> Batch:
    """The batch of this partition, configured from the resources the stage uses."""
    resources: Any = context.resources  # Any: Dagster's resources object, keyed by name
    config = PipelineConfig(
        **{part: getattr(resources, RESOURCE_OF[part]).to_core() for part in stage.uses}
    )
    return Batch(resources.store.get_store(), context.partition_key, config)


def _deps(stage: Stage) -> list[dg.AssetKey]:
    if stage.finishes:
        # It marks the batch finished, so every other stage must be done by then (a stage
        # still failing keeps the batch pending).
        return [dg.AssetKey(other.table) for other in all_stages() if other is not stage]
    return [dg.AssetKey(table) for table in stage.deps]


def _code_reference(stage: Stage) -> dict[str, object]:
    """The UI's link to the stage's own module (where its `build` is), not to this generator."""
    path = inspect.getsourcefile(stage.build)
    if path is None:
        return {}
    line = inspect.getsourcelines(stage.build)[1]
    # Code references are a Dagster beta; its warning would print on every load.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        reference = dg.LocalFileCodeReference(file_path=path, line_number=line)
        value = dg.CodeReferencesMetadataValue(code_references=[reference])
    return {"dagster/code_references": value}


def stage_asset(stage: Stage) -> dg.AssetsDefinition:
    """The asset of `stage`."""
    keys = {"store", *(RESOURCE_OF[part] for part in stage.uses)}
    if stage.row is None:

        def plain(context: dg.AssetExecutionContext) -> AssetResult:
            return to_result(stage.build(_batch(stage, context)))

        plain.__doc__ = stage.description
        return dg.asset(
            name=stage.table,
            partitions_def=ingest_batches,
            group_name="content",
            kinds={"duckdb"},
            deps=_deps(stage),
            required_resource_keys=keys,
            metadata=_code_reference(stage),
        )(plain)

    def body(context: dg.AssetExecutionContext, config: BatchChecksConfig) -> Iterator[TableEvent]:
        batch = _batch(stage, context)
        yield from write_and_check(
            stage.table, context, config, context.resources.store, lambda: stage.write(batch)
        )

    body.__doc__ = stage.description
    return table_asset(
        stage.table,
        deps=_deps(stage),
        retry_policy=_RETRY if stage.retry else None,
        required_resource_keys=keys,
        metadata=_code_reference(stage),
    )(body)
