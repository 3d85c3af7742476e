"""Every known library pitfall, generated here, through the whole pipeline in one batch.

Each input must end as a typed error or a bounded result within its time limit (never a
WorkerTimeoutError), the batch must go on past it, and nothing may be written outside the blob
store.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from content_core.binary import BinaryConfig
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.store.blobs import BlobStore
from tests.fixtures import hostile
from tests.support.budget import cpu_budget

MARKER = "cc-hostile-marker-9403"
MIB = 1024 * 1024
# Per file; the whole batch takes seconds on an idle machine: a file that runs into this limit
# hangs, it is not merely slow on a loaded one.
TIME_LIMIT_S = 60.0

CONFIG = ProcessingConfig(
    binary=BinaryConfig(
        max_uncompressed_bytes=32 * MIB,
        max_expanded_files=200,
        max_recursion_depth=4,
        max_image_pixels=1_000_000,
    ),
    timeout_s=TIME_LIMIT_S,
    memory_mb=1536,
    workers=2,
)

Check = Callable[[list[ArtifactRecord]], None]


@dataclass(frozen=True)
class Case:
    name: str  # the file name, also the test id
    make: Callable[[], bytes]
    check: Check


def raw_error(expected: str, phrase: str | None = None) -> Check:
    """The raw file is one failure row of cause `expected`; `phrase` (the limit's name, the
    format) must be in its message."""

    def check(records: list[ArtifactRecord]) -> None:
        assert [r.error_type for r in records] == [expected], [
            (r.error_type, r.error_message) for r in records
        ]
        assert records[0].stage == "normalise"
        if phrase is not None:
            assert phrase in (records[0].error_message or ""), records[0].error_message

    return check


def typed_or_bounded(phrase: str | None = None) -> Check:
    def check(records: list[ArtifactRecord]) -> None:
        raw = records[0]
        if raw.error_type is not None:
            assert not raw.error_type.startswith(("Unexpected", "Worker")), raw
            return
        if phrase is not None:
            assert phrase in (raw.text or ""), raw.text[:200] if raw.text else raw

    return check


def check_tar(records: list[ArtifactRecord]) -> None:
    by_name = {r.filename: r for r in records}
    assert records[0].kind == "archive" and records[0].error_type is None
    assert f"escaped dotdot {MARKER}" in (by_name[f"{MARKER}-dotdot.txt"].text or "")
    assert f"escaped absolute {MARKER}" in (by_name[f"{MARKER}-absolute.txt"].text or "")
    # Links to /etc/passwd are traversal attempts; a device or FIFO has no content.
    for special, cause in (("symlink", "UnsafeInputError"), ("hardlink", "UnsafeInputError"),
                           ("device", "UnsupportedFormatError"),
                           ("fifo", "UnsupportedFormatError")):
        assert by_name[f"{MARKER}-{special}"].error_type == cause, special


def check_names(records: list[ArtifactRecord]) -> None:
    names = {r.filename for r in records[2:]}
    assert names == {f"{MARKER}-a.txt", f"{MARKER}-b.txt", f"{MARKER}-c.txt"}
    assert MARKER in (records[1].text or "")


def check_owner_only(records: list[ArtifactRecord]) -> None:
    [record] = records
    assert record.error_type is None and "owner password only" in (record.text or "")


def check_fanout_member(records: list[ArtifactRecord]) -> None:
    errors = [r.error_type for r in records if r.error_type]
    assert errors == ["LimitExceededError"], errors
    assert records[0].error_type is None


def check_wide(records: list[ArtifactRecord]) -> None:
    members = [r for r in records[1:] if r.error_type is None]
    assert len(members) == CONFIG.binary.max_expanded_files
    assert records[-1].error_type == "LimitExceededError"
    assert "max_expanded_files" in (records[-1].error_message or "")


def check_no_nul_text(phrase: str) -> Check:
    def check(records: list[ArtifactRecord]) -> None:
        text = records[0].text or ""
        assert phrase in text and "\x00" not in text

    return check


def check_surrogates(records: list[ArtifactRecord]) -> None:
    raw = records[0]
    if raw.error_type is not None:
        assert raw.stage == "extract" and not raw.error_type.startswith("Unexpected")
        return
    (raw.text or "").encode("utf-8")  # no lone surrogate survives


CASES = [
    Case("ratio-bomb.zip", lambda: hostile.zip_ratio_bomb(64 * MIB),
         raw_error("LimitExceededError", "max_compression_ratio")),
    Case("overlap-bomb.zip", hostile.overlapping_zip_bomb,
         raw_error("UnsafeInputError", "overlapping")),
    Case("traversal.tar", lambda: hostile.tar_with_traversal(MARKER), check_tar),
    Case("bomb.7z", lambda: hostile.seven_zip_bomb(64 * MIB),
         raw_error("LimitExceededError", "max_uncompressed_bytes")),
    Case("encoded-words.eml", lambda: hostile.encoded_word_header_email(40_000),
         raw_error("LimitExceededError", "header block")),
    Case("deep-multipart.eml", lambda: hostile.deep_multipart_email(5000),
         raw_error("LimitExceededError")),
    Case("attachment-names.eml", lambda: hostile.email_with_hostile_attachment_names(MARKER),
         check_names),
    Case("owner-only.pdf",
         lambda: hostile.pdf_with_text("owner password only", owner_password="o"),
         check_owner_only),
    Case("user-password.pdf",
         lambda: hostile.pdf_with_text("secret", user_password="u", owner_password="o"),
         raw_error("EncryptedFileError", "PDF")),
    Case("broken-stream.pdf", hostile.pdf_with_broken_stream,
         raw_error("CorruptFileError", "content stream")),
    Case("truncated.pdf", lambda: hostile.pdf_with_text("cut")[:300],
         raw_error("CorruptFileError", "cannot repair")),
    Case("page-tree-bomb.pdf", hostile.page_tree_bomb,
         raw_error("LimitExceededError", "max_pdf_pages")),
    Case("pixels-1.5x.png", lambda: hostile.pixel_bomb_png(1500, 1000),
         raw_error("LimitExceededError")),
    Case("pixels-huge.png", lambda: hostile.pixel_bomb_png(200_000, 200_000),
         raw_error("LimitExceededError")),
    Case("entities.svg", hostile.svg_with_entities, raw_error("UnsafeInputError", "entit")),
    Case("self-use.svg", hostile.svg_self_use, raw_error("CorruptFileError", "refers back")),
    Case("huge-canvas.svg", hostile.svg_huge_canvas,
         raw_error("LimitExceededError", "max_image_pixels")),
    Case("bomb.docx", lambda: hostile.docx_bomb(64 * MIB),
         raw_error("LimitExceededError", "max_compression_ratio")),
    Case("bomb.xlsx", lambda: hostile.xlsx_bomb(64 * MIB),
         raw_error("LimitExceededError", "max_compression_ratio")),
    Case("dimension.xlsx", hostile.xlsx_dimension_bomb, typed_or_bounded("dimension claim")),
    Case("deep.json", lambda: hostile.deep_json(200_000), typed_or_bounded()),
    Case("utf16-no-bom.txt", lambda: hostile.utf16_without_bom("I love fuzzy blankets\n" * 20),
         check_no_nul_text("I love fuzzy blankets")),
    Case("surrogates.json", lambda: json.dumps({"a": "x\ud800y\udfffz"}).encode(),
         check_surrogates),
    Case("surrogates-utf8.txt", lambda: b"bad \xed\xa0\x80 bytes \xed\xbf\xbf end\n",
         check_surrogates),
    Case("nested.zip", lambda: hostile.nested_zips(8, MARKER), check_fanout_member),
    Case("wide.zip", lambda: hostile.wide_zip(1000), check_wide),
]


@dataclass(frozen=True)
class _Run:
    results: dict[str, list[ArtifactRecord]]
    root: Path
    store: BlobStore
    cwd_entries: list[str]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> _Run:
    root = tmp_path_factory.mktemp("hostile")
    raw = root / "raw"
    raw.mkdir()
    inputs = []
    for case in CASES:
        path = raw / case.name
        path.write_bytes(case.make())
        inputs.append(FileInput(key=case.name, path=path, filename=case.name))
    store = BlobStore(root / "store")
    cwd = root / "cwd"
    cwd.mkdir()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        results = process_files(inputs, CONFIG, blob_store=store)
    finally:
        os.chdir(previous)
    return _Run(
        results={case.name: records for case, records in zip(CASES, results, strict=True)},
        root=root,
        store=store,
        cwd_entries=sorted(os.listdir(cwd)),
    )


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_ends_typed_or_bounded(run: _Run, case: Case) -> None:
    records = run.results[case.name]
    assert records, case.name
    for record in records:
        assert record.error_type not in ("WorkerTimeoutError", "WorkerCrashedError"), record
        assert not (record.error_type or "").startswith("Unexpected"), record
    case.check(records)


@pytest.mark.slow
def test_nothing_is_written_outside_the_store(run: _Run) -> None:
    assert run.cwd_entries == []
    outside = []
    for path in run.root.rglob("*"):
        if path.is_file() and not (
            path.is_relative_to(run.root / "store") or path.is_relative_to(run.root / "raw")
        ):
            outside.append(path)
    assert outside == []
    for base in (Path("/tmp"), Path("/etc"), run.root.parent, Path.home()):
        assert not list(base.glob(f"*{MARKER}*")), base
    # Every stored file is a blob named by the hash of its bytes.
    import hashlib

    for path in (run.root / "store").rglob("*"):
        if path.is_file():
            assert hashlib.sha256(path.read_bytes()).hexdigest() == path.name


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # Pillow warns about each corrupt TIFF tag
async def test_mutated_corpus_files_only_raise_typed_errors(tmp_path: Path) -> None:
    """Seeded mutation fuzzing: flipped bytes, truncations and splices of real files must end
    as records or typed errors, never as a foreign exception."""
    import random

    from content_core.binary import BinaryNormalizer
    from content_core.errors import ContentError
    from content_core.ocr import OcrConfig, OcrRun
    from content_core.pipeline.stages.normalised_artifacts.records import records_of
    from tests.fixtures.corpus import CORPUS, manifest_rows

    rows = [r for r in manifest_rows() if not r["path"].startswith(("heic/example",
                                                                       "avif/example"))]
    rng = random.Random(20261129)
    normalizer = BinaryNormalizer(config=BinaryConfig(max_uncompressed_bytes=64 * MIB))
    store = BlobStore(tmp_path / "store")
    ocr_off = OcrRun(OcrConfig(mode="off"), tmp_path / "ocr")
    # About 2 s of CPU: far more means a mutation sent a parser into a loop.
    with cpu_budget(60):
        for _ in range(300):
            data = bytearray((CORPUS / rng.choice(rows)["path"]).read_bytes())
            if data:
                mode = rng.randrange(3)
                if mode == 0:
                    for _ in range(rng.randint(1, 20)):
                        data[rng.randrange(len(data))] = rng.randrange(256)
                elif mode == 1:
                    data = data[: rng.randrange(len(data))]
                else:
                    at = rng.randrange(len(data))
                    data[at : at + rng.randint(1, 50)] = rng.randbytes(rng.randint(0, 50))
            try:
                # OCR off: this measures the parsers, and OCR has its own tests.
                records_of(await normalizer.normalise(bytes(data), filename="fuzz.bin"), store,
                           hashlib.sha256(data).hexdigest(), normalizer.config, ocr_off)
            except ContentError:
                continue
