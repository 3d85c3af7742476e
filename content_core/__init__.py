"""content_core: turn raw files into LLM-ready content (sources, normalisation, extraction,
chunking, compression, agents, store). Pure Python; never imports dagster.

Public names resolve lazily from their subpackages, so `import content_core` stays cheap and a
heavy optional dependency loads only when its feature is used.
"""

from __future__ import annotations

from content_core._lazy import lazy_exports

# name -> subpackage that defines it. Keep each block sorted.
_EXPORTS: dict[str, str] = {
    # errors
    **{
        name: "content_core.errors"
        for name in (
            "ArchiveExtractionError",
            "BinaryFanoutError",
            "BinaryNormalizationError",
            "BinaryTooLargeError",
            "ContentError",
            "ConversionError",
            "CorruptFileError",
            "CorruptPdfError",
            "EmailParseError",
            "EmptyFileError",
            "EncryptedArchiveError",
            "EncryptedDocumentError",
            "EncryptedFileError",
            "EncryptedMessageError",
            "EncryptedPdfError",
            "ExtractionError",
            "ImageConversionError",
            "LLMError",
            "LLMOutputError",
            "LLMUnavailableError",
            "LimitExceededError",
            "MissingDependencyError",
            "OfficeConversionError",
            "SourceError",
            "StageTimeoutError",
            "UnsafeArchiveError",
            "UnsafeInputError",
            "UnsupportedBinaryError",
            "UnsupportedFormatError",
        )
    },
    # sources
    **{
        name: "content_core.sources"
        for name in ("ContentSource", "LocalFolderSource", "LocalFolderSourceConfig", "RawFile")
    },
    # binary normalisation
    **{
        name: "content_core.binary"
        for name in (
            "ArchiveUnpacker",
            "BinaryArtifact",
            "BinaryConfig",
            "BinaryNormalizer",
            "EmailUnpacker",
            "GotenbergConverter",
            "ImageNormalizer",
            "LibreOfficeConverter",
            "NoOpOfficeConverter",
            "NormalisedImage",
            "OFFICE_MEDIA_TYPES",
            "OfficeConverter",
            "PdfGuard",
            "build_office_converter",
            "sniff_media_type",
        )
    },
    # text extraction
    **{
        name: "content_core.extract"
        for name in (
            "ExtractOptions", "ExtractedText", "ExtractorRegistry", "PageSpan", "extract_text"
        )
    },
    # tokens
    **{
        name: "content_core.tokens"
        for name in (
            "ModelLimits",
            "TokenEstimator",
            "count_tokens",
            "estimate_tokens",
            "get_model_limits",
        )
    },
    # chunking
    **{
        name: "content_core.chunking"
        for name in (
            "CharacterChunker",
            "Chunk",
            "Chunker",
            "ChunkingConfig",
            "CodeChunker",
            "DocumentSplitter",
            "HierarchicalChunker",
            "ImageTiler",
            "MarkdownChunker",
            "RecursiveChunker",
            "TextChunker",
            "build_chunker",
            "chunk_text",
            "get_chunker",
            "list_chunkers",
            "smart_chunk_text",
        )
    },
    # compression
    **{
        name: "content_core.compression"
        for name in (
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
        )
    },
    # agents
    **{
        name: "content_core.agents"
        for name in (
            "AgentConfig",
            "BatchProcessor",
            "ExtractionInput",
            "ExtractionRecord",
            "ExtractionRun",
            "MergeStrategy",
            "MergedExtraction",
            "ModelCapabilities",
            "OfflineExtractor",
            "OpenAICompatibleAgent",
            "merge_extractions",
            "merge_results",
            "prepare_messages",
            "run_extractions",
        )
    },
    # store
    **{name: "content_core.store" for name in ("BlobStore", "ContentStore")},
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
