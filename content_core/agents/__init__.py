"""Agents: the agent contract, offline and OpenAI-compatible agents, batching, merging, caching.

The pipeline entry points are `run_extractions` (one record per chunk, cached) and
`merge_extractions` (one row per document and schema).
"""

from __future__ import annotations

from content_core.agents.base import Agent, AgentResult, Usage
from content_core.agents.batch import BatchItem, BatchProcessor
from content_core.agents.cache import ExtractionCache, cache_key
from content_core.agents.data_sources import ApiEndpoint, DataSources
from content_core.agents.documents import MergedExtraction, merge_extractions
from content_core.agents.extraction import (
    AgentConfig,
    ExtractionInput,
    ExtractionRecord,
    ExtractionRun,
    arun_extractions,
    build_agent,
    run_extractions,
)
from content_core.agents.fetch import FetchPolicy
from content_core.agents.merge import (
    MergeOutcome,
    MergeStrategy,
    amerge_results,
    merge_results,
    merge_with_provenance,
)
from content_core.agents.messages import (
    AttachmentStore,
    ChatMessage,
    ModelCapabilities,
    PreparedFor,
    prepare_messages,
)
from content_core.agents.offline import OfflineExtractor, extract_facts
from content_core.agents.openai import OpenAICompatibleAgent
from content_core.agents.pages import PdfHandling
from content_core.agents.routing import Uses
from content_core.agents.schemas import ExtractedFacts, load_schema

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentResult",
    "ApiEndpoint",
    "AttachmentStore",
    "BatchItem",
    "BatchProcessor",
    "ChatMessage",
    "DataSources",
    "ExtractedFacts",
    "ExtractionCache",
    "ExtractionInput",
    "ExtractionRecord",
    "ExtractionRun",
    "FetchPolicy",
    "MergeOutcome",
    "MergeStrategy",
    "MergedExtraction",
    "ModelCapabilities",
    "OfflineExtractor",
    "OpenAICompatibleAgent",
    "PdfHandling",
    "PreparedFor",
    "Usage",
    "Uses",
    "amerge_results",
    "arun_extractions",
    "build_agent",
    "cache_key",
    "extract_facts",
    "load_schema",
    "merge_extractions",
    "merge_results",
    "merge_with_provenance",
    "prepare_messages",
    "run_extractions",
]
