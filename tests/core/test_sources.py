"""Sources: the seed's cursor methods (list_changed, fetch, the cursors), written once over the
EntrySource protocol, behave alike on the local folder and on an in-memory source."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from content_core.errors import SourceError
from content_core.sources import (
    ContentSource,
    ContentSourceBase,
    EntrySource,
    LocalFolderSource,
    LocalFolderSourceConfig,
    RawFile,
)
from tests.support.memory_source import MemorySource


@dataclass
class _Kind:
    source: ContentSourceBase
    put: Callable[[str, bytes], None]
    delete: Callable[[str], None]
    downloads: bool  # fetch copies the bytes to a new temporary file (else: the file itself)


def _local(tmp_path: Path) -> _Kind:
    folder = tmp_path / "folder"
    folder.mkdir()

    def put(name: str, data: bytes) -> None:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)

    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="local")
    return _Kind(source, put, lambda name: (folder / name).unlink(), downloads=False)


def _memory(tmp_path: Path) -> _Kind:
    source = MemorySource("mem")
    return _Kind(source, source.put, source.delete, downloads=True)


async def _collect(files: AsyncIterator[RawFile]) -> list[RawFile]:
    return [file async for file in files]


def _changed(source: ContentSourceBase, since: dict[str, str] | None) -> list[RawFile]:
    return asyncio.run(_collect(source.list_changed(since)))


@pytest.mark.parametrize("make", [_local, _memory], ids=["local-folder", "in-memory"])
def test_seed_cursor_methods_over_the_protocol(
    make: Callable[[Path], _Kind], tmp_path: Path
) -> None:
    kind = make(tmp_path)
    source = kind.source
    assert isinstance(source, EntrySource) and isinstance(source, ContentSource)
    kind.put("a.txt", b"alpha")
    kind.put("sub/b.md", b"# beta")

    first = _changed(source, None)
    assert [(f.name, f.name_bytes, f.size_bytes) for f in first] == [
        ("a.txt", b"a.txt", 5),
        ("sub/b.md", b"sub/b.md", 6),
    ]
    assert first[0].mime_type == "text/plain" and first[0].source_id == source.source_id
    assert source.current_cursor() == {}  # listing alone commits nothing
    source.commit_delta(source.pending_cursor())
    assert source.current_cursor() == {f.name: f.etag for f in first}
    assert _changed(source, source.current_cursor()) == []

    kind.put("a.txt", b"alpha, rewritten")
    (changed,) = _changed(source, source.current_cursor())
    assert changed.name == "a.txt" and changed.etag != first[0].etag
    fetched = asyncio.run(source.fetch(changed))
    try:
        assert fetched.read_bytes() == b"alpha, rewritten" and fetched.suffix == ".txt"
    finally:
        if kind.downloads:
            fetched.unlink()

    kind.delete("sub/b.md")
    with pytest.raises(SourceError, match="vanished"):
        asyncio.run(source.fetch(first[1]))
