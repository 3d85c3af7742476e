"""Agents: the agent contract, offline and OpenAI-compatible agents, batching, merging, and
the chat values (messages, parts, model capabilities) a model is given.

The pipeline entry points are `run_extractions` (one record per chunk, cached) and
`merge_extractions` (one row per document and schema). Preparing a caller's messages for a
model (attachments, data sources, tools) is `content_core.chat`.
"""

from __future__ import annotations

from content_core.agents.base import Agent, AgentResult, Usage
from content_core.agents.batch import BatchItem, BatchProcessor
from content_core.agents.chat import ChatMessage, ModelCapabilities
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
from content_core.agents.merge import (
    MergeOutcome,
    MergeStrategy,
    amerge_results,
    merge_results,
    merge_with_provenance,
)
from content_core.agents.offline import OfflineExtractor, extract_facts
from content_core.agents.openai import OpenAICompatibleAgent
from content_core.agents.pages import PdfHandling
from content_core.agents.schemas import ExtractedFacts, load_schema

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentResult",
    "BatchItem",
    "BatchProcessor",
    "ChatMessage",
    "ExtractedFacts",
    "ExtractionInput",
    "ExtractionRecord",
    "ExtractionRun",
    "MergeOutcome",
    "MergeStrategy",
    "MergedExtraction",
    "ModelCapabilities",
    "OfflineExtractor",
    "OpenAICompatibleAgent",
    "PdfHandling",
    "Usage",
    "amerge_results",
    "arun_extractions",
    "build_agent",
    "extract_facts",
    "load_schema",
    "merge_extractions",
    "merge_results",
    "merge_with_provenance",
    "run_extractions",
]
