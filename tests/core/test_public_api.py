"""The seeds' names are the contract: each one imports from content_core."""

from __future__ import annotations

import subprocess
import sys

import pytest

import content_core

SEED_NAMES = {
    # Firefly content module
    "TextChunker", "DocumentSplitter", "MarkdownChunker", "ImageTiler", "BatchProcessor",
    "Chunker", "Chunk", "TokenEstimator", "ContextCompressor", "TruncationStrategy",
    "SummarizationStrategy", "MapReduceStrategy", "CompressionStrategy", "SlidingWindowManager",
    "ContentSource", "RawFile", "LocalFolderSource", "LocalFolderSourceConfig",
    "BinaryNormalizer", "BinaryConfig", "BinaryArtifact", "PdfGuard", "ImageNormalizer",
    "NormalisedImage", "ArchiveUnpacker", "EmailUnpacker", "OfficeConverter",
    "build_office_converter", "GotenbergConverter", "LibreOfficeConverter",
    "NoOpOfficeConverter", "OFFICE_MEDIA_TYPES", "sniff_media_type",
    "BinaryNormalizationError", "BinaryTooLargeError", "UnsupportedBinaryError",
    "CorruptPdfError", "EncryptedPdfError", "OfficeConversionError", "ImageConversionError",
    "ArchiveExtractionError", "EmailParseError", "BinaryFanoutError",
    # FFAI splitters
    "CharacterChunker", "RecursiveChunker", "CodeChunker", "HierarchicalChunker",
    "list_chunkers", "get_chunker",
    # remdb agentic chunking
    "estimate_tokens", "get_model_limits", "chunk_text", "smart_chunk_text", "merge_results",
    "MergeStrategy",
    # Yao content processing
    "prepare_messages",
}  # fmt: skip


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert content_core.__all__ == sorted(content_core.__all__)
    for name in content_core.__all__:
        assert getattr(content_core, name) is not None, name


def test_every_seed_name_is_public() -> None:
    assert SEED_NAMES <= set(content_core.__all__)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        content_core.NotAThing  # noqa: B018


def test_content_core_never_imports_dagster() -> None:
    code = (
        "import sys, content_core, content_core.ingest, content_core.store;"
        "[getattr(content_core, n) for n in content_core.__all__];"
        "print('dagster' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240
    )
    assert completed.stdout.strip() == "False", completed.stderr
