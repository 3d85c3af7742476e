"""The asset checks of every pipeline table, built from content_core.s rules (each stage.s checks):
unique keys, coverage of the upstream rows, and a failure ratio under a threshold.

A table's checks run in its asset's step, right after the batch's rows are written (a step of
its own cost a distributed run about a tenth of a second of worker time per table and batch,
more than most checks take). They can also run alone from the UI for any partition: select
the checks without the asset, and the step reads the stored rows and writes nothing.
"""

import warnings
from collections.abc import Iterator

import dagster as dg
from pydantic import Field

from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource
from content_core.pipeline import batch_checks, check_batch

_SEVERITY = {"warn": dg.AssetCheckSeverity.WARN, "error": dg.AssetCheckSeverity.ERROR}


class BatchChecksConfig(dg.Config):
    """Thresholds of the batch checks (set in the launchpad)."""

    max_failure_ratio: float = Field(
        default=0.5, ge=0, le=1, description="Highest share of failure rows a batch may hold."
    )


def check_specs(table: str) -> list[dg.AssetCheckSpec]:
    """The checks of `table`, one per rule, per ingest batch."""
    # Checks per ingest batch are a Dagster preview; the warning would print on every load.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return [
            dg.AssetCheckSpec(
                rule.name,
                asset=table,
                description=rule.description,
                partitions_def=ingest_batches,
            )
            for rule in batch_checks().get(table, ())
        ]


def check_results(
    table: str,
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
) -> Iterator[dg.AssetCheckResult]:
    """The results of the checks of `table` selected in this run, on the stored rows of the
    run's batch."""
    selected = {key.name for key in context.selected_asset_check_keys}
    if not selected:
        return
    outcomes = check_batch(
        store.get_store(),
        table,
        context.partition_key,
        max_failure_ratio=config.max_failure_ratio,
    )
    for outcome in outcomes:
        if outcome.name not in selected:
            continue
        yield dg.AssetCheckResult(
            asset_key=table,
            check_name=outcome.name,
            passed=outcome.passed,
            severity=_SEVERITY[outcome.severity],
            metadata={
                **outcome.figures,
                **({"examples": ", ".join(outcome.examples)} if outcome.examples else {}),
            },
        )
