"""The pipeline: its stages (one module each in `stages/`, `STAGE = Stage(...)`, plus the
plug-ins of the entry point group `content_pipeline.stages`), the registry that orders them,
the worker pool they share, the batch checks and `run_batch` (every stage of one batch, without
an orchestrator).

Names resolve lazily, so that importing this package (as the Dagster definitions do, in every
run process) does not load the parsers and the worker pool until a stage runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.pipeline.checks import CheckOutcome, CheckRule
    from content_core.pipeline.registry import all_stages, batch_checks, check_batch, stage_of
    from content_core.pipeline.report import StageReport
    from content_core.pipeline.run import run_batch
    from content_core.pipeline.stage import Batch, PipelineConfig, Stage
    from content_core.pipeline.stages.agentic_extractions import build_extractions
    from content_core.pipeline.stages.chunk_embeddings import build_chunk_embeddings
    from content_core.pipeline.stages.chunks import build_chunks
    from content_core.pipeline.stages.compressed_contexts import build_compressed_contexts
    from content_core.pipeline.stages.merged_extractions import build_merged_extractions
    from content_core.pipeline.stages.message_parts import build_message_parts
    from content_core.pipeline.stages.normalised_artifacts import build_normalised_artifacts
    from content_core.pipeline.stages.raw_files import build_raw_files
    from content_core.pipeline.stages.search_index import SEARCH_INDEX, build_search_index

_EXPORTS: dict[str, str] = {
    "Batch": "content_core.pipeline.stage",
    "CheckOutcome": "content_core.pipeline.checks",
    "CheckRule": "content_core.pipeline.checks",
    "PipelineConfig": "content_core.pipeline.stage",
    "SEARCH_INDEX": "content_core.pipeline.stages.search_index",
    "Stage": "content_core.pipeline.stage",
    "StageReport": "content_core.pipeline.report",
    "batch_checks": "content_core.pipeline.registry",
    "build_chunk_embeddings": "content_core.pipeline.stages.chunk_embeddings",
    "build_chunks": "content_core.pipeline.stages.chunks",
    "build_compressed_contexts": "content_core.pipeline.stages.compressed_contexts",
    "build_extractions": "content_core.pipeline.stages.agentic_extractions",
    "build_merged_extractions": "content_core.pipeline.stages.merged_extractions",
    "build_message_parts": "content_core.pipeline.stages.message_parts",
    "build_normalised_artifacts": "content_core.pipeline.stages.normalised_artifacts",
    "build_raw_files": "content_core.pipeline.stages.raw_files",
    "build_search_index": "content_core.pipeline.stages.search_index",
    "check_batch": "content_core.pipeline.registry",
    "run_batch": "content_core.pipeline.run",
    "stage_of": "content_core.pipeline.registry",
    "all_stages": "content_core.pipeline.registry",
}

__all__ = [
    "Batch",
    "CheckOutcome",
    "CheckRule",
    "PipelineConfig",
    "SEARCH_INDEX",
    "Stage",
    "StageReport",
    "batch_checks",
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
    "stage_of",
    "all_stages",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
