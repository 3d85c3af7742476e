"""OCR (content_core.ocr): scanned PDFs, rotated scans, images of text, kept text layers,
the page cache, and what a row says when OCR is off or cannot run.

Every input is generated (tests/fixtures/scans.py): known lines rendered to page images, so
word accuracy is measured against the text that was drawn.
"""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from content_core.binary.textpdf import assemble_pdf
from content_core.cache import CachedOutput, ExtractionCache
from content_core.discovery import discover_pending
from content_core.errors import OcrUnavailableError
from content_core.ocr import (
    OcrConfig,
    build_engine,
    read_upright,
    rotation_candidates,
    tessdata_dir,
)
from content_core.pipeline import PipelineConfig, run_batch
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from content_core.store.blobs import BlobStore
from tests.core.extract_inputs import make_pdf
from tests.fixtures.scans import joined_pdfs, page_lines, render_page, scanned_pdf, word_accuracy
from tests.support.offline import run_offline

TESSERACT = OcrConfig(mode="tesseract")
RAPIDOCR = OcrConfig(mode="rapidocr")
MIN_ACCURACY = 0.9


def _process(
    tmp_path: Path, name: str, data: bytes, ocr: OcrConfig, *, isolate: bool = False
) -> list[ArtifactRecord]:
    path = tmp_path / name
    path.write_bytes(data)
    config = ProcessingConfig(ocr=ocr, isolate=isolate, timeout_s=240)
    store = BlobStore(tmp_path / "store" / "blobs")
    [records] = process_files([FileInput(key=name, path=path, filename=name)], config,
                              blob_store=store)
    return records


def _page(record: ArtifactRecord, number: int) -> str:
    assert record.text is not None
    span = record.pages[number - 1]
    return record.text[span.start : span.end]


@pytest.mark.parametrize(
    ("ocr", "dpi", "noise"),
    [
        pytest.param(TESSERACT, 200, 0.0, id="tesseract-200dpi"),
        pytest.param(TESSERACT, 300, 0.01, id="tesseract-300dpi-noise"),
        pytest.param(RAPIDOCR, 200, 0.01, id="rapidocr-200dpi-noise"),
    ],
)
def test_a_scanned_pdf_is_read_in_the_worker_pool(
    tmp_path: Path, ocr: OcrConfig, dpi: int, noise: float
) -> None:
    lines = [page_lines(1, count=8), page_lines(2, count=8)]
    pdf = scanned_pdf([render_page(p, dpi=dpi, noise=noise, seed=i) for i, p in
                       enumerate(lines)], dpi=dpi)
    [record] = _process(tmp_path, "scan.pdf", pdf, ocr, isolate=True)
    assert record.text_status == "ok" and record.error_type is None
    assert record.ocr_engine == ocr.mode
    assert [page.page for page in record.ocr_pages] == [1, 2]
    assert all(page.reason == "no_text" and page.rotation == 0 for page in record.ocr_pages)
    assert record.ocr_confidence is not None and record.ocr_confidence > 0.7
    for number, known in enumerate(lines, start=1):
        assert word_accuracy(" ".join(known), _page(record, number)) >= MIN_ACCURACY


@pytest.mark.parametrize(
    ("ocr", "rotation"),
    [
        pytest.param(TESSERACT, 90, id="tesseract-90"),
        pytest.param(TESSERACT, 180, id="tesseract-180"),
        pytest.param(TESSERACT, 270, id="tesseract-270"),
        # RapidOCR reads a turned line as well as an upright one, so only the page-level fix
        # puts the lines back in order.
        pytest.param(RAPIDOCR, 90, id="rapidocr-90"),
    ],
)
def test_a_rotated_scan_is_turned_upright(ocr: OcrConfig, rotation: int) -> None:
    engine = build_engine(ocr)
    assert engine is not None
    lines = page_lines(rotation, count=6)
    image = render_page(lines, dpi=200, rotation=rotation)
    result, fixed = read_upright(engine, image, min_confidence=ocr.min_confidence)
    assert (rotation + fixed) % 360 == 0
    assert word_accuracy(" ".join(lines), result.text) >= MIN_ACCURACY


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
@pytest.mark.parametrize(
    ("noise", "paper"), [(0.0, 1.0), (0.01, 1.0), (0.01, 0.8)], ids=["clean", "noise", "grey"]
)
def test_the_pixels_alone_tell_which_way_up_a_latin_page_is(
    rotation: int, noise: float, paper: float
) -> None:
    # So a turned page costs one recognition, not two; on grey paper (a yellowed scan) too.
    image = render_page(page_lines(rotation + 20), dpi=200, noise=noise, rotation=rotation)
    image = Image.eval(image, lambda value: int(value * paper))
    first, second = rotation_candidates(image)
    assert (rotation + first) % 360 == 0 and (first - second) % 360 == 180


