"""content_core.formats: a format declared once drives sniffing, kinds, normalisation and
extraction; every built-in media type has a kind and a handler; plug-ins load lazily and a
broken one is skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from content_core.binary import BinaryNormalizer, sniff_media_type
from content_core.binary import media_types as mt
from content_core.binary.artifact import kind_for
from content_core.binary.office import OFFICE_MEDIA_TYPES
from content_core.errors import UnsupportedBinaryError
from content_core.extract import (
    Blob,
    ExtractedText,
    ExtractOptions,
    ExtractorRegistry,
    SniffInfo,
    build_text,
    default_registry,
    extract_text,
)
from content_core.formats import (
    Format,
    FormatRegistry,
    Handler,
    NormaliseStep,
    Signature,
    default_formats,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
from tests.fixtures.ole2 import compound_file

REPO = Path(__file__).resolve().parents[2]
QUILL = "application/x-quill"


class QuillExtractor:
    """A test format: after the 8-byte magic, the text in upper case."""

    name = "quill"

    def accepts(self, info: SniffInfo) -> bool:
        return info.media_type == QUILL

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        return build_text([blob.data[8:].decode().upper()], handler=self.name, paged=False)


QUILL_FORMAT = Format(
    name="quill",
    media_types=(QUILL,),
    kind="quill",
    handlers=(Handler(QuillExtractor()),),
    signatures=(Signature(b"QUILL01\n"),),
)


def _with(*formats: Format) -> FormatRegistry:
    return FormatRegistry([*default_formats().formats(), *formats])


async def test_a_declared_format_goes_through_sniff_kind_normalise_and_extraction() -> None:
    data = b"QUILL01\nwritten by hand QF1"
    registry = _with(QUILL_FORMAT)
    # Without the declaration these bytes are plain text; with it the signature wins.
    assert sniff_media_type(data) == mt.PLAIN
    assert sniff_media_type(data, formats=registry) == QUILL
    assert registry.kind_for(QUILL) == "quill" and registry.yields_text(QUILL)
    extractors = ExtractorRegistry.from_formats(registry)
    assert extract_text(data, QUILL, registry=extractors).text == "WRITTEN BY HAND QF1"
    (artifact,) = await BinaryNormalizer(formats=registry).normalise(data, filename="a.quill")
    assert (artifact.media_type, artifact.kind, artifact.error_type) == (QUILL, "quill", None)


async def test_a_sniffed_type_without_a_handler_is_refused_as_unsupported() -> None:
    mute = Format(name="mute", media_types=("application/x-mute",), kind="mute",
                  yields_text=False, signatures=(Signature(b"MUTE"),))
    with pytest.raises(UnsupportedBinaryError) as caught:
        await BinaryNormalizer(formats=_with(mute)).normalise(b"MUTE and bytes", filename="m")
    assert caught.value.error_type == "UnsupportedFormatError"


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        pytest.param(bytes(range(256)) * 4, mt.OCTET_STREAM, id="unknown-binary"),
        pytest.param(compound_file({"Junk": b"x" * 64}), mt.OLE2, id="ole2-of-no-known-kind"),
    ],
)
def test_sniffed_bytes_without_a_handler_are_unsupported_format_rows(
    tmp_path: Path, data: bytes, media_type: str
) -> None:
    path = tmp_path / "file.bin"
    path.write_bytes(data)
    item = FileInput(key="k", path=path, filename="file.bin")
    config = ProcessingConfig(isolate=False)
    ((row,),) = process_files([item], config, blob_store=BlobStore(tmp_path / "store"))
    assert (row.media_type, row.kind, row.error_type, row.stage) == (
        media_type, "binary", "UnsupportedFormatError", "normalise"
    )
    assert row.text_status == "error"


def _constants() -> dict[str, str]:
    return {name: getattr(mt, name) for name in mt.__all__ if name.isupper()}


@pytest.mark.parametrize("name", sorted(set(_constants()) - {"OCTET_STREAM"}))
def test_every_built_in_media_type_has_a_kind_and_a_handler(name: str) -> None:
    media_type = _constants()[name]
    fmt = default_formats().get(media_type)
    assert fmt is not None, f"{name} is declared by no format"
    assert kind_for(media_type) == fmt.kind
    if fmt.yields_text:
        accepting = [h.name for h in default_registry().candidates(SniffInfo.parse(media_type))]
        assert accepting, f"{name} yields text but no extractor accepts it"
        assert fmt.kind != "binary"
    elif fmt.normalise is NormaliseStep.PASS:
        # Text of its own: none, and no step that makes rows of its parts: refused, never a
        # silent row (see the unsupported tests above).
        assert media_type in (mt.OLE2, mt.EMPTY)


def test_derived_sets_match_the_declarations() -> None:
    formats = default_formats()
    assert formats.media_types(NormaliseStep.RENDER_OFFICE) == OFFICE_MEDIA_TYPES
    assert {mt.DOCX, mt.DOC, mt.RTF, mt.WORDPERFECT} <= OFFICE_MEDIA_TYPES
    assert mt.EPUB not in OFFICE_MEDIA_TYPES and mt.PDF not in OFFICE_MEDIA_TYPES
    assert formats.media_types(NormaliseStep.UNPACK_ARCHIVE) == {mt.ZIP, mt.TAR, mt.GZIP,
                                                                 mt.SEVEN_ZIP}
    assert formats.media_types(NormaliseStep.UNPACK_EMAIL) == {mt.EML, mt.MSG}
    assert formats.yields_text(mt.SVG) and not formats.yields_text(mt.PNG)
    # One extractor shared by two formats (CSV and TSV) is registered once.
    names = [h.name for h in default_registry().handlers()]
    assert len(names) == len(set(names))
    assert names[:2] == ["pdfium", "docx"] and names[-1] == "text"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"media_types": ()}, "no media type", id="no-media-type"),
        pytest.param({"media_types": ("Text/X-Quill",)}, "not bare", id="not-lower-case"),
        pytest.param({"handlers": ()}, "no extractor", id="text-without-extractor"),
    ],
)
def test_a_format_declaration_is_checked(change: dict[str, object], message: str) -> None:
    fields = {"name": "quill", "media_types": (QUILL,), "kind": "quill",
              "handlers": QUILL_FORMAT.handlers, **change}
    with pytest.raises(ValueError, match=message):
        Format(**fields)  # type: ignore[arg-type]


def test_a_media_type_is_registered_once() -> None:
    registry = FormatRegistry([QUILL_FORMAT])
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Format(name="quill2", media_types=(QUILL,), kind="quill",
                                 handlers=QUILL_FORMAT.handlers))


def _dist(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[content_pipeline.formats]\n{entry_points}\n")


def test_broken_plugins_are_logged_and_skipped(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "broken_plugin.py").write_text("raise RuntimeError('plug-in bug QF7')\n")
    (site / "thief_plugin.py").write_text(
        "from content_core.formats import Format\n"
        "FORMAT = Format(name='thief', media_types=('application/pdf',), kind='x',\n"
        "                yields_text=False)\n"
    )
    (site / "odd_plugin.py").write_text("FORMAT = 42\n")
    _dist(site, "broken", "broken = broken_plugin:FORMAT")
    _dist(site, "thief", "thief = thief_plugin:FORMAT")
    _dist(site, "odd", "odd = odd_plugin:FORMAT")
    code = (
        "from content_core.extract import extract_text\n"
        "from content_core.formats import default_formats\n"
        "print(default_formats().get('application/pdf').name)\n"
        "print(extract_text(b'still works QF8', 'text/plain').text)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["pdf", "still works QF8"]
    assert "format plug-in broken (broken_plugin:FORMAT) failed to load" in done.stderr
    assert "plug-in bug QF7" in done.stderr
    assert "format plug-in thief skipped" in done.stderr
    assert "format plug-in odd (odd_plugin:FORMAT) failed to load" in done.stderr
