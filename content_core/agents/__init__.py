"""Agents: the agent contract, offline and OpenAI-compatible agents, batching, merging, and
the chat values (messages, parts, model capabilities) a model is given.

The pipeline entry points are `run_extractions` (one record per chunk, cached) and
`merge_extractions` (one row per document and schema). Preparing a caller's messages for a
model (attachments, data sources, tools) is `content_core.chat`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.agents.base import Agent as Agent
from content_core.agents.base import AgentResult as AgentResult
from content_core.agents.base import Usage as Usage
from content_core.agents.batch import BatchItem as BatchItem
from content_core.agents.batch import BatchProcessor as BatchProcessor
from content_core.agents.chat import ChatMessage as ChatMessage
from content_core.agents.chat import ModelCapabilities as ModelCapabilities
from content_core.agents.documents import MergedExtraction as MergedExtraction
from content_core.agents.documents import merge_extractions as merge_extractions
from content_core.agents.extraction import AgentConfig as AgentConfig
from content_core.agents.extraction import ExtractionInput as ExtractionInput
from content_core.agents.extraction import ExtractionRecord as ExtractionRecord
from content_core.agents.extraction import ExtractionRun as ExtractionRun
from content_core.agents.extraction import arun_extractions as arun_extractions
from content_core.agents.extraction import build_agent as build_agent
from content_core.agents.extraction import run_extractions as run_extractions
from content_core.agents.merge import MergeOutcome as MergeOutcome
from content_core.agents.merge import MergeStrategy as MergeStrategy
from content_core.agents.merge import amerge_results as amerge_results
from content_core.agents.merge import merge_results as merge_results
from content_core.agents.merge import merge_with_provenance as merge_with_provenance
from content_core.agents.offline import OfflineExtractor as OfflineExtractor
from content_core.agents.offline import extract_facts as extract_facts
from content_core.agents.openai import OpenAICompatibleAgent as OpenAICompatibleAgent
from content_core.agents.pages import PdfHandling as PdfHandling
from content_core.agents.schemas import ExtractedFacts as ExtractedFacts
from content_core.agents.schemas import load_schema as load_schema

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