def test_a_rotated_page_of_a_pdf_records_its_rotation(tmp_path: Path) -> None:
    lines = page_lines(7, count=6)
    pdf = scanned_pdf([render_page(lines, dpi=200, rotation=180)])
    [record] = _process(tmp_path, "upside-down.pdf", pdf, TESSERACT)
    assert [(p.page, p.rotation) for p in record.ocr_pages] == [(1, 180)]
    assert word_accuracy(" ".join(lines), record.text or "") >= MIN_ACCURACY


def test_a_good_text_layer_is_kept_and_only_the_scanned_page_is_read(tmp_path: Path) -> None:
    text_page = "Native text layer QO101 " + " ".join(page_lines(3, count=4))
    scan_lines = page_lines(4, count=6)
    pdf = joined_pdfs(make_pdf([text_page]), scanned_pdf([render_page(scan_lines)]))
    [record] = _process(tmp_path, "mixed.pdf", pdf, TESSERACT)
    assert _page(record, 1) == text_page  # untouched: not re-read, not re-flowed
    assert [page.page for page in record.ocr_pages] == [2]
    assert word_accuracy(" ".join(scan_lines), _page(record, 2)) >= MIN_ACCURACY


def test_a_short_genuine_text_page_is_kept(tmp_path: Path) -> None:
    # Few characters, but no picture under them: a title page, not a scan.
    [record] = _process(tmp_path, "title.pdf", make_pdf(["Title QO102"]), TESSERACT)
    assert record.text == "Title QO102" and record.ocr_pages == ()


def test_a_garbage_text_layer_is_replaced_by_ocr(tmp_path: Path) -> None:
    # A scan under a text layer whose font maps its codes to private-use glyphs (what a font
    # without a Unicode map gives): hundreds of characters, none of them readable.
    lines = page_lines(5, count=6)
    pdf = _overlay(_private_use_pdf(), scanned_pdf([render_page(lines)]))
    [record] = _process(tmp_path, "garbage.pdf", pdf, TESSERACT)
    assert [(p.page, p.reason) for p in record.ocr_pages] == [(1, "garbage")]
    assert word_accuracy(" ".join(lines), record.text or "") >= MIN_ACCURACY


def test_a_scan_with_a_sliver_of_text_is_read_and_a_searchable_scan_is_kept(
    tmp_path: Path,
) -> None:
    lines = page_lines(15, count=6)
    scan = scanned_pdf([render_page(lines)])
    # A scanner's stamp in real text over a full-page image: the page is still a picture.
    [stamped] = _process(tmp_path, "stamped.pdf", _overlay(make_pdf(["Scanned QO105"]), scan),
                         TESSERACT)
    assert [(p.page, p.reason) for p in stamped.ocr_pages] == [(1, "image")]
    assert word_accuracy(" ".join(lines), stamped.text or "") >= MIN_ACCURACY
    # A searchable scan: a full text layer over the image is kept as it is.
    layer = "Searchable layer QO106 " + " ".join(lines)
    [searchable] = _process(tmp_path, "searchable.pdf", _overlay(make_pdf([layer]), scan),
                            TESSERACT)
    assert searchable.text == layer and searchable.ocr_pages == ()


def _private_use_pdf() -> bytes:
    names = " ".join(f"/uniE0{code:02X}" for code in range(65, 91))
    content = b"BT /F1 12 Tf 72 720 Td (" + b"ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 10 + b") Tj ET"
    return assemble_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding "
        b"/Differences [65 " + names.encode() + b"] >> >>",
    ])


def _overlay(text_pdf: bytes, scan_pdf: bytes) -> bytes:
    """The scan's page with the text PDF's page drawn over it (one page)."""
    import pypdfium2 as pdfium

    scan = pdfium.PdfDocument(scan_pdf)
    text = pdfium.PdfDocument(text_pdf)
    xobject = text.page_as_xobject(0, scan)
    page = scan[0]
    page.insert_obj(xobject.as_pageobject())
    page.gen_content()
    out = io.BytesIO()
    scan.save(out)
    return out.getvalue()


def _image_bytes(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
    image.convert("RGB").save(out, format=fmt)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("text.png", "PNG"), ("text.jpg", "JPEG"), ("text.tif", "TIFF"), ("text.webp", "WEBP"),
     ("text.heic", "HEIF")],
)
def test_an_image_of_text_gets_ocr_text(tmp_path: Path, name: str, fmt: str) -> None:
    lines = page_lines(6, count=5)
    image = render_page(lines, dpi=200).crop((0, 0, 1654, 900))
    records = _process(tmp_path, name, _image_bytes(image, fmt), TESSERACT)
    record = records[0]
    assert record.kind == "image" and record.text_status == "ok"
    assert record.ocr_engine == "tesseract" and len(record.ocr_pages) == 1
    assert word_accuracy(" ".join(lines), record.text or "") >= MIN_ACCURACY
    # A rendition (HEIC and TIFF become PNG) carries no text: nothing is counted twice.
    assert all(r.text is None for r in records[1:])


