"""Sources by URI: `open_source(uri)` picks the kind of source from the URI's scheme.

A plain path and `file://` name a local folder, `s3://bucket/prefix` the objects under an S3
prefix; a built-in kind is one line in `_BUILTIN`. Another package adds a scheme through the
entry point group `content_pipeline.sources`: the entry point's name is the scheme and it names
a `SourceFactory` (a class or callable taking the URI), e.g.
`gs = "my_package.gcs:GcsSource"`. Plug-ins load once, on the first look-up; one that fails
to load, is not callable or claims a built-in scheme is logged and skipped.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote_to_bytes, urlsplit

from content_core.errors import UnknownSourceSchemeError
from content_core.sources.base import EntrySource
from content_core.sources.local import LocalFolderSource, LocalFolderSourceConfig
from content_core.sources.s3 import S3ObjectSource

__all__ = [
    "ENTRY_POINT_GROUP",
    "SourceFactory",
    "load_source_plugins",
    "open_source",
    "source_factory",
    "source_schemes",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "content_pipeline.sources"

# Only `scheme://` makes a URI: a path that merely holds a colon ("notes:2024/") stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class SourceFactory(Protocol):
    """Builds the source a URI names (a source class, or a function returning one)."""

    def __call__(
        self, uri: str, *, source_id: str | None = None, include_hidden: bool = False
    ) -> EntrySource:
        """The source at `uri`; `source_id` None derives one from the URI.

        Raises:
            ValueError: the URI is malformed for this kind of source.
        """
        ...


def _local_folder(
    uri: str, *, source_id: str | None = None, include_hidden: bool = False
) -> LocalFolderSource:
    """The folder a plain path or a `file://` URI names."""
    folder = _file_path(uri) if _SCHEME.match(uri) else Path(uri)
    config = LocalFolderSourceConfig(folder=folder, include_hidden=include_hidden)
    return LocalFolderSource(config, source_id=source_id)


def _file_path(uri: str) -> Path:
    """The path of `file:///abs/path` or `file://localhost/abs/path`, percent-decoded to the
    exact bytes of the name (a name need not be UTF-8)."""
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{uri}: a file:// URI names a folder on this machine, not on a host")
    return Path(os.fsdecode(unquote_to_bytes(parts.path)))


# The built-in kinds of source, by scheme ("" is a plain path). A new kind: one line here.
_BUILTIN: Mapping[str, SourceFactory] = {
    "": _local_folder,
    "file": _local_folder,
    "s3": S3ObjectSource,
}


def _scheme(uri: str) -> str:
    """The scheme of `uri`, lower case; "" for a plain path (anything without `scheme://`)."""
    match = _SCHEME.match(uri)
    return match.group(1).lower() if match else ""


def load_source_plugins(
    entry_points: Iterable[metadata.EntryPoint],
) -> dict[str, SourceFactory]:
    """The plug-in schemes `entry_points` declare, each mapped to its loaded factory.

    An entry point that fails to load, names something that is not callable, or claims a
    built-in scheme (or one an earlier entry point took) is logged and skipped.
    """
    factories: dict[str, SourceFactory] = {}
    for entry in sorted(entry_points, key=lambda e: e.name):
        scheme = entry.name.lower()
        if scheme in _BUILTIN or scheme in factories or not _SCHEME.match(f"{scheme}://"):
            logger.error(
                "source plug-in %r (%s) claims a scheme that is taken or invalid; skipped",
                entry.name,
                entry.value,
            )
            continue
        try:
            factory = entry.load()
        # The boundary to third-party code: a broken plug-in must not take the built-in
        # sources down.
        except Exception:  # noqa: BLE001
            logger.warning(
                "source plug-in %r (%s) failed to load; skipped",
                entry.name,
                entry.value,
                exc_info=True,
            )
            continue
        if not callable(factory):
            logger.error(
                "source plug-in %r (%s) is a %s, not a class or function; skipped",
                entry.name,
                entry.value,
                type(factory).__name__,
            )
            continue
        factories[scheme] = factory
    return factories


@functools.cache
def _installed_plugins() -> dict[str, SourceFactory]:
    return load_source_plugins(metadata.entry_points(group=ENTRY_POINT_GROUP))


def source_schemes() -> dict[str, SourceFactory]:
    """Every scheme `open_source` accepts: the built-in ones ("" is a plain path), then the
    installed plug-ins'."""
    return {**_BUILTIN, **_installed_plugins()}


def source_factory(
    uri: str | os.PathLike[str], schemes: Mapping[str, SourceFactory] | None = None
) -> SourceFactory:
    """The factory of the kind of source `uri` names, without building the source.

    Args:
        schemes: the schemes to choose from; default `source_schemes()`.

    Raises:
        UnknownSourceSchemeError: no source is registered for the URI's scheme.
    """
    text = os.fspath(uri)
    known = source_schemes() if schemes is None else schemes
    scheme = _scheme(text)
    factory = known.get(scheme)
    if factory is None:
        listed = ", ".join(f"{name}://" for name in sorted(known) if name)
        raise UnknownSourceSchemeError(
            f"no source for the scheme {scheme}:// of {text}; known: a folder path, {listed} "
            f"(other schemes come from packages with a {ENTRY_POINT_GROUP!r} entry point)",
            document_id=text,
        )
    return factory


def open_source(
    uri: str | os.PathLike[str],
    *,
    source_id: str | None = None,
    include_hidden: bool = False,
    schemes: Mapping[str, SourceFactory] | None = None,
) -> EntrySource:
    """The source `uri` names: a folder (a plain path or `file://`), an S3 prefix (`s3://`),
    or a plug-in's scheme.

    Args:
        source_id: the source's id; None derives a stable one from the location.
        include_hidden: also take dot-named files and folders.
        schemes: the schemes to choose from; default `source_schemes()`.

    Raises:
        UnknownSourceSchemeError: no source is registered for the URI's scheme.
        ValueError: the URI is malformed for its kind of source (`s3://` without a bucket).
        TypeError: a plug-in's factory returned something that is not an `EntrySource`.
    """
    text = os.fspath(uri)
    source = source_factory(text, schemes)(
        text, source_id=source_id, include_hidden=include_hidden
    )
    if not isinstance(source, EntrySource):
        raise TypeError(f"the source for {text} is a {type(source).__name__}, not an EntrySource")
    return source
