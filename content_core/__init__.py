"""content_core: turn raw files into LLM-ready content (sources, normalisation, extraction,
chunking, compression, agents, store). Pure Python; never imports dagster.

Public names resolve lazily from their subpackages, so `import content_core` stays cheap and a
heavy optional dependency loads only when its feature is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    # The public names, each once: `Name as Name` is a re-export to strict type checkers, and
    # lazy_exports reads these lines for `__all__` and imports each name on first use.
    from content_core.agents import AgentConfig as AgentConfig
    from content_core.agents import BatchProcessor as BatchProcessor
    from content_core.agents import ExtractionInput as ExtractionInput
    from content_core.agents import ExtractionRecord as ExtractionRecord
    from content_core.agents import ExtractionRun as ExtractionRun
    from content_core.agents import MergedExtraction as MergedExtraction
    from content_core.agents import MergeStrategy as MergeStrategy
    from content_core.agents import ModelCapabilities as ModelCapabilities
    from content_core.agents import OfflineExtractor as OfflineExtractor
    from content_core.agents import OpenAICompatibleAgent as OpenAICompatibleAgent
    from content_core.agents import PdfHandling as PdfHandling
    from content_core.agents import merge_extractions as merge_extractions
    from content_core.agents import merge_results as merge_results
    from content_core.agents import run_extractions as run_extractions
    from content_core.binary import OFFICE_MEDIA_TYPES as OFFICE_MEDIA_TYPES
    from content_core.binary import ArchiveUnpacker as ArchiveUnpacker
    from content_core.binary import BinaryArtifact as BinaryArtifact
    from content_core.binary import BinaryConfig as BinaryConfig
    from content_core.binary import BinaryNormalizer as BinaryNormalizer
    from content_core.binary import EmailUnpacker as EmailUnpacker
    from content_core.binary import GotenbergConverter as GotenbergConverter
    from content_core.binary import ImageNormalizer as ImageNormalizer
    from content_core.binary import LibreOfficeConverter as LibreOfficeConverter
    from content_core.binary import NoOpOfficeConverter as NoOpOfficeConverter
    from content_core.binary import NormalisedImage as NormalisedImage
    from content_core.binary import OfficeConverter as OfficeConverter
    from content_core.binary import PdfGuard as PdfGuard
    from content_core.binary import build_office_converter as build_office_converter
    from content_core.binary import sniff_media_type as sniff_media_type
    from content_core.chat import DataSources as DataSources
    from content_core.chat import FetchPolicy as FetchPolicy
    from content_core.chat import LocalPolicy as LocalPolicy
    from content_core.chat import Uses as Uses
    from content_core.chat import prepare_messages as prepare_messages
    from content_core.chat.mcp import McpServerConfig as McpServerConfig
    from content_core.chunking import CharacterChunker as CharacterChunker
    from content_core.chunking import Chunk as Chunk
    from content_core.chunking import Chunker as Chunker
    from content_core.chunking import ChunkerBase as ChunkerBase
    from content_core.chunking import ChunkingConfig as ChunkingConfig
    from content_core.chunking import CodeChunker as CodeChunker
    from content_core.chunking import DocumentSplitter as DocumentSplitter
    from content_core.chunking import HierarchicalChunker as HierarchicalChunker
    from content_core.chunking import ImageTiler as ImageTiler
    from content_core.chunking import MarkdownChunker as MarkdownChunker
    from content_core.chunking import RecursiveChunker as RecursiveChunker
    from content_core.chunking import TextChunker as TextChunker
    from content_core.chunking import build_chunker as build_chunker
    from content_core.chunking import chunk_text as chunk_text
    from content_core.chunking import get_chunker as get_chunker
    from content_core.chunking import list_chunkers as list_chunkers
    from content_core.chunking import smart_chunk_text as smart_chunk_text
    from content_core.compression import CompressionConfig as CompressionConfig
    from content_core.compression import CompressionResult as CompressionResult
    from content_core.compression import CompressionStrategy as CompressionStrategy
    from content_core.compression import ContextCompressor as ContextCompressor
    from content_core.compression import ExtractiveStrategy as ExtractiveStrategy
    from content_core.compression import MapReduceStrategy as MapReduceStrategy
    from content_core.compression import SlidingWindowManager as SlidingWindowManager
    from content_core.compression import SummarizationStrategy as SummarizationStrategy
    from content_core.compression import TruncationStrategy as TruncationStrategy
    from content_core.compression import compress_text as compress_text
    from content_core.errors import ArchiveExtractionError as ArchiveExtractionError
    from content_core.errors import BinaryFanoutError as BinaryFanoutError
    from content_core.errors import BinaryNormalizationError as BinaryNormalizationError
    from content_core.errors import BinaryTooLargeError as BinaryTooLargeError
    from content_core.errors import ConfigError as ConfigError
    from content_core.errors import ContentError as ContentError
    from content_core.errors import ConversionError as ConversionError
    from content_core.errors import CorruptFileError as CorruptFileError
    from content_core.errors import CorruptPdfError as CorruptPdfError
    from content_core.errors import EmailParseError as EmailParseError
    from content_core.errors import EmptyFileError as EmptyFileError
    from content_core.errors import EncryptedArchiveError as EncryptedArchiveError
    from content_core.errors import EncryptedDocumentError as EncryptedDocumentError
    from content_core.errors import EncryptedFileError as EncryptedFileError
    from content_core.errors import EncryptedMessageError as EncryptedMessageError
    from content_core.errors import EncryptedPdfError as EncryptedPdfError
    from content_core.errors import ExtractionError as ExtractionError
    from content_core.errors import FetchError as FetchError
    from content_core.errors import FetchRefusedError as FetchRefusedError
    from content_core.errors import FetchTooLargeError as FetchTooLargeError
    from content_core.errors import FetchTypeError as FetchTypeError
    from content_core.errors import ImageConversionError as ImageConversionError
    from content_core.errors import LimitExceededError as LimitExceededError
    from content_core.errors import LLMError as LLMError
    from content_core.errors import LLMOutputError as LLMOutputError
    from content_core.errors import LLMUnavailableError as LLMUnavailableError
    from content_core.errors import LocalPathRefusedError as LocalPathRefusedError
    from content_core.errors import MissingDependencyError as MissingDependencyError
    from content_core.errors import OfficeConversionError as OfficeConversionError
    from content_core.errors import SearchError as SearchError
    from content_core.errors import SourceError as SourceError
    from content_core.errors import StageTimeoutError as StageTimeoutError
    from content_core.errors import UnsafeArchiveError as UnsafeArchiveError
    from content_core.errors import UnsafeInputError as UnsafeInputError
    from content_core.errors import UnsupportedBinaryError as UnsupportedBinaryError
    from content_core.errors import UnsupportedFormatError as UnsupportedFormatError
    from content_core.extract import ExtractedText as ExtractedText
    from content_core.extract import ExtractOptions as ExtractOptions
    from content_core.extract import ExtractorRegistry as ExtractorRegistry
    from content_core.extract import PageSpan as PageSpan
    from content_core.extract import extract_text as extract_text
    from content_core.model_limits import load_model_limits as load_model_limits
    from content_core.rag import RAG as RAG
    from content_core.rag import RAGAnswer as RAGAnswer
    from content_core.search import InMemoryStore as InMemoryStore
    from content_core.search import Searcher as Searcher
    from content_core.search import SearchFilters as SearchFilters
    from content_core.search import SearchHit as SearchHit
    from content_core.search import format_hits as format_hits
    from content_core.sources import ContentSource as ContentSource
    from content_core.sources import LocalFolderSource as LocalFolderSource
    from content_core.sources import LocalFolderSourceConfig as LocalFolderSourceConfig
    from content_core.sources import RawFile as RawFile
    from content_core.store import BlobStore as BlobStore
    from content_core.store import ContentStore as ContentStore
    from content_core.tokens import ModelLimits as ModelLimits
    from content_core.tokens import TokenEstimator as TokenEstimator
    from content_core.tokens import count_tokens as count_tokens
    from content_core.tokens import estimate_tokens as estimate_tokens
    from content_core.tokens import get_model_limits as get_model_limits

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
