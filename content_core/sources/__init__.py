"""Where files come from: the EntrySource protocol discovery uses, the seed's ContentSource on
top of it, the local folder source, the S3 bucket-prefix source, and `open_source(uri)` that
picks one by the URI's scheme (plug-ins through the `content_pipeline.sources` entry points)."""

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.sources.base import LISTING_SCHEMA as LISTING_SCHEMA
from content_core.sources.base import ContentSource as ContentSource
from content_core.sources.base import EntrySource as EntrySource
from content_core.sources.base import RawFile as RawFile
from content_core.sources.base import SourceEntry as SourceEntry
from content_core.sources.cursor import ContentSourceBase as ContentSourceBase
from content_core.sources.cursor import iter_entries as iter_entries
from content_core.sources.local import LocalFolderSource as LocalFolderSource
from content_core.sources.local import LocalFolderSourceConfig as LocalFolderSourceConfig
from content_core.sources.local import source_id_for_folder as source_id_for_folder
from content_core.sources.registry import SourceFactory as SourceFactory
from content_core.sources.registry import load_source_plugins as load_source_plugins
from content_core.sources.registry import open_source as open_source
from content_core.sources.registry import source_factory as source_factory
from content_core.sources.registry import source_schemes as source_schemes
from content_core.sources.s3 import S3ObjectSource as S3ObjectSource
from content_core.sources.s3 import source_id_for_uri as source_id_for_uri

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
