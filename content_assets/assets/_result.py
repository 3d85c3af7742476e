"""Turn a stage report into the MaterializeResult every asset returns."""

from typing import TYPE_CHECKING

import dagster as dg

from content_core.pipeline.report import StageReport

if TYPE_CHECKING:
    AssetResult = dg.MaterializeResult[None]
else:
    # Dagster reads the annotation and knows an asset with checks returns a MaterializeResult
    # only by the bare class, so the parameter is for type checkers alone.
    AssetResult = dg.MaterializeResult

__all__ = ["ROWS_CURRENT", "ROWS_WRITTEN", "AssetResult", "to_result"]

# What the row counts count, in their names: a batch rewrites only the files that changed, so
# the rows it wrote are often far fewer than the rows current for its source.
ROWS_WRITTEN = "rows written (this batch)"
ROWS_CURRENT = "rows current (this source)"


def to_result(report: StageReport) -> AssetResult:
    """Row counts, the stage's figures and a Markdown preview as asset metadata.

    The rows written are also Dagster's `dagster/partition_row_count` (a batch is a partition).
    `dagster/row_count` is left out: Dagster reads it as the rows of the whole table, every
    batch's versions included, which is neither count a person looks for here.
    `report.current_rows` are the table's current rows for the batch's source, when counted.
    """
    counts: dict[str, dg.RawMetadataValue] = {ROWS_WRITTEN: report.rows}
    if report.current_rows is not None:
        counts[ROWS_CURRENT] = report.current_rows
    metadata: dict[str, dg.RawMetadataValue] = {
        **counts,
        "dagster/partition_row_count": report.rows,
        "failures": report.failures,
        "batch_id": report.batch_id,
        "preview": dg.MetadataValue.md(report.preview_markdown),
        **report.figures,
    }
    return dg.MaterializeResult(asset_key=report.table, metadata=metadata)
