"""message_parts in a real in-process batch run on corpus files: images as data URLs, PDF pages
as images when asked, text otherwise; its checks; a rerun replaces; the library stage with
other settings; stored parts back into a chat message."""

from __future__ import annotations

import base64
import hashlib
import io
import shutil
from pathlib import Path

import dagster as dg
from PIL import Image

from content_assets.definitions import build_definitions
from content_core.agents import PdfHandling
from content_core.agents.parts import message_from_parts
from content_core.pipeline import build_message_parts
from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS
from tests.support.sensors import tick_sensor

FILES = [
    "pdf/fake-memo.pdf",  # one letter page of text
    "png/DA-1p.png",  # an image with text (OCR)
    "jpeg/example.jpg",
    "tiff/multipage.tiff",  # not a chat-API format: sent as PNG; its PDF rendition's pages
    "docx/docx-tables.docx",
    "zip/simple.zip",  # members: HTML and CSV
    "svg/svgo-logo.svg",  # markup: its picture is its PNG rendition
]


def _decode(url: str) -> tuple[str, bytes]:
    head, payload = url.split(",", 1)
    return head.removeprefix("data:").removesuffix(";base64"), base64.b64decode(payload)


def test_message_parts_in_a_batch_run(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for name in FILES:
        shutil.copy(CORPUS / name, inbox / Path(name).name)
    store = ContentStore(tmp_path / "store")
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(inbox),
            "CONTENT_SOURCE_SETTLE_S": "0",
            "CONTENT_MESSAGE_PDF": "pages",
        }
    )
    batch = tick_sensor(defs, instance, None).run_requests[0].partition_key
    job = defs.resolve_job_def("ingest_batch_job")
    result = job.execute_in_process(instance=instance, partition_key=batch)
    assert result.success
    checks = [
        c for c in result.get_asset_check_evaluations()
        if c.asset_key == dg.AssetKey("message_parts")
    ]
    assert len(checks) == 3 and all(c.passed for c in checks)

    rows = store.query(
        "SELECT path, artifact_id, part_index, part_type, page, text, image_url, image_sha256, "
        "error_type FROM current_message_parts ORDER BY path, artifact_id, part_index"
    ).to_pylist()
    by_path: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_path.setdefault(str(row["path"]), []).append(row)
    assert not [r for r in rows if r["error_type"]]

    # The PDF: its one page as a PNG rendered at 100 DPI (a letter page: 850x1100 pixels).
    (memo,) = by_path["fake-memo.pdf"]
    assert (memo["part_type"], memo["page"]) == ("image_url", 1)
    media_type, png = _decode(str(memo["image_url"]))
    assert media_type == "image/png"
    assert Image.open(io.BytesIO(png)).size == (850, 1100)
    assert memo["image_sha256"] == hashlib.sha256(png).hexdigest()

    # A JPEG is sent as it is: the data URL holds the artifact's own bytes.
    (jpeg,) = by_path["example.jpg"]
    media_type, data = _decode(str(jpeg["image_url"]))
    assert media_type == "image/jpeg" and data == (CORPUS / "jpeg/example.jpg").read_bytes()

    # An image with OCR text: the image, then its text, boxed where OCR read it (pixels).
    assert [r["part_type"] for r in by_path["DA-1p.png"]] == ["image_url", "text"]
    image_part, ocr_part = store.query(
        "SELECT boxes FROM current_message_parts WHERE path = 'DA-1p.png' ORDER BY part_index"
    ).to_pylist()
    assert image_part["boxes"] == [] and ocr_part["boxes"]
    width, height = Image.open(CORPUS / "png/DA-1p.png").size
    for box in ocr_part["boxes"]:
        assert box["page"] == 1
        assert 0 <= box["x0"] < box["x1"] <= width and 0 <= box["y0"] < box["y1"] <= height

    # TIFF: its first frame as PNG, and its PDF rendition's three pages.
    tiff = by_path["multipage.tiff"]
    assert {_decode(str(r["image_url"]))[0] for r in tiff} == {"image/png"}
    assert sorted(r["page"] for r in tiff if r["page"] is not None) == [1, 2, 3]

    # SVG: the PNG rendition is the image; the SVG row itself is never decoded as pixels.
    svg = by_path["svgo-logo.svg"]
    assert [_decode(str(r["image_url"]))[0] for r in svg if r["image_url"]] == ["image/png"]

    # Documents: their extracted text, one part each.
    texts = store.query(
        "SELECT path, artifact_id, text FROM current_normalised_artifacts "
        "WHERE coalesce(text, '') <> '' AND path IN ('docx-tables.docx', 'simple.zip')"
    ).to_pylist()
    assert len(texts) == 3
    for doc in texts:
        parts = [r for r in by_path[doc["path"]] if r["artifact_id"] == doc["artifact_id"]]
        assert [(p["part_type"], p["text"]) for p in parts] == [("text", doc["text"])]

    # A rerun replaces the batch's rows.
    again = job.execute_in_process(instance=instance, partition_key=batch)
    assert again.success
    assert store.query("SELECT count(*) AS n FROM message_parts").to_pylist() == [
        {"n": len(rows)}
    ]

    # The library stage with other settings: PDFs as text, or pages each followed by its text.
    build_message_parts(store, batch, PdfHandling())
    (memo_text,) = store.query(
        "SELECT part_type, text FROM message_parts WHERE path = 'fake-memo.pdf'"
    ).to_pylist()
    assert memo_text["part_type"] == "text" and "20,000 bottles of water" in memo_text["text"]
    _assert_boxes_cover_lines(store, "fake-memo.pdf", page=None)
    report = build_message_parts(store, batch, PdfHandling(mode="pages", with_text=True, dpi=50))
    assert report.failures == 0 and report.figures["pdf"] == "pages"
    memo_rows = store.query(
        "SELECT part_type, page, text, image_url FROM current_message_parts "
        "WHERE path = 'fake-memo.pdf' ORDER BY part_index"
    ).to_pylist()
    assert [(r["part_type"], r["page"]) for r in memo_rows] == [("image_url", 1), ("text", 1)]
    _assert_boxes_cover_lines(store, "fake-memo.pdf", page=1)

    # An artifact past its time budget is one failure row; the others are made. (A page at
    # 300 DPI, 4 million pixels, takes far longer to render and encode than 20 ms.)
    report = build_message_parts(
        store, batch, PdfHandling(mode="pages", dpi=300, timeout_s=0.02)
    )
    (late,) = store.query(
        "SELECT part_index, part_type, error_type, error_message FROM message_parts "
        "WHERE path = 'fake-memo.pdf'"
    ).to_pylist()
    assert (late["part_index"], late["part_type"], late["error_type"]) == (
        0, None, "StageTimeoutError"
    )
    assert "message_parts" in late["error_message"]
    assert report.failures >= 1

    # Stored parts are a chat message as they are.
    message = message_from_parts(memo_rows).to_openai()
    assert message["role"] == "user"
    assert [p["type"] for p in message["content"]] == ["image_url", "text"]
    assert message["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")


