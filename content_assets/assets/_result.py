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

__all__ = ["AssetResult", "to_result"]


def to_result(report: StageReport) -> AssetResult:
    """Row counts, the stage's figures and a Markdown preview as asset metadata."""
    metadata: dict[str, dg.RawMetadataValue] = {
        "dagster/row_count": report.rows,
        "failures": report.failures,
        "batch_id": report.batch_id,
        "preview": dg.MetadataValue.md(report.preview_markdown),
        **report.figures,
    }
    return dg.MaterializeResult(asset_key=report.table, metadata=metadata)
