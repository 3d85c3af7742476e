"""Where files come from: the ContentSource protocol and the local folder source."""

from content_core.sources.base import ContentSource, FileStat, RawFile
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
    "ContentSource",
    "FileStat",
    "LocalFolderSource",
    "LocalFolderSourceConfig",
    "RawFile",
    "escape_path",
    "escape_path_array",
    "os_path_text",
    "source_id_for_folder",
    "unescape_path",
]
