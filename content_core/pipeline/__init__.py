"""The pipeline: the stage functions the assets call, the worker pool they share, the batch
checks and `run_batch` (every stage of one batch, without an orchestrator).

Names resolve lazily, so that importing this package (as the Dagster definitions do, in every
run process) does not load the parsers and the worker pool until a stage runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.pipeline.checks import BATCH_CHECKS, CheckOutcome, CheckRule, check_batch
    from content_core.pipeline.embeddings import build_chunk_embeddings
    from content_core.pipeline.message_parts import build_message_parts
    from content_core.pipeline.normalise import build_normalised_artifacts
    from content_core.pipeline.report import StageReport
    from content_core.pipeline.run import PipelineConfig, run_batch
    from content_core.pipeline.search_index import SEARCH_INDEX, build_search_index
    from content_core.pipeline.stages import (
        build_chunks,
        build_compressed_contexts,
        build_extractions,
        build_merged_extractions,
        build_raw_files,
    )

_EXPORTS: dict[str, str] = {
    "BATCH_CHECKS": "content_core.pipeline.checks",
    "CheckOutcome": "content_core.pipeline.checks",
    "CheckRule": "content_core.pipeline.checks",
    "PipelineConfig": "content_core.pipeline.run",
    "SEARCH_INDEX": "content_core.pipeline.search_index",
    "StageReport": "content_core.pipeline.report",
    "build_chunk_embeddings": "content_core.pipeline.embeddings",
    "build_chunks": "content_core.pipeline.stages",
    "build_compressed_contexts": "content_core.pipeline.stages",
    "build_extractions": "content_core.pipeline.stages",
    "build_merged_extractions": "content_core.pipeline.stages",
    "build_message_parts": "content_core.pipeline.message_parts",
    "build_normalised_artifacts": "content_core.pipeline.normalise",
    "build_raw_files": "content_core.pipeline.stages",
    "build_search_index": "content_core.pipeline.search_index",
    "check_batch": "content_core.pipeline.checks",
    "run_batch": "content_core.pipeline.run",
}

__all__ = [
    "BATCH_CHECKS",
    "CheckOutcome",
    "CheckRule",
    "PipelineConfig",
    "SEARCH_INDEX",
    "StageReport",
    "build_chunk_embeddings",
    "build_chunks",
    "build_compressed_contexts",
    "build_extractions",
    "build_merged_extractions",
    "build_message_parts",
    "build_normalised_artifacts",
    "build_raw_files",
    "build_search_index",
    "check_batch",
    "run_batch",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