def test_a_picture_without_text_keeps_no_text(tmp_path: Path) -> None:
    png = _image_bytes(Image.new("RGB", (400, 300), "red"), "PNG")
    [record] = _process(tmp_path, "red.png", png, TESSERACT)
    assert record.text is None and record.text_status == "no_text_layer"
    assert record.ocr_engine == "tesseract"  # read, and nothing found


def test_a_page_is_never_read_twice(tmp_path: Path) -> None:
    lines = page_lines(8, count=5)
    pdf = scanned_pdf([render_page(lines)])
    [first] = _process(tmp_path, "a.pdf", pdf, TESSERACT)
    cache = tmp_path / "store" / "cache" / "ocr"
    entries = list(cache.glob("??/*.json"))
    assert len(entries) == 1
    # The second run must answer from the cache: make the cached reading recognisable.
    entry = json.loads(entries[0].read_text(encoding="utf-8"))
    reading = json.loads(entry["output_json"])
    entry["output_json"] = json.dumps({**reading, "text": "from the cache QO103"})
    entries[0].write_text(json.dumps(entry), encoding="utf-8")
    [second] = _process(tmp_path, "b.pdf", pdf, TESSERACT)
    assert second.text == "from the cache QO103"
    assert second.ocr_pages == first.ocr_pages
    assert len(list(cache.glob("??/*.json"))) == 1


def test_a_page_another_worker_is_reading_sends_its_file_to_the_back(tmp_path: Path) -> None:
    """Two batches on two workers meeting the same scan: the second neither reads it too nor
    idles. Its file goes to the back of the batch, and when it comes round again it waits
    for the first's reading (the page's claim in the shared cache)."""
    scan = scanned_pdf([render_page(page_lines(9, count=5))])
    (tmp_path / "first").mkdir()
    _process(tmp_path / "first", "a.pdf", scan, TESSERACT)
    [entry] = (tmp_path / "first" / "store" / "cache" / "ocr").glob("??/*.json")
    reading = json.loads(json.loads(entry.read_text(encoding="utf-8"))["output_json"])
    folder = tmp_path / "second"
    folder.mkdir()
    (folder / "scan.pdf").write_bytes(scan)
    text = render_page(page_lines(6, count=5), dpi=200).crop((0, 0, 1654, 900))
    (folder / "text.png").write_bytes(_image_bytes(text, "PNG"))
    inputs = [FileInput(key=name, path=folder / name, filename=name)
              for name in ("scan.pdf", "text.png")]
    config = ProcessingConfig(ocr=TESSERACT, workers=1, timeout_s=240)
    cache = ExtractionCache(folder / "store" / "cache" / "ocr")
    done: list[list[list[ArtifactRecord]]] = []
    worker = threading.Thread(target=lambda: done.append(
        process_files(inputs, config, blob_store=BlobStore(folder / "store" / "blobs"))))
    with cache.claim(entry.stem, deadline=time.monotonic() + 60) as held:
        assert held
        worker.start()
        # One pool process, the scan first: the image's reading appears while the scan's
        # page is still claimed, so the scan did not hold the batch up.
        deadline = time.monotonic() + 120
        while len(cache) == 0 and time.monotonic() < deadline and worker.is_alive():
            time.sleep(0.05)
        assert len(cache) == 1 and worker.is_alive()
        cache.put(entry.stem, CachedOutput(
            output_json=json.dumps({**reading, "text": "read by the claimant QO104"}),
            model="tesseract"))
    worker.join(timeout=240)
    [[[scanned], [image]]] = done
    assert _page(scanned, 1) == "read by the claimant QO104"
    assert scanned.ocr_engine == "tesseract" and scanned.error_type is None
    assert image.ocr_engine == "tesseract" and image.text_status == "ok"


def test_pages_past_the_time_budget_are_named_not_lost(tmp_path: Path) -> None:
    # OCR starts no page after 3/4 of the file's time limit; in process nothing kills the
    # task, so a limit far below the time normalisation takes leaves every page unread.
    pdf = scanned_pdf([render_page(page_lines(12, count=3)), render_page(page_lines(13, count=3))])
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf)
    config = ProcessingConfig(ocr=TESSERACT, isolate=False, timeout_s=1e-6)
    [[record]] = process_files([FileInput(key="long", path=path, filename="long.pdf")], config,
                               blob_store=BlobStore(tmp_path / "blobs"))
    assert record.text_status == "no_text_layer" and record.ocr_pages == ()
    assert any(note.startswith("pages 1, 2 not read by OCR: past the time budget")
               for note in record.notes)


