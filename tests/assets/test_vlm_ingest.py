"""Hard PDF pages through the real `content-pipeline ingest` with CONTENT_VLM_URL and
CONTENT_VLM_MODEL pointing at a local chat-completions server: the scan's pages and the
thesis's formula page are the model's Markdown, the prose page keeps its text layer, and
`ocr_pages` says which pages went and why (tests/core/test_vlm.py covers the rules)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from content_assets.resources import NormaliserResource
from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS
from tests.support.chat_server import ChatServer, page_markdown
from tests.support.cli import run_cli

# One ingest of the real CLI; it may take a minute on a loaded machine.
pytestmark = pytest.mark.timeout(900)

MODEL = "test-vlm"
FILES = ("MEDRPT-2024-PAT-3847_medical_report_scan.pdf", "geotopo-formulas-2p.pdf")


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer(responder=page_markdown) as running:
        yield running


def test_ingest_sends_hard_pages_to_the_vlm(tmp_path: Path, server: ChatServer) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    for name in FILES:
        shutil.copy(CORPUS / "pdf" / name, folder / name)
    store, home = tmp_path / "store", tmp_path / "home"

    def ingest() -> subprocess.CompletedProcess[str]:
        return run_cli(
            "ingest",
            str(folder),
            home=home,
            store=store,
            CONTENT_VLM_URL=server.base_url,
            CONTENT_VLM_MODEL=MODEL,
            CONTENT_VLM_API_KEY="sk-vlm-test",
            CONTENT_OCR="off",
        )

    done = ingest()
    assert done.returncode == 0, done.stdout + done.stderr

    assert len(server.calls) == 4  # three scan pages and one formula page
    assert {call.headers["authorization"] for call in server.calls} == {"Bearer sk-vlm-test"}
    answers = {page_markdown(call.body, call.user_text) for call in server.calls}
    rows = (
        ContentStore(store)
        .query(
            "SELECT path, text, ocr_engine, ocr_pages, notes FROM current_normalised_artifacts "
            "ORDER BY path"
        )
        .to_pylist()
    )
    by_path = {row["path"]: row for row in rows}
    assert set(by_path) == set(FILES)
    scan, thesis = by_path[FILES[0]], by_path[FILES[1]]
    assert [(p["page"], p["reason"]) for p in scan["ocr_pages"]] == [
        (n, f"vlm {MODEL}: no_text") for n in (1, 2, 3)
    ]
    assert [(p["page"], p["reason"]) for p in thesis["ocr_pages"]] == [
        (1, f"vlm {MODEL}: formulas")
    ]
    assert scan["ocr_engine"] == thesis["ocr_engine"] == f"vlm:{MODEL}"
    for answer in answers:
        assert answer in scan["text"] or answer in thesis["text"]
    # The formula page is the model's Markdown; the prose page keeps its own text layer.
    assert "einfach zusammenhängend" not in " ".join(thesis["text"].split())
    assert "Dieses Skript wurde im Wintersemester 2013/2014" in thesis["text"]
    assert scan["notes"] == thesis["notes"] == []

    # A second ingest of the same files is served from the cache: no new request.
    again = ingest()
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(server.calls) == 4


def test_resource_builds_the_vlm_config() -> None:
    resource = NormaliserResource(
        vlm_url="http://127.0.0.1:8000/v1",
        vlm_model=MODEL,
        vlm_max_pages=3,
        vlm_max_batch_pages=7,
        vlm_api_key="sk-x",
    )
    vlm = resource.to_core().ocr.vlm
    assert vlm.enabled and (vlm.max_pages_per_file, vlm.max_pages_per_batch) == (3, 7)
    assert vlm.api_key is not None and vlm.api_key.get_secret_value() == "sk-x"
    assert not NormaliserResource().to_core().ocr.vlm.enabled  # off by default
    with pytest.raises(ValueError):
        NormaliserResource(vlm_url="http://h/v1", vlm_model=MODEL, vlm_max_pages=-1)
