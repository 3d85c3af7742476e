"""Where files come from: the EntrySource protocol discovery uses, the seed's ContentSource on
top of it, and the local folder source."""

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
from content_core.sources.paths import (
    escape_path,
    escape_path_array,
    os_path_text,
    unescape_path,
)

__all__ = [
    "LISTING_SCHEMA",
    "ContentSource",
    "ContentSourceBase",
    "EntrySource",
    "LocalFolderSource",
    "LocalFolderSourceConfig",
    "RawFile",
    "SourceEntry",
    "escape_path",
    "escape_path_array",
    "iter_entries",
    "os_path_text",
    "source_id_for_folder",
    "unescape_path",
]
