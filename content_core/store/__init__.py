"""The content store: content-addressed blobs, Parquet tables per batch, DuckDB catalog, and
the DuckDB extensions loaded from their packages.

Names resolve lazily from their modules, so a reader that needs only the layout
(`content_core.store.layout`, as `content-pipeline query` does) imports no pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.store.blobs import BlobStore as BlobStore
    from content_core.store.blobs import sha256_hex as sha256_hex
    from content_core.store.catalog import CATALOG_STORAGE_VERSION as CATALOG_STORAGE_VERSION
    from content_core.store.catalog import ensure_catalog as ensure_catalog
    from content_core.store.compaction import CompactionReport as CompactionReport
    from content_core.store.compaction import compact_store as compact_store
    from content_core.store.extensions import extension_path as extension_path
    from content_core.store.extensions import load_extension as load_extension
    from content_core.store.layout import CATALOG_FILE as CATALOG_FILE
    from content_core.store.layout import DEFAULT_STORE_DIR as DEFAULT_STORE_DIR
    from content_core.store.layout import StoreLayout as StoreLayout
    from content_core.store.layout import table_prefix as table_prefix
    from content_core.store.row_arrow import column_docs as column_docs
    from content_core.store.row_arrow import duckdb_type as duckdb_type
    from content_core.store.row_arrow import rows_from_table as rows_from_table
    from content_core.store.rows import AgenticExtractionRow as AgenticExtractionRow
    from content_core.store.rows import ArtifactRow as ArtifactRow
    from content_core.store.rows import BatchRow as BatchRow
    from content_core.store.rows import ChunkBox as ChunkBox
    from content_core.store.rows import ChunkEmbeddingRow as ChunkEmbeddingRow
    from content_core.store.rows import ChunkRow as ChunkRow
    from content_core.store.rows import Col as Col
    from content_core.store.rows import CompressedContextRow as CompressedContextRow
    from content_core.store.rows import DocumentSimilarityRow as DocumentSimilarityRow
    from content_core.store.rows import FurnitureLine as FurnitureLine
    from content_core.store.rows import MergedExtractionRow as MergedExtractionRow
    from content_core.store.rows import MessagePartRow as MessagePartRow
    from content_core.store.rows import NormalisedArtifactRow as NormalisedArtifactRow
    from content_core.store.rows import OcrReading as OcrReading
    from content_core.store.rows import PageRange as PageRange
    from content_core.store.rows import RawFileRow as RawFileRow
    from content_core.store.rows import TableRow as TableRow
    from content_core.store.rows import TextLineBox as TextLineBox
    from content_core.store.store import ContentStore as ContentStore
    from content_core.store.tables import AGENTIC_EXTRACTIONS as AGENTIC_EXTRACTIONS
    from content_core.store.tables import BATCHES as BATCHES
    from content_core.store.tables import CHUNK_EMBEDDINGS as CHUNK_EMBEDDINGS
    from content_core.store.tables import CHUNKS as CHUNKS
    from content_core.store.tables import COMPRESSED_CONTEXTS as COMPRESSED_CONTEXTS
    from content_core.store.tables import DOCUMENT_SIMILARITY as DOCUMENT_SIMILARITY
    from content_core.store.tables import MERGED_EXTRACTIONS as MERGED_EXTRACTIONS
    from content_core.store.tables import MESSAGE_PARTS as MESSAGE_PARTS
    from content_core.store.tables import NORMALISED_ARTIFACTS as NORMALISED_ARTIFACTS
    from content_core.store.tables import PIPELINE_TABLES as PIPELINE_TABLES
    from content_core.store.tables import RAW_FILES as RAW_FILES
    from content_core.store.tables import ROW_MODELS as ROW_MODELS
    from content_core.store.tables import SCHEMAS as SCHEMAS
    from content_core.store.tables import pipeline_tables as pipeline_tables
    from content_core.store.tables import row_model as row_model
    from content_core.store.tables import stage_plugins as stage_plugins
    from content_core.store.tables import table_schema as table_schema

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
