"""Batch ingestion: discovery into manifests, and the stage functions the assets call."""

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
    "build_search_index",
    "build_raw_files",
    "check_batch",
    "discover_pending",
    "run_batch",
]
