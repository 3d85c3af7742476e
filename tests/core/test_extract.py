"""Registry dispatch, the text contract (no NUL, no lone surrogates, page spans) and PDF/DOCX."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from content_core.binary import BinaryConfig
from content_core.errors import (
    EncryptedPdfError,
    ExtractionError,
    MissingDependencyError,
    UnsafeInputError,
    UnsupportedFormatError,
)
from content_core.extract import (
    Blob,
    ExtractedText,
    ExtractOptions,
    ExtractorRegistry,
    PageSpan,
    SniffInfo,
    build_text,
    clean_text,
    default_registry,
    extract_text,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
from tests.core.extract_inputs import make_pdf

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def make_docx(build) -> bytes:  # type: ignore[no-untyped-def]
    import docx

    document = docx.Document()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


# --- contract helpers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\x00b", "ab"),  # NUL is rejected by DuckDB and Postgres
        ("a\ud800b", "a\ufffdb"),  # lone surrogate cannot be encoded as UTF-8
        ("x\r\ny\rz", "x\ny\nz"),  # newlines normalised
        ("tab\tff\x0c", "tab\tff\x0c"),  # tab and form feed are kept
        ("bell\x07", "bell"),  # stray C0 control dropped
    ],
)
def test_clean_text(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected


def test_build_text_spans_cover_each_page() -> None:
    result = build_text(["one\x00", "", "three\n"], handler="t", paged=True)
    assert [result.text[s.start : s.end] for s in result.pages] == ["one", "", "three"]
    assert [s.page for s in result.pages] == [1, 2, 3]


def test_page_span_rejects_reversed_offsets() -> None:
    with pytest.raises(ValueError):
        PageSpan(page=1, start=5, end=2)


def test_sniff_info_splits_charset() -> None:
    info = SniffInfo.parse('Text/CSV; Charset="Shift_JIS"', filename="a.csv")
    assert (info.media_type, info.charset, info.filename) == ("text/csv", "shift_jis", "a.csv")


# --- registry ---------------------------------------------------------------------------


class _Fixed:
    def __init__(self, name: str, media_type: str, outcome: str | Exception) -> None:
        self.name = name
        self._media_type = media_type
        self._outcome = outcome

    def accepts(self, info: SniffInfo) -> bool:
        return info.media_type == self._media_type

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        if isinstance(self._outcome, Exception):
            raise self._outcome
        return ExtractedText(text=self._outcome + "\x00", handler=self.name)


def test_registry_priority_then_registration_order() -> None:
    registry = ExtractorRegistry()
    registry.register(_Fixed("low", "x/y", "low"), priority=1)
    registry.register(_Fixed("high-a", "x/y", "a"), priority=5)
    registry.register(_Fixed("high-b", "x/y", "b"), priority=5)
    assert [h.name for h in registry.handlers()] == ["high-a", "high-b", "low"]
    result = registry.extract(b"", "x/y")
    assert (result.handler, result.text) == ("high-a", "a")  # NUL cleaned by the registry


def test_registry_records_failed_attempts_then_falls_back() -> None:
    registry = ExtractorRegistry()
    registry.register(_Fixed("broken", "x/y", RuntimeError("boom")), priority=2)
    registry.register(_Fixed("ok", "x/y", "fine"), priority=1)
    assert registry.extract(b"", "x/y").handler == "ok"


def test_registry_all_failed_carries_every_attempt() -> None:
    registry = ExtractorRegistry()
    registry.register(_Fixed("a", "x/y", RuntimeError("first")), priority=2)
    registry.register(_Fixed("b", "x/y", ValueError("second")), priority=1)
    with pytest.raises(ExtractionError) as info:
        registry.extract(b"", "x/y", filename="f.bin")
    assert [(a.handler, a.error_type) for a in info.value.attempts] == [
        ("a", "RuntimeError"),
        ("b", "ValueError"),
    ]


def test_registry_unsafe_input_stops_dispatch() -> None:
    registry = ExtractorRegistry()
    registry.register(_Fixed("guard", "x/y", UnsafeInputError("bomb")), priority=2)
    registry.register(_Fixed("would-parse", "x/y", "parsed"), priority=1)
    with pytest.raises(UnsafeInputError):
        registry.extract(b"", "x/y")


def test_registry_missing_dependency_surfaces_when_it_is_the_only_cause() -> None:
    registry = ExtractorRegistry()
    registry.register(_Fixed("opt", "x/y", MissingDependencyError("no lib", extra="office")))
    with pytest.raises(MissingDependencyError, match="office"):
        registry.extract(b"", "x/y")


def test_unsupported_media_type() -> None:
    with pytest.raises(UnsupportedFormatError):
        extract_text(b"\x89PNG\r\n", "image/png")


def test_default_registry_names_are_unique() -> None:
    names = [h.name for h in default_registry().handlers()]
    assert len(names) == len(set(names))


# --- PDF --------------------------------------------------------------------------------


def test_pdf_one_span_per_page_in_order() -> None:
    data = make_pdf(["Alpha page marker QX1", "Beta page marker QX2", "Gamma QX3"])
    result = extract_text(data, "application/pdf", filename="three.pdf")
    assert result.handler == "pdfium"
    pages = [result.text[s.start : s.end] for s in result.pages]
    assert len(pages) == 3
    assert "QX1" in pages[0] and "QX2" in pages[1] and "QX3" in pages[2]


def test_pdf_fallback_parser_agrees() -> None:
    from content_core.extract.pdf_fallback import PypdfExtractor

    data = make_pdf(["Fallback text QX9"])
    blob = Blob(data=data, info=SniffInfo.parse("application/pdf"))
    result = PypdfExtractor().extract(blob, ExtractOptions())
    assert "QX9" in result.text and len(result.pages) == 1


def test_pdf_page_limit() -> None:
    data = make_pdf([f"page {i}" for i in range(5)])
    result = extract_text(data, "application/pdf", options=ExtractOptions(max_pdf_pages=2))
    assert len(result.pages) == 2


def test_pdf_corrupt_is_extraction_error() -> None:
    with pytest.raises(ExtractionError) as info:
        extract_text(b"%PDF-1.4\n garbage without objects", "application/pdf")
    assert {a.handler for a in info.value.attempts} == {"pdfium", "pypdf"}


def test_pdf_user_password_is_encrypted_error() -> None:
    import pypdf

    writer = pypdf.PdfWriter(clone_from=io.BytesIO(make_pdf(["secret QX5"])))
    writer.encrypt(user_password="pw", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(EncryptedPdfError):
        extract_text(out.getvalue(), "application/pdf")


def test_pdf_owner_password_only_opens() -> None:
    import pypdf

    writer = pypdf.PdfWriter(clone_from=io.BytesIO(make_pdf(["restricted QX6"])))
    writer.encrypt(user_password="", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    assert "QX6" in extract_text(out.getvalue(), "application/pdf").text


# --- DOCX -------------------------------------------------------------------------------


def test_docx_headings_lists_tables_headers() -> None:
    def build(document) -> None:  # type: ignore[no-untyped-def]
        document.add_heading("Title QD1", level=1)
        document.add_paragraph("Body paragraph QD2")
        document.add_paragraph("Bullet QD3", style="List Bullet")
        table = document.add_table(rows=2, cols=2)
        table.cell(0, 0).text = "H1"
        table.cell(0, 1).text = "H|2"
        table.cell(1, 0).text = "v1"
        table.cell(1, 1).text = "v2"
        document.sections[0].header.paragraphs[0].text = "Header QD4"

    text = extract_text(make_docx(build), DOCX).text
    assert "# Title QD1" in text
    assert "Body paragraph QD2" in text
    assert "- Bullet QD3" in text
    assert "| H1 | H\\|2 |" in text and "| v1 | v2 |" in text
    assert text.index("Header QD4") < text.index("Title QD1")


def test_docx_not_a_zip() -> None:
    with pytest.raises(ExtractionError):
        extract_text(b"PK\x03\x04 truncated", DOCX)


def test_options_fingerprint_tracks_every_field() -> None:
    assert ExtractOptions().fingerprint() == ExtractOptions().fingerprint()
    assert ExtractOptions(max_pdf_pages=5).fingerprint() != ExtractOptions().fingerprint()
    with pytest.raises(ValueError):
        ExtractOptions(unknown_knob=1)  # type: ignore[call-arg]


def test_one_set_of_limits_reaches_extraction_in_processing(tmp_path: Path) -> None:
    # ExtractOptions is BinaryConfig: the limits a file is normalised under are the ones its
    # text is read under (a JSON nested past max_json_depth is refused while extracting).
    assert ExtractOptions is BinaryConfig
    path = tmp_path / "deep.json"
    path.write_bytes(b'{"a": [[[["QE9"]]]]}')
    item = FileInput(key="k", path=path, filename="deep.json")
    store = BlobStore(tmp_path / "store")
    loose = ProcessingConfig(isolate=False)
    ((row,),) = process_files([item], loose, blob_store=store)
    assert row.error_type is None and "QE9" in (row.text or "")
    strict = ProcessingConfig(binary=BinaryConfig(max_json_depth=3), isolate=False)
    ((row,),) = process_files([item], strict, blob_store=store)
    assert (row.error_type, row.stage) == ("LimitExceededError", "extract")
    assert "max_json_depth=3" in (row.error_message or "")


SAMPLE = "Grüße aus Köln, QE1 — 15 € bitte.\n" * 3


@pytest.mark.parametrize(
    ("data", "declared", "expected"),
    [
        (SAMPLE.encode("utf-8"), None, "utf-8"),
        (b"\xef\xbb\xbf" + SAMPLE.encode(), None, "utf-8"),  # BOM wins
        (SAMPLE.encode("utf-16"), None, "utf-16-le"),  # BOM (little-endian on this platform)
        (SAMPLE.encode("utf-16-be"), None, "utf-16-be"),  # no BOM: NULs on even bytes
        (SAMPLE.encode("utf-16-le"), None, "utf-16-le"),  # no BOM: NULs on odd bytes
        (SAMPLE.encode("utf-32-le"), None, "utf-32-le"),  # no BOM: three NULs in four
        (SAMPLE.encode("utf-32-be"), None, "utf-32-be"),
        (SAMPLE.encode("cp1252"), None, "cp1252"),  # Latin guesses collapse to cp1252
        (SAMPLE.encode("cp1252"), "latin-1", "cp1252"),  # Latin-1 labels read as cp1252
        (SAMPLE.encode("utf-8"), "latin-1", "utf-8"),  # valid UTF-8 outranks the hint
        ("日本語のテキスト、髙橋さん。".encode("cp932") * 4, None, "cp932"),
    ],
    ids=[
        "utf8",
        "utf8-bom",
        "utf16-bom",
        "utf16be-nobom",
        "utf16le-nobom",
        "utf32le-nobom",
        "utf32be-nobom",
        "cp1252",
        "hint-latin1",
        "hint-ignored",
        "cp932",
    ],
)
def test_detect_encoding(data: bytes, declared: str | None, expected: str) -> None:
    from content_core.extract._decode import decode_bytes, detect_encoding

    assert detect_encoding(data, declared=declared) == expected
    assert "\x00" not in decode_bytes(data, declared=declared)


def test_pdfium_line_break_hyphen_marker_is_dropped() -> None:
    # PDFium reports "ef-<newline>ficient" as "ef\ufffeficient".
    assert clean_text("ef\ufffeficient \uffff") == "efficient "


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_pdf_rotated_pages_keep_reading_order(rotate: int) -> None:
    from tests.core.extract_inputs import pdf_rotated_page

    text = extract_text(pdf_rotated_page(rotate), "application/pdf").text
    assert text.index("QG121") < text.index("QG122") < text.index("QG123")
