"""content_core: turn raw files into LLM-ready content (sources, normalisation, extraction,
chunking, compression, agents, store). Pure Python; never imports dagster.

Public names resolve lazily from their subpackages, so `import content_core` stays cheap and a
heavy optional dependency loads only when its feature is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    # What the lazy loader below returns, spelled out for type checkers (they do not run
    # __getattr__); a test checks that these imports and _EXPORTS name the same things.
    # `X as X` marks each as re-exported; isort would split those into one import a name.
    from content_core.agents import (  # noqa: I001
        AgentConfig as AgentConfig,
        BatchProcessor as BatchProcessor,
        DataSources as DataSources,
        ExtractionInput as ExtractionInput,
        ExtractionRecord as ExtractionRecord,
        ExtractionRun as ExtractionRun,
        FetchPolicy as FetchPolicy,
        MergeStrategy as MergeStrategy,
        MergedExtraction as MergedExtraction,
        ModelCapabilities as ModelCapabilities,
        OfflineExtractor as OfflineExtractor,
        OpenAICompatibleAgent as OpenAICompatibleAgent,
        PdfHandling as PdfHandling,
        Uses as Uses,
        merge_extractions as merge_extractions,
        merge_results as merge_results,
        prepare_messages as prepare_messages,
        run_extractions as run_extractions,
    )
    from content_core.binary import (
        ArchiveUnpacker as ArchiveUnpacker,
        BinaryArtifact as BinaryArtifact,
        BinaryConfig as BinaryConfig,
        BinaryNormalizer as BinaryNormalizer,
        EmailUnpacker as EmailUnpacker,
        GotenbergConverter as GotenbergConverter,
        ImageNormalizer as ImageNormalizer,
        LibreOfficeConverter as LibreOfficeConverter,
        NoOpOfficeConverter as NoOpOfficeConverter,
        NormalisedImage as NormalisedImage,
        OFFICE_MEDIA_TYPES as OFFICE_MEDIA_TYPES,
        OfficeConverter as OfficeConverter,
        PdfGuard as PdfGuard,
        build_office_converter as build_office_converter,
        sniff_media_type as sniff_media_type,
    )
    from content_core.chunking import (
        CharacterChunker as CharacterChunker,
        Chunk as Chunk,
        Chunker as Chunker,
        ChunkingConfig as ChunkingConfig,
        CodeChunker as CodeChunker,
        DocumentSplitter as DocumentSplitter,
        HierarchicalChunker as HierarchicalChunker,
        ImageTiler as ImageTiler,
        MarkdownChunker as MarkdownChunker,
        RecursiveChunker as RecursiveChunker,
        TextChunker as TextChunker,
        build_chunker as build_chunker,
        chunk_text as chunk_text,
        get_chunker as get_chunker,
        list_chunkers as list_chunkers,
        smart_chunk_text as smart_chunk_text,
    )
    from content_core.compression import (
        CompressionConfig as CompressionConfig,
        CompressionResult as CompressionResult,
        CompressionStrategy as CompressionStrategy,
        ContextCompressor as ContextCompressor,
        ExtractiveStrategy as ExtractiveStrategy,
        MapReduceStrategy as MapReduceStrategy,
        SlidingWindowManager as SlidingWindowManager,
        SummarizationStrategy as SummarizationStrategy,
        TruncationStrategy as TruncationStrategy,
        compress_text as compress_text,
    )
    from content_core.errors import (
        ArchiveExtractionError as ArchiveExtractionError,
        BinaryFanoutError as BinaryFanoutError,
        BinaryNormalizationError as BinaryNormalizationError,
        BinaryTooLargeError as BinaryTooLargeError,
        ContentError as ContentError,
        ConversionError as ConversionError,
        CorruptFileError as CorruptFileError,
        CorruptPdfError as CorruptPdfError,
        EmailParseError as EmailParseError,
        EmptyFileError as EmptyFileError,
        EncryptedArchiveError as EncryptedArchiveError,
        EncryptedDocumentError as EncryptedDocumentError,
        EncryptedFileError as EncryptedFileError,
        EncryptedMessageError as EncryptedMessageError,
        EncryptedPdfError as EncryptedPdfError,
        ExtractionError as ExtractionError,
        FetchError as FetchError,
        FetchRefusedError as FetchRefusedError,
        FetchTooLargeError as FetchTooLargeError,
        FetchTypeError as FetchTypeError,
        ImageConversionError as ImageConversionError,
        LLMError as LLMError,
        LLMOutputError as LLMOutputError,
        LLMUnavailableError as LLMUnavailableError,
        LimitExceededError as LimitExceededError,
        MissingDependencyError as MissingDependencyError,
        OfficeConversionError as OfficeConversionError,
        SearchError as SearchError,
        SourceError as SourceError,
        StageTimeoutError as StageTimeoutError,
        UnsafeArchiveError as UnsafeArchiveError,
        UnsafeInputError as UnsafeInputError,
        UnsupportedBinaryError as UnsupportedBinaryError,
        UnsupportedFormatError as UnsupportedFormatError,
    )
    from content_core.extract import (
        ExtractOptions as ExtractOptions,
        ExtractedText as ExtractedText,
        ExtractorRegistry as ExtractorRegistry,
        PageSpan as PageSpan,
        extract_text as extract_text,
    )
    from content_core.mcp import McpServerConfig as McpServerConfig
    from content_core.search import (
        RAG as RAG,
        SearchFilters as SearchFilters,
        SearchHit as SearchHit,
        Searcher as Searcher,
        format_hits as format_hits,
    )
    from content_core.sources import (
        ContentSource as ContentSource,
        LocalFolderSource as LocalFolderSource,
        LocalFolderSourceConfig as LocalFolderSourceConfig,
        RawFile as RawFile,
    )
    from content_core.store import (
        BlobStore as BlobStore,
        ContentStore as ContentStore,
    )
    from content_core.tokens import (
        ModelLimits as ModelLimits,
        TokenEstimator as TokenEstimator,
        count_tokens as count_tokens,
        estimate_tokens as estimate_tokens,
        get_model_limits as get_model_limits,
    )

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
            "FetchError",
            "FetchRefusedError",
            "FetchTooLargeError",
            "FetchTypeError",
            "ImageConversionError",
            "LLMError",
            "LLMOutputError",
            "LLMUnavailableError",
            "LimitExceededError",
            "MissingDependencyError",
            "OfficeConversionError",
            "SearchError",
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
            "ExtractOptions",
            "ExtractedText",
            "ExtractorRegistry",
            "PageSpan",
            "extract_text",
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
            "DataSources",
            "ExtractionInput",
            "ExtractionRecord",
            "ExtractionRun",
            "FetchPolicy",
            "MergeStrategy",
            "MergedExtraction",
            "ModelCapabilities",
            "OfflineExtractor",
            "OpenAICompatibleAgent",
            "PdfHandling",
            "Uses",
            "merge_extractions",
            "merge_results",
            "prepare_messages",
            "run_extractions",
        )
    },
    # MCP servers (the `mcp` extra, imported when a server is used)
    "McpServerConfig": "content_core.mcp",
    # search
    **{
        name: "content_core.search"
        for name in ("RAG", "SearchFilters", "SearchHit", "Searcher", "format_hits")
    },
    # store
    **{name: "content_core.store" for name in ("BlobStore", "ContentStore")},
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
