"""Batch ingestion: discovery into manifests, and the stage functions the assets call.

Names resolve lazily, so that importing this package (as the Dagster definitions do, in every
run process) does not load the parsers and the worker pool until a stage runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.ingest.checks import BATCH_CHECKS, CheckOutcome, CheckRule, check_batch
    from content_core.ingest.discovery import (
        BatchManifest,
        ManifestEntry,
        PendingBatches,
        discover_pending,
    )
    from content_core.ingest.embeddings import build_chunk_embeddings
    from content_core.ingest.message_parts import build_message_parts
    from content_core.ingest.normalise import build_normalised_artifacts
    from content_core.ingest.report import StageReport
    from content_core.ingest.run import PipelineConfig, run_batch
    from content_core.ingest.search_index import SEARCH_INDEX, build_search_index
    from content_core.ingest.stages import (
        build_chunks,
        build_compressed_contexts,
        build_extractions,
        build_merged_extractions,
        build_raw_files,
    )

_EXPORTS: dict[str, str] = {
    "BATCH_CHECKS": "content_core.ingest.checks",
    "BatchManifest": "content_core.ingest.discovery",
    "CheckOutcome": "content_core.ingest.checks",
    "CheckRule": "content_core.ingest.checks",
    "ManifestEntry": "content_core.ingest.discovery",
    "PendingBatches": "content_core.ingest.discovery",
    "PipelineConfig": "content_core.ingest.run",
    "SEARCH_INDEX": "content_core.ingest.search_index",
    "StageReport": "content_core.ingest.report",
    "build_chunk_embeddings": "content_core.ingest.embeddings",
    "build_chunks": "content_core.ingest.stages",
    "build_compressed_contexts": "content_core.ingest.stages",
    "build_extractions": "content_core.ingest.stages",
    "build_merged_extractions": "content_core.ingest.stages",
    "build_message_parts": "content_core.ingest.message_parts",
    "build_normalised_artifacts": "content_core.ingest.normalise",
    "build_raw_files": "content_core.ingest.stages",
    "build_search_index": "content_core.ingest.search_index",
    "check_batch": "content_core.ingest.checks",
    "discover_pending": "content_core.ingest.discovery",
    "run_batch": "content_core.ingest.run",
}

__all__ = [
    "BATCH_CHECKS",
    "BatchManifest",
    "CheckOutcome",
    "CheckRule",
    "ManifestEntry",
    "PendingBatches",
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
    "discover_pending",
    "run_batch",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
