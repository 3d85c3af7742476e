"""Compression: reduce a context to a token budget (offline extractive by default, or an LLM)."""

from __future__ import annotations

from content_core.compression.compressor import ContextCompressor
from content_core.compression.config import CompressionConfig, CompressionResult, compress_text
from content_core.compression.extractive import ExtractiveStrategy
from content_core.compression.strategies import (
    CompressionStrategy,
    MapReduceStrategy,
    SummarizationStrategy,
    TruncationStrategy,
)
from content_core.compression.window import SlidingWindowManager

__all__ = [
    "CompressionConfig",
    "CompressionResult",
    "CompressionStrategy",
    "ContextCompressor",
    "ExtractiveStrategy",
    "MapReduceStrategy",
    "SlidingWindowManager",
    "SummarizationStrategy",
    "TruncationStrategy",
    "compress_text",
]