def _assert_boxes_cover_lines(store: ContentStore, path: str, page: int | None) -> None:
    """The boxes of `path`'s text part (of `page`, or its one text part) hold every line of
    text its artifact has on those pages, and an image part has none."""
    parts = store.query(
        "SELECT part_type, page, boxes FROM current_message_parts WHERE path = ?", [path]
    ).to_pylist()
    assert all(p["boxes"] == [] for p in parts if p["part_type"] == "image_url")
    (text_part,) = [p for p in parts if p["part_type"] == "text" and p["page"] == page]
    boxes = text_part["boxes"]
    assert boxes
    (artifact,) = store.query(
        "SELECT text, text_boxes FROM current_normalised_artifacts WHERE path = ?", [path]
    ).to_pylist()
    lines = [
        line for line in artifact["text_boxes"]
        if (page is None or line["page"] == page)
        and any(c.isalnum() for c in artifact["text"][line["start"]:line["end"]])
    ]  # fmt: skip
    assert lines
    tol = 0.01
    for line in lines:
        assert any(
            box["page"] == line["page"]
            and box["x0"] - tol <= line["x0"] and line["x1"] <= box["x1"] + tol
            and box["y0"] - tol <= line["y0"] and line["y1"] <= box["y1"] + tol
            for box in boxes
        ), f"line {line} of {path} is in none of its text part's boxes"
