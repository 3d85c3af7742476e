"""The asset checks of every pipeline table, built from content_core's rules (BATCH_CHECKS):
unique keys, coverage of the upstream rows, and a failure ratio under a threshold.

Each table's checks run as one step after its asset, on the same ingest batch, and read the
stored rows; they can be run again alone from the UI for any partition.
"""

import warnings
from collections.abc import Iterator

import dagster as dg
from pydantic import Field

from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource
from content_core.ingest import BATCH_CHECKS, check_batch

_SEVERITY = {"warn": dg.AssetCheckSeverity.WARN, "error": dg.AssetCheckSeverity.ERROR}


class BatchChecksConfig(dg.Config):
    """Thresholds of the batch checks (set in the launchpad)."""

    max_failure_ratio: float = Field(
        default=0.5, ge=0, le=1, description="Highest share of failure rows a batch may hold."
    )


def _specs(table: str) -> list[dg.AssetCheckSpec]:
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
            for rule in BATCH_CHECKS[table]
        ]


def build_table_checks(table: str) -> dg.AssetChecksDefinition:
    """One step running every check of `table` on the batch of the run's partition."""

    @dg.multi_asset_check(name=f"{table}_checks", specs=_specs(table))
    def table_checks(
        context: dg.AssetCheckExecutionContext,
        config: BatchChecksConfig,
        store: ContentStoreResource,
    ) -> Iterator[dg.AssetCheckResult]:
        outcomes = check_batch(
            store.get_store(),
            table,
            context.partition_key,
            max_failure_ratio=config.max_failure_ratio,
        )
        for outcome in outcomes:
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

    return table_checks
