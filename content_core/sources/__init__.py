"""Where files come from: the ContentSource protocol and the local folder source."""

from content_core.sources.base import ContentSource, FileStat, RawFile
from content_core.sources.local import (
    LocalFolderSource,
    LocalFolderSourceConfig,
    source_id_for_folder,
)

__all__ = [
    "ContentSource",
    "FileStat",
    "LocalFolderSource",
    "LocalFolderSourceConfig",
    "RawFile",
    "source_id_for_folder",
]
