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
    from content_core.pipeline.checks import CheckOutcome as CheckOutcome
    from content_core.pipeline.checks import CheckRule as CheckRule
    from content_core.pipeline.registry import all_stages as all_stages
    from content_core.pipeline.registry import batch_checks as batch_checks
    from content_core.pipeline.registry import check_batch as check_batch
    from content_core.pipeline.registry import stage_of as stage_of
    from content_core.pipeline.report import StageReport as StageReport
    from content_core.pipeline.run import run_batch as run_batch
    from content_core.pipeline.stage import Batch as Batch
    from content_core.pipeline.stage import PipelineConfig as PipelineConfig
    from content_core.pipeline.stage import Stage as Stage
    from content_core.pipeline.stages.agentic_extractions import (
        build_extractions as build_extractions,
    )
    from content_core.pipeline.stages.chunk_embeddings import (
        build_chunk_embeddings as build_chunk_embeddings,
    )
    from content_core.pipeline.stages.chunks import build_chunks as build_chunks
    from content_core.pipeline.stages.compressed_contexts import (
        build_compressed_contexts as build_compressed_contexts,
    )
    from content_core.pipeline.stages.merged_extractions import (
        build_merged_extractions as build_merged_extractions,
    )
    from content_core.pipeline.stages.message_parts import (
        build_message_parts as build_message_parts,
    )
    from content_core.pipeline.stages.normalised_artifacts import (
        build_normalised_artifacts as build_normalised_artifacts,
    )
    from content_core.pipeline.stages.raw_files import build_raw_files as build_raw_files
    from content_core.pipeline.stages.search_index import SEARCH_INDEX as SEARCH_INDEX
    from content_core.pipeline.stages.search_index import build_search_index as build_search_index

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
