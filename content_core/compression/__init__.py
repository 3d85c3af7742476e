"""Compression: reduce a context to a token budget (offline extractive by default, or an LLM)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.compression.compressor import ContextCompressor as ContextCompressor
from content_core.compression.config import CompressionConfig as CompressionConfig
from content_core.compression.config import CompressionResult as CompressionResult
from content_core.compression.config import compress_text as compress_text
from content_core.compression.extractive import ExtractiveStrategy as ExtractiveStrategy
from content_core.compression.strategies import CompressionStrategy as CompressionStrategy
from content_core.compression.strategies import MapReduceStrategy as MapReduceStrategy
from content_core.compression.strategies import SummarizationStrategy as SummarizationStrategy
from content_core.compression.strategies import TruncationStrategy as TruncationStrategy
from content_core.compression.window import SlidingWindowManager as SlidingWindowManager

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
