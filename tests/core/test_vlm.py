"""The vision route (content_core.ocr.vlm, .quality, .vlm_budget): which real PDF pages are
hard, what goes to a local chat-completions server with image parts, caps, the cache and a
failing endpoint. The server is real (tests/support/chat_server.py on 127.0.0.1); its replies
are derived from the page image it was sent."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image
from pydantic import SecretStr, ValidationError

from content_core.binary import media_types as mt
from content_core.extract import extract_text
from content_core.extract.base import ExtractedText
from content_core.ocr import (
    OcrConfig,
    OcrOutcome,
    VlmBudget,
    VlmConfig,
    new_budget_file,
    ocr_pdf,
    text_quality,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
from tests.fixtures.corpus import CORPUS
from tests.support.chat_server import ChatServer, Fault, page_markdown

PDFS = CORPUS / "pdf"
SCAN = PDFS / "MEDRPT-2024-PAT-3847_medical_report_scan.pdf"  # 3 pages, images only
# Page 1: proofs from a real pdflatex thesis (formula-dense); page 2: its prose.
FORMULAS = PDFS / "geotopo-formulas-2p.pdf"
MODEL = "test-vlm"


def _pages(path: Path) -> tuple[bytes, ExtractedText]:
    data = path.read_bytes()
    return data, extract_text(data, mt.PDF, filename=path.name)


def _page_texts(extracted: ExtractedText) -> list[str]:
    return [extracted.text[span.start : span.end] for span in extracted.pages]


def _config(server: ChatServer, *, mode: str = "off", **vlm: object) -> OcrConfig:
    # OCR off unless a test needs it: the vision route must stand on its own.
    return OcrConfig.model_validate(
        {"mode": mode, "vlm": {"url": server.base_url, "model": MODEL, **vlm}}
    )


def _read(path: Path, config: OcrConfig, cache: Path | None, **kw: object) -> OcrOutcome:
    data, extracted = _pages(path)
    return ocr_pdf(data, extracted, config, cache_dir=cache, **kw)  # type: ignore[arg-type]


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer(responder=page_markdown) as running:
        yield running


# ------------------------------------------------------------------------- the quality score


@pytest.mark.parametrize(
    ("name", "page", "reason"),
    [
        ("geotopo-formulas-2p.pdf", 1, "formulas"),  # 10 % mathematical symbols, broken lines
        ("geotopo-formulas-2p.pdf", 2, "ok"),  # the same thesis's prose
        ("multi-column-2p.pdf", 1, "ok"),  # a paper with a few symbols in its authors line
        ("multi-column-2p.pdf", 2, "ok"),
        ("SPARSE-2024-INV-1234_borderless_table.pdf", 1, "ok"),  # "|" and "+" in a table
        ("korean-text-with-tables.pdf", 1, "ok"),  # Hangul with tables and short cells
        ("habibi.pdf", 1, "ok"),  # four Greek-looking glyphs in 23 characters say nothing
        ("layout-parser-paper-fast.pdf", 1, "ok"),  # one unreadable glyph in 1974
    ],
)
def test_quality_score_on_real_pages(name: str, page: int, reason: str) -> None:
    _, extracted = _pages(PDFS / name)
    quality = text_quality(_page_texts(extracted)[page - 1])
    hard = quality.score < VlmConfig().min_quality
    assert hard == (reason != "ok"), quality
    if hard:
        assert quality.reason == reason


def test_unreadable_glyphs_lower_the_score() -> None:
    _, extracted = _pages(PDFS / "markitdown-test.pdf")
    text = _page_texts(extracted)[0]
    assert text_quality(text).score == 1.0
    # A font without a Unicode map: every fifth glyph comes out as U+FFFD.
    damaged = "".join("\ufffd" if i % 5 == 0 and not c.isspace() else c for i, c in enumerate(text))
    quality = text_quality(damaged)
    assert quality.reason == "glyphs" and quality.score < 0.5


# ------------------------------------------------------------------------------ the config


def test_off_by_default_and_blank_means_unset() -> None:
    assert not OcrConfig().vlm.enabled
    assert not VlmConfig(url="", model=MODEL).enabled
    assert not VlmConfig(url="http://127.0.0.1:9/v1", model=" ").enabled
    assert VlmConfig(url="http://127.0.0.1:9/v1", model=MODEL).enabled


def test_key_stays_out_of_dumps_and_fingerprints() -> None:
    with_key = OcrConfig(
        vlm=VlmConfig(url="http://h/v1", model=MODEL, api_key=SecretStr("sk-secret"))
    )
    without = OcrConfig(vlm=VlmConfig(url="http://h/v1", model=MODEL))
    assert "sk-secret" not in with_key.model_dump_json() + repr(with_key)
    assert with_key.fingerprint() == without.fingerprint()
    assert ProcessingConfig(ocr=with_key).fingerprint() != ProcessingConfig().fingerprint()


@pytest.mark.parametrize(
    "bad",
    [
        {"prompt_version": "v0"},  # no such prompt file
        {"max_pages_per_file": -1},
        {"timeout_s": 0},
        {"unknown": 1},  # unknown keys are refused
    ],
)
def test_bad_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        VlmConfig.model_validate({"url": "http://h/v1", "model": MODEL, **bad})


# ------------------------------------------------------------------------ pages to the model


def test_no_request_when_off(server: ChatServer, tmp_path: Path) -> None:
    # The server runs, but nothing names it: neither the scan nor the formula page goes.
    for path in (SCAN, FORMULAS):
        outcome = _read(path, OcrConfig(mode="off"), tmp_path)
        assert not any(page.reason.startswith("vlm") for page in outcome.pages)
    assert server.calls == []


def test_formula_page_goes_and_prose_page_does_not(server: ChatServer, tmp_path: Path) -> None:
    data, extracted = _pages(FORMULAS)
    outcome = ocr_pdf(data, extracted, _config(server), cache_dir=tmp_path)

    assert len(server.calls) == 1
    call = server.calls[0]
    assert call.path == "/v1/chat/completions" and call.body["model"] == MODEL
    assert "LaTeX" in call.user_text and "Markdown" in call.user_text
    (png,) = call.images
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG"
        # A4 at 150 DPI.
        assert abs(image.width - 1240) <= 2 and abs(image.height - 1754) <= 2

    first, second = _page_texts(outcome.extracted)
    assert first == page_markdown(call.body, call.user_text)
    assert second == _page_texts(extracted)[1]  # the prose keeps its text layer
    assert [(p.page, p.reason) for p in outcome.pages] == [(1, f"vlm {MODEL}: formulas")]
    assert outcome.engine == f"vlm:{MODEL}"
    assert outcome.confidence is None  # a model gives no confidence
    assert outcome.notes == ()


def test_scan_pages_go_to_the_model_instead_of_ocr(server: ChatServer, tmp_path: Path) -> None:
    outcome = _read(SCAN, _config(server), tmp_path)
    assert len(server.calls) == 3
    assert [(p.page, p.reason) for p in outcome.pages] == [
        (n, f"vlm {MODEL}: no_text") for n in (1, 2, 3)
    ]
    replies = [page_markdown(call.body, call.user_text) for call in server.calls]
    # Three different page images, so three different answers, each on its own page.
    assert len(set(replies)) == 3
    assert sorted(_page_texts(outcome.extracted)) == sorted(replies)
    assert outcome.notes == ()


def test_per_file_cap_notes_the_pages_left(server: ChatServer, tmp_path: Path) -> None:
    outcome = _read(SCAN, _config(server, max_pages_per_file=1), tmp_path)
    assert len(server.calls) == 1
    assert [p.page for p in outcome.pages] == [1]
    assert any(
        "pages 2, 3 not sent to the VLM" in n and "CONTENT_VLM_MAX_PAGES" in n
        for n in outcome.notes
    ), outcome.notes
    # OCR is off here, so the pages left say so too: nothing is silently dropped.
    assert any("OCR is off" in n for n in outcome.notes), outcome.notes


def test_batch_cap_is_shared_between_files(server: ChatServer, tmp_path: Path) -> None:
    budget = VlmBudget(new_budget_file(tmp_path / "cache"), limit=2)
    config = _config(server)
    scan = _read(SCAN, config, tmp_path / "cache", vlm_budget=budget)
    formulas = _read(FORMULAS, config, tmp_path / "cache", vlm_budget=budget)
    assert len(server.calls) == 2
    assert [p.page for p in scan.pages] == [1, 2]
    assert any("page 3 not sent" in n and "CONTENT_VLM_MAX_BATCH_PAGES" in n for n in scan.notes)
    assert formulas.pages == ()
    assert any("page 1 not sent" in n for n in formulas.notes), formulas.notes


def test_budget_counts_exactly_under_concurrent_takers(tmp_path: Path) -> None:
    budget = VlmBudget(new_budget_file(tmp_path), limit=25)
    with ThreadPoolExecutor(max_workers=8) as pool:
        granted = sum(pool.map(lambda _: budget.take(), range(80)))
    assert granted == 25


def test_batch_cap_through_process_files(server: ChatServer, tmp_path: Path) -> None:
    config = ProcessingConfig(ocr=_config(server, max_pages_per_batch=2), isolate=False)
    inputs = [FileInput(key=p.name, path=p, filename=p.name) for p in (SCAN, FORMULAS)]
    results = process_files(inputs, config, blob_store=BlobStore(tmp_path / "blobs"))
    assert len(server.calls) == 2
    records = [rows[0] for rows in results]
    assert [len(r.ocr_pages) for r in records] == [2, 0]
    notes = " ".join(n for r in records for n in r.notes)
    assert "CONTENT_VLM_MAX_BATCH_PAGES" in notes
    # The batch's count is gone once the batch is done.
    assert list((tmp_path / "cache").rglob(".vlm-budget-*")) == []


def test_second_run_is_served_from_the_cache(server: ChatServer, tmp_path: Path) -> None:
    config = _config(server)
    first = _read(FORMULAS, config, tmp_path)
    assert len(server.calls) == 1
    again = _read(FORMULAS, config, tmp_path)
    assert len(server.calls) == 1  # no second request
    assert again.extracted.text == first.extracted.text and again.pages == first.pages
    # Another model, or another prompt, is another key.
    _read(
        FORMULAS,
        _config(server).model_copy(
            update={"vlm": config.vlm.model_copy(update={"model": "other-vlm"})}
        ),
        tmp_path,
    )
    assert len(server.calls) == 2


def test_key_is_sent_as_a_bearer_token(server: ChatServer, tmp_path: Path) -> None:
    _read(FORMULAS, _config(server, api_key="sk-test"), None)
    assert server.calls[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("faults", "said"),
    [
        ([Fault(status=503)] * 2, "HTTP 503 after 2 attempts"),  # retried once, then given up
        ([Fault(status=400, body='{"error": {"message": "no images"}}')], "HTTP 400"),
        ([Fault(status=200, body='{"choices": "nope"}')], "malformed reply"),
        ([Fault(status=200, body="not json")], "malformed reply"),
    ],
)
def test_failing_endpoint_keeps_the_text_layer(
    server: ChatServer, tmp_path: Path, faults: list[Fault], said: str
) -> None:
    server.script(*faults)
    data, extracted = _pages(FORMULAS)
    outcome = ocr_pdf(data, extracted, _config(server, max_retries=1), cache_dir=tmp_path)
    assert outcome.extracted.text == extracted.text
    assert outcome.pages == () and outcome.engine is None
    (note,) = outcome.notes
    assert note.startswith("page 1: the VLM failed") and said in note, note
    assert "text layer" in note
    assert not list(tmp_path.rglob("*.json"))  # a failure is not cached


def test_unreachable_endpoint_leaves_the_scan_to_ocr(tmp_path: Path) -> None:
    with ChatServer() as gone:
        url = gone.base_url
    config = OcrConfig.model_validate(
        {"vlm": {"url": url, "model": MODEL, "max_retries": 0, "max_pages_per_file": 1}}
    )
    outcome = _read(SCAN, config, tmp_path)
    # Page 1 failed at the model and was read by OCR; pages 2 and 3 were over the cap.
    assert [p.page for p in outcome.pages] == [1, 2, 3]
    assert not any(p.reason.startswith("vlm") for p in outcome.pages)
    assert "SEATTLE GENERAL HOSPITAL" in outcome.extracted.text.upper()
    assert any(
        n.startswith("page 1: the VLM failed") and "ConnectError" in n for n in outcome.notes
    ), outcome.notes


def test_time_budget_stops_pages_from_going(server: ChatServer, tmp_path: Path) -> None:
    outcome = _read(SCAN, _config(server), tmp_path, deadline=0.0)
    assert server.calls == []
    assert any("not sent to the VLM: past the time budget" in n for n in outcome.notes)


def test_cache_entry_holds_the_markdown_and_model(server: ChatServer, tmp_path: Path) -> None:
    outcome = _read(FORMULAS, _config(server), tmp_path)
    (entry,) = [json.loads(p.read_text()) for p in tmp_path.rglob("*.json")]
    assert entry["model"] == MODEL
    assert json.loads(entry["output_json"])["markdown"] == _page_texts(outcome.extracted)[0]
