"""The store's layout: every path under a store root (DESIGN.md section 4), named here once.
Readers that need it before anything heavy is imported use this module directly (the
`content-pipeline query` path imports it, not pyarrow)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "BATCHES_DIR",
    "BLOBS_DIR",
    "CACHE_DIR",
    "CATALOG_FILE",
    "DEFAULT_STORE_DIR",
    "SEARCH_INDEX_FILE",
    "STATE_DIR",
    "TABLES_DIR",
    "CacheKind",
    "StoreLayout",
    "table_prefix",
]

# The DuckDB catalog at the store's root: one view per table.
CATALOG_FILE = "content.duckdb"
# The BM25 index beside the catalog (content_core.search.index).
SEARCH_INDEX_FILE = "search.duckdb"
# Where the CLI and the Dagster resources put the store when CONTENT_STORE_DIR is not set.
DEFAULT_STORE_DIR = "content_store"
BLOBS_DIR = "blobs"  # blobs/ab/cd/<sha256>
TABLES_DIR = "tables"  # tables/<table>/batch=<batch_id>/data.parquet
BATCHES_DIR = "batches"  # batches/<batch_id>.parquet
STATE_DIR = "state"  # locks, discovery snapshots and hash caches, finished marks
CACHE_DIR = "cache"  # cache/<kind>/: readings and replies keyed by content

# What is cached under `cache/`: agent replies, embeddings, OCR readings.
CacheKind = Literal["extractions", "embeddings", "ocr"]


def table_prefix(table: str) -> str:
    """The key prefix (relative to the store root, `/`-separated on every storage) of the
    Parquet files of `table`."""
    return f"{TABLES_DIR}/{table}/"


@dataclass(frozen=True, slots=True)
class StoreLayout:
    """The paths under one store root on this machine (an `s3://` store's work folder)."""

    root: Path

    @classmethod
    def of_blobs(cls, blob_root: Path) -> StoreLayout:
        """The layout of the store whose blob folder is `blob_root`."""
        return cls(Path(blob_root).parent)

    @property
    def blobs(self) -> Path:
        """The blob folder."""
        return self.root / BLOBS_DIR

    @property
    def tables(self) -> Path:
        """The folder of every table's Parquet files."""
        return self.root / TABLES_DIR

    @property
    def batches(self) -> Path:
        """The folder of the batch manifests."""
        return self.root / BATCHES_DIR

    @property
    def catalog(self) -> Path:
        """The DuckDB catalog file."""
        return self.root / CATALOG_FILE

    @property
    def search_index(self) -> Path:
        """The BM25 index file."""
        return self.root / SEARCH_INDEX_FILE

    def cache(self, kind: CacheKind) -> Path:
        """The cache folder of `kind`."""
        return self.root / CACHE_DIR / kind

    def state(self, name: str) -> Path:
        """A file of the store's state folder (a lock, a snapshot, a hash cache)."""
        return self.root / STATE_DIR / name
