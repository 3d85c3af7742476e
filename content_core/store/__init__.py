"""The content store: content-addressed blobs, Parquet tables per batch, DuckDB catalog, and
the DuckDB extensions loaded from their packages.

Names resolve lazily from their modules, so a reader that needs only the layout
(`content_core.store.layout`, as `content-pipeline query` does) imports no pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.store.blobs import BlobStore, sha256_hex
    from content_core.store.catalog import CATALOG_STORAGE_VERSION, ensure_catalog
    from content_core.store.compaction import CompactionReport, compact_store
    from content_core.store.extensions import extension_path, load_extension
    from content_core.store.layout import (
        CATALOG_FILE,
        DEFAULT_STORE_DIR,
        StoreLayout,
        table_prefix,
    )
    from content_core.store.row_arrow import duckdb_type, rows_from_table
    from content_core.store.rows import (
        AgenticExtractionRow,
        ArtifactRow,
        BatchRow,
        ChunkEmbeddingRow,
        ChunkRow,
        CompressedContextRow,
        MergedExtractionRow,
        MessagePartRow,
        NormalisedArtifactRow,
        OcrReading,
        PageRange,
        RawFileRow,
        TableRow,
    )
    from content_core.store.store import ContentStore
    from content_core.store.tables import (
        AGENTIC_EXTRACTIONS,
        BATCHES,
        CHUNK_EMBEDDINGS,
        CHUNKS,
        COMPRESSED_CONTEXTS,
        MERGED_EXTRACTIONS,
        MESSAGE_PARTS,
        NORMALISED_ARTIFACTS,
        PIPELINE_TABLES,
        RAW_FILES,
        ROW_MODELS,
        SCHEMAS,
    )

# name -> module that defines it
_EXPORTS: dict[str, str] = {
    "AGENTIC_EXTRACTIONS": "content_core.store.tables",
    "BATCHES": "content_core.store.tables",
    "CATALOG_FILE": "content_core.store.layout",
    "CATALOG_STORAGE_VERSION": "content_core.store.catalog",
    "CHUNKS": "content_core.store.tables",
    "CHUNK_EMBEDDINGS": "content_core.store.tables",
    "COMPRESSED_CONTEXTS": "content_core.store.tables",
    "DEFAULT_STORE_DIR": "content_core.store.layout",
    "MERGED_EXTRACTIONS": "content_core.store.tables",
    "MESSAGE_PARTS": "content_core.store.tables",
    "NORMALISED_ARTIFACTS": "content_core.store.tables",
    "PIPELINE_TABLES": "content_core.store.tables",
    "RAW_FILES": "content_core.store.tables",
    "ROW_MODELS": "content_core.store.tables",
    "SCHEMAS": "content_core.store.tables",
    "AgenticExtractionRow": "content_core.store.rows",
    "ArtifactRow": "content_core.store.rows",
    "BatchRow": "content_core.store.rows",
    "BlobStore": "content_core.store.blobs",
    "ChunkEmbeddingRow": "content_core.store.rows",
    "ChunkRow": "content_core.store.rows",
    "CompactionReport": "content_core.store.compaction",
    "CompressedContextRow": "content_core.store.rows",
    "ContentStore": "content_core.store.store",
    "MergedExtractionRow": "content_core.store.rows",
    "MessagePartRow": "content_core.store.rows",
    "NormalisedArtifactRow": "content_core.store.rows",
    "OcrReading": "content_core.store.rows",
    "PageRange": "content_core.store.rows",
    "RawFileRow": "content_core.store.rows",
    "StoreLayout": "content_core.store.layout",
    "TableRow": "content_core.store.rows",
    "compact_store": "content_core.store.compaction",
    "duckdb_type": "content_core.store.row_arrow",
    "ensure_catalog": "content_core.store.catalog",
    "extension_path": "content_core.store.extensions",
    "load_extension": "content_core.store.extensions",
    "rows_from_table": "content_core.store.row_arrow",
    "sha256_hex": "content_core.store.blobs",
    "table_prefix": "content_core.store.layout",
}

__all__ = [
    "AGENTIC_EXTRACTIONS",
    "BATCHES",
    "CATALOG_FILE",
    "CATALOG_STORAGE_VERSION",
    "CHUNKS",
    "CHUNK_EMBEDDINGS",
    "COMPRESSED_CONTEXTS",
    "DEFAULT_STORE_DIR",
    "MERGED_EXTRACTIONS",
    "MESSAGE_PARTS",
    "NORMALISED_ARTIFACTS",
    "PIPELINE_TABLES",
    "RAW_FILES",
    "ROW_MODELS",
    "SCHEMAS",
    "AgenticExtractionRow",
    "ArtifactRow",
    "BatchRow",
    "BlobStore",
    "ChunkEmbeddingRow",
    "ChunkRow",
    "CompactionReport",
    "CompressedContextRow",
    "ContentStore",
    "MergedExtractionRow",
    "MessagePartRow",
    "NormalisedArtifactRow",
    "OcrReading",
    "PageRange",
    "RawFileRow",
    "StoreLayout",
    "TableRow",
    "compact_store",
    "duckdb_type",
    "ensure_catalog",
    "extension_path",
    "load_extension",
    "rows_from_table",
    "sha256_hex",
    "table_prefix",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