def test_ocr_off_flags_the_pages_that_need_it(tmp_path: Path) -> None:
    off = OcrConfig(mode="off")
    scan = scanned_pdf([render_page(page_lines(9, count=3))])
    [scanned] = _process(tmp_path, "scan.pdf", scan, off)
    assert scanned.text_status == "no_text_layer" and scanned.ocr_engine is None
    assert any("OCR is off" in note for note in scanned.notes)

    mixed = joined_pdfs(make_pdf(["Native page QO104 " * 20]), scan)
    [record] = _process(tmp_path, "mixed.pdf", mixed, off)
    assert record.text_status == "ok"
    assert "page 2 needs OCR; OCR is off (CONTENT_OCR=off)" in record.notes

    png = _image_bytes(render_page(page_lines(9, count=3)).crop((0, 0, 1654, 600)), "PNG")
    [image] = _process(tmp_path, "scan.png", png, off)
    assert image.text is None and image.text_status == "no_text_layer"
    assert "the image needs OCR; OCR is off (CONTENT_OCR=off)" in image.notes


def test_the_ocr_columns_reach_the_table_and_the_chunks(tmp_path: Path) -> None:
    lines = page_lines(14, count=5)
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "scan.pdf").write_bytes(scanned_pdf([render_page(lines, rotation=90)]))
    store = ContentStore(tmp_path / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="docs")
    found = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0)
    config = PipelineConfig(processing=ProcessingConfig(isolate=False, ocr=TESSERACT))
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, config)
    [row] = store.query(
        "SELECT text_status, ocr_engine, ocr_confidence, ocr_pages "
        "FROM current_normalised_artifacts"
    ).to_pylist()
    assert row["text_status"] == "ok" and row["ocr_engine"] == "tesseract"
    assert 0.7 < row["ocr_confidence"] <= 1.0
    assert [(p["page"], p["rotation"], p["reason"]) for p in row["ocr_pages"]] == [
        (1, 270, "no_text")
    ]
    chunks = store.query("SELECT content FROM current_chunks").to_pylist()
    assert word_accuracy(" ".join(lines), " ".join(c["content"] for c in chunks)) >= MIN_ACCURACY


def test_an_engine_that_cannot_run_is_an_error_row(tmp_path: Path) -> None:
    # Tesseract is asked for, but no language data for the language exists.
    missing = OcrConfig(mode="tesseract", languages=("qqq",))
    scan = scanned_pdf([render_page(page_lines(10, count=3))])
    [record] = _process(tmp_path, "scan.pdf", scan, missing)
    assert record.error_type == OcrUnavailableError.__name__
    assert "qqq" in (record.error_message or "") and record.text_status == "error"
    with pytest.raises(OcrUnavailableError, match="qqq"):
        build_engine(missing)


@pytest.mark.parametrize(
    ("languages", "engine"),
    [(("eng",), "tesseract"), (("deu",), "rapidocr")],
    ids=["tesseract-has-the-language", "only-rapidocr-has-it"],
)
def test_auto_prefers_tesseract_when_it_has_every_language(
    tmp_path: Path, languages: tuple[str, ...], engine: str
) -> None:
    # A language data folder with English only, whatever else this machine has installed.
    installed = tessdata_dir(OcrConfig())
    assert installed is not None, "Tesseract's English data is installed by .ci/run"
    (tmp_path / "eng.traineddata").symlink_to(installed / "eng.traineddata")
    config = OcrConfig(mode="auto", languages=languages, tessdata_dir=str(tmp_path))
    built = build_engine(config)
    assert built is not None and built.name == engine and built.languages == languages


def test_rapidocr_reads_with_the_network_refused() -> None:
    # Its models come inside its wheel: a fresh interpreter whose sockets cannot connect
    # still builds the engine and reads a page.
    done = run_offline(
        """
        from content_core.ocr import OcrConfig, build_engine
        from tests.fixtures.scans import page_lines, render_page
        engine = build_engine(OcrConfig(mode="rapidocr"))
        lines = page_lines(11, count=3)
        result = engine.recognise(render_page(lines).crop((0, 0, 1654, 600)))
        print(result.text)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert word_accuracy(" ".join(page_lines(11, count=3)), done.stdout) >= MIN_ACCURACY


@pytest.mark.parametrize(
    ("value", "expected"),
    [("eng", ("eng",)), ("eng+deu", ("eng", "deu")), ("eng, chi_sim", ("eng", "chi_sim"))],
)
def test_languages_read_as_the_environment_writes_them(
    value: str, expected: tuple[str, ...]
) -> None:
    assert OcrConfig.model_validate({"languages": value}).languages == expected


def test_a_bad_language_code_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Tesseract language code"):
        OcrConfig.model_validate({"languages": "english"})
