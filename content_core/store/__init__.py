"""The content store: content-addressed blobs, Parquet tables per batch, DuckDB catalog, and
the DuckDB extensions loaded from their packages."""

from content_core.store.blobs import BlobStore, sha256_hex
from content_core.store.catalog import CATALOG_FILE, CATALOG_STORAGE_VERSION, ensure_catalog
from content_core.store.compaction import CompactionReport, compact_store
from content_core.store.extensions import extension_path, load_extension
from content_core.store.store import ContentStore
from content_core.store.tables import (
    AGENTIC_EXTRACTIONS,
    BATCHES,
    CHUNKS,
    COMPRESSED_CONTEXTS,
    MERGED_EXTRACTIONS,
    NORMALISED_ARTIFACTS,
    PIPELINE_TABLES,
    RAW_FILES,
    SCHEMAS,
)

__all__ = [
    "AGENTIC_EXTRACTIONS",
    "BATCHES",
    "CATALOG_FILE",
    "CATALOG_STORAGE_VERSION",
    "CHUNKS",
    "COMPRESSED_CONTEXTS",
    "MERGED_EXTRACTIONS",
    "NORMALISED_ARTIFACTS",
    "PIPELINE_TABLES",
    "RAW_FILES",
    "SCHEMAS",
    "BlobStore",
    "CompactionReport",
    "ContentStore",
    "compact_store",
    "ensure_catalog",
    "extension_path",
    "load_extension",
    "sha256_hex",
]
