"""Sources: the seed's cursor methods (list_changed, fetch, the cursors), written once over the
EntrySource protocol, behave alike on the local folder and on an in-memory source; and
`open_source(uri)` picks the source by scheme: a path, file://, s3://, a plug-in's scheme."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from content_core.errors import SourceError, UnknownSourceSchemeError
from content_core.sources import (
    ContentSource,
    ContentSourceBase,
    EntrySource,
    LocalFolderSource,
    LocalFolderSourceConfig,
    RawFile,
    S3ObjectSource,
    load_source_plugins,
    open_source,
    source_schemes,
)
from content_core.sources.registry import ENTRY_POINT_GROUP
from tests.support.memory_source import MemorySource, open_memory_source, registered
from tests.support.s3_server import S3Endpoint, S3Prefix

REPO = Path(__file__).resolve().parents[2]


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


# -- open_source: the source a URI names ------------------------------------------------------


def _paths(source: EntrySource) -> list[bytes]:
    return source.list_entries().column("path_bytes").to_pylist()


@pytest.mark.parametrize(
    ("name", "spell"),
    [
        pytest.param("docs", lambda folder: str(folder), id="absolute-path"),
        pytest.param("docs", lambda folder: folder.name, id="relative-path"),
        # A colon alone does not make a scheme: only `scheme://` does.
        pytest.param("notes:2024", lambda folder: folder.name, id="path-with-a-colon"),
        pytest.param("docs", lambda folder: folder.as_uri(), id="file-uri"),
        pytest.param("in box", lambda folder: folder.as_uri(), id="file-uri-percent-encoded"),
        pytest.param(
            "docs", lambda folder: f"file://localhost{folder.as_posix()}", id="file-uri-localhost"
        ),
        # The exact bytes of a name that is not UTF-8 survive the URI's percent-encoding.
        pytest.param(
            os.fsdecode(b"caf\xe9"),
            lambda folder: "file://" + str(folder.parent) + "/caf%E9",
            id="file-uri-non-utf8",
        ),
    ],
)
def test_a_path_or_file_uri_opens_the_local_folder(
    name: str, spell: Callable[[Path], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # relative paths are relative to the working directory
    folder = tmp_path / name
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_bytes(b"QSRC-PATH alpha")
    (folder / "sub" / "b.md").write_bytes(b"# beta")
    (folder / ".hidden").write_bytes(b"secret")

    source = open_source(spell(folder), source_id="local")
    assert isinstance(source, LocalFolderSource) and source.root == folder.resolve()
    assert source.source_id == "local"
    assert _paths(source) == [b"a.txt", b"sub/b.md"]
    assert _paths(open_source(spell(folder), include_hidden=True)) == [
        b".hidden", b"a.txt", b"sub/b.md"
    ]
    # Without a source id, the folder's own derived id, however the folder was spelt.
    derived = LocalFolderSource(LocalFolderSourceConfig(folder=folder)).source_id
    assert open_source(spell(folder)).source_id == derived


def test_a_file_uri_on_another_host_is_refused() -> None:
    with pytest.raises(ValueError, match="on this machine"):
        open_source("file://fileserver/share/docs")


def test_an_s3_uri_opens_the_prefix(s3: S3Endpoint, tmp_path: Path) -> None:
    prefix = S3Prefix(s3, f"{tmp_path.name}/inbox")
    prefix.put("a.txt", b"QSRC-S3 alpha")
    prefix.put("sub/b.md", b"# beta")
    prefix.put(".hidden/c.txt", b"secret")

    source = open_source(prefix.uri, source_id="bucket")
    assert isinstance(source, S3ObjectSource) and source.location == prefix.uri
    assert source.source_id == "bucket"
    assert _paths(source) == [b"a.txt", b"sub/b.md"]
    assert _paths(open_source(prefix.uri + "/", include_hidden=True)) == [
        b".hidden/c.txt", b"a.txt", b"sub/b.md"
    ]
    entry = source.stat_entry(b"a.txt")
    assert entry is not None
    with source.open_entry(entry) as stream:
        assert stream.read() == b"QSRC-S3 alpha"
    with pytest.raises(ValueError, match="not an s3://bucket/prefix"):
        open_source("s3://")


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("gs://bucket/docs", id="unregistered-scheme"),
        pytest.param("memory://mem", id="plug-in-not-installed"),
        pytest.param("HTTPS://example.org/docs", id="upper-case-scheme"),
    ],
)
def test_an_unknown_scheme_is_a_typed_error_listing_the_known_ones(uri: str) -> None:
    with pytest.raises(UnknownSourceSchemeError) as caught:
        open_source(uri)
    assert isinstance(caught.value, SourceError)
    scheme = uri.partition("://")[0].lower()
    message = caught.value.message
    assert message.startswith(f"no source for the scheme {scheme}:// of {uri}; ")
    assert "known: a folder path, file://, s3://" in message
    assert ENTRY_POINT_GROUP in message and caught.value.document_id == uri


def _entry_point(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def test_plugin_schemes_load_from_entry_points(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="content_core.sources.registry")
    plugins = load_source_plugins(
        [
            _entry_point("Memory", "tests.support.memory_source:open_memory_source"),
            # Each of these is logged and skipped; none stops the others.
            _entry_point("broken", "tests.support.no_such_plugin:open"),
            _entry_point("odd", "tests.support.memory_source:MEMORY_SOURCES"),
            _entry_point("s3", "tests.support.memory_source:open_memory_source"),
        ]
    )
    assert plugins == {"memory": open_memory_source}
    logged = caplog.text
    assert "source plug-in 'broken' (tests.support.no_such_plugin:open) failed to load" in logged
    assert "source plug-in 'odd' (tests.support.memory_source:MEMORY_SOURCES) is a dict" in logged
    assert "source plug-in 's3'" in logged and "taken or invalid" in logged

    schemes = {**source_schemes(), **plugins}
    with registered(MemorySource("mem")) as memory:
        memory.put("a.txt", b"QSRC-PLUGIN alpha")
        source = open_source("memory://mem", schemes=schemes)
        assert source is memory and _paths(source) == [b"a.txt"]
    # The built-in schemes are unchanged by the plug-ins.
    assert isinstance(open_source("s3://bucket/docs", schemes=schemes), S3ObjectSource)


def test_a_plugin_that_builds_no_source_is_a_type_error() -> None:
    def not_a_source(
        uri: str, *, source_id: str | None = None, include_hidden: bool = False
    ) -> EntrySource:
        return uri  # type: ignore[return-value]

    with pytest.raises(TypeError, match="is a str, not an EntrySource"):
        open_source("odd://x", schemes={"odd": not_a_source})


def test_the_installed_entry_point_group_is_read(tmp_path: Path) -> None:
    """A package with a `content_pipeline.sources` entry point, laid out as `pip install
    --target` leaves it (its module beside a dist-info folder), adds its scheme."""
    site = tmp_path / "site"
    info = site / "homefolders-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: homefolders\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nhome = homefolders:HomeFolderSource\n"
    )
    (site / "homefolders.py").write_text(
        "import os\n"
        "from content_core.sources import LocalFolderSource, LocalFolderSourceConfig\n"
        "class HomeFolderSource(LocalFolderSource):\n"
        "    def __init__(self, uri, *, source_id=None, include_hidden=False):\n"
        "        folder = os.path.join(os.environ['QSRC_HOMES'], uri.removeprefix('home://'))\n"
        "        super().__init__(LocalFolderSourceConfig(folder=folder), source_id=source_id)\n"
    )
    (tmp_path / "homes" / "ada").mkdir(parents=True)
    (tmp_path / "homes" / "ada" / "notes.txt").write_bytes(b"QSRC-EP")
    code = (
        "from content_core.sources import open_source, source_schemes\n"
        "print(sorted(source_schemes()))\n"
        "source = open_source('home://ada', source_id='ada')\n"
        "print(type(source).__name__, source.source_id, source.list_entries()['path'])\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
        "QSRC_HOMES": str(tmp_path / "homes"),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    schemes, opened = done.stdout.splitlines()[:2]
    assert schemes == "['', 'file', 'home', 's3']"
    assert opened.startswith("HomeFolderSource ada") and '"notes.txt"' in done.stdout
