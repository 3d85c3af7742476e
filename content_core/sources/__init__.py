"""Where files come from: the EntrySource protocol discovery uses, the seed's ContentSource on
top of it, the local folder source and the S3 bucket-prefix source."""

from content_core.sources.base import (
    LISTING_SCHEMA,
    ContentSource,
    EntrySource,
    RawFile,
    SourceEntry,
)
from content_core.sources.cursor import ContentSourceBase, iter_entries
from content_core.sources.local import (
    LocalFolderSource,
    LocalFolderSourceConfig,
    source_id_for_folder,
)
from content_core.sources.s3 import S3ObjectSource, source_id_for_uri

__all__ = [
    "LISTING_SCHEMA",
    "ContentSource",
    "ContentSourceBase",
    "EntrySource",
    "LocalFolderSource",
    "LocalFolderSourceConfig",
    "RawFile",
    "S3ObjectSource",
    "SourceEntry",
    "iter_entries",
    "source_id_for_folder",
    "source_id_for_uri",
]
