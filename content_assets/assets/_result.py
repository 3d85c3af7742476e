"""Turn a stage report into the MaterializeResult every asset returns."""

import dagster as dg

from content_core.ingest import StageReport


def to_result(report: StageReport) -> dg.MaterializeResult:
    """Row counts, the stage's figures and a Markdown preview as asset metadata."""
    metadata: dict[str, dg.RawMetadataValue] = {
        "dagster/row_count": report.rows,
        "failures": report.failures,
        "batch_id": report.batch_id,
        "preview": dg.MetadataValue.md(report.preview_markdown),
        **report.figures,
    }
    return dg.MaterializeResult(metadata=metadata)
