"""Damaged pictures are errors, not "no text": a JPEG cut short, a TIFF whose directory chain
loops, an SVG declaring a huge canvas and an SVG whose `<use>` refers to itself each end as an
error row (`text_status = error`). A JPEG cut short whose decoded part still gives OCR text keeps
the text and says what was lost in `notes`; `no_text_layer` is left to pictures that decode
fine and hold no text. Every input is generated here (tests/fixtures/damaged.py).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from content_core.binary import ImageNormalizer
from content_core.binary import media_types as mt
from content_core.binary.tiff import count_ifds
from content_core.errors import BinaryTooLargeError, ImageConversionError
from content_core.ocr import OcrConfig
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.store.blobs import BlobStore
from tests.fixtures import damaged
from tests.support.budget import cpu_budget

TESSERACT = OcrConfig(mode="tesseract")


def _process(tmp_path: Path, name: str, data: bytes) -> list[ArtifactRecord]:
    path = tmp_path / name
    path.write_bytes(data)
    config = ProcessingConfig(ocr=TESSERACT, isolate=False, timeout_s=120)
    [records] = process_files([FileInput(key=name, path=path, filename=name)], config,
                              blob_store=BlobStore(tmp_path / "blobs"))
    return records


# -- the normaliser --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "media_type", "error", "phrase"),
    [
        pytest.param(damaged.looping_tiff, mt.TIFF, ImageConversionError, "loops",
                     id="tiff-ifd-points-at-itself"),
        pytest.param(lambda: damaged.looping_tiff(3, back_to=1), mt.TIFF, ImageConversionError,
                     "points back", id="tiff-third-ifd-points-at-the-second"),
        pytest.param(lambda: damaged.looping_tiff(big=True), mt.TIFF, ImageConversionError,
                     "loops", id="bigtiff-ifd-points-at-itself"),
        pytest.param(damaged.huge_canvas_svg, mt.SVG, BinaryTooLargeError, "100000x100000",
                     id="svg-canvas-of-ten-gigapixels"),
        pytest.param(damaged.self_use_svg, mt.SVG, ImageConversionError, "#loop",
                     id="svg-use-refers-to-its-own-group"),
        pytest.param(damaged.cut_png, mt.PNG, ImageConversionError, "(?i)truncated",
                     id="png-cut-in-half-has-no-partial-decoding"),
    ],
)
def test_a_picture_that_does_not_decode_completely_is_an_error(
    make: Callable[[], bytes], media_type: str, error: type[Exception], phrase: str
) -> None:
    with cpu_budget(10), pytest.raises(error, match=phrase):
        ImageNormalizer().normalise(make(), media_type, filename="damaged")


def test_pillow_alone_takes_the_looping_tiff_for_a_complete_image() -> None:
    # Why the chain is walked before Pillow: it stops quietly at a directory it has seen.
    with Image.open(io.BytesIO(damaged.looping_tiff(3, back_to=0))) as image:
        assert getattr(image, "n_frames", 1) == 3
        image.load()


def test_a_jpeg_cut_short_gives_the_part_before_the_cut() -> None:
    data = damaged.cut_jpeg_with_text()
    assert not data.endswith(b"\xff\xd9")
    with pytest.raises(OSError, match="truncated"), Image.open(io.BytesIO(data)) as image:
        image.load()  # Pillow refuses it, and no global switch is turned to read it
    result = ImageNormalizer().normalise(data, mt.JPEG, filename="cut.jpg")
    assert result.media_type == mt.PNG and result.converted
    assert result.damage is not None and "cut.jpg: JPEG is truncated" in result.damage
    with Image.open(io.BytesIO(result.data)) as png:
        assert png.size == (result.width, result.height) == (1400, 1200)
        top = png.convert("L").crop((0, 0, 1400, 300))
        assert top.getextrema() == (0, 255)  # the text band came through


def test_tiff_directories_are_counted_and_bounded() -> None:
    frames = [Image.new("L", (8, 8), shade) for shade in (0, 80, 160, 240)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    assert count_ifds(out.getvalue(), "four.tif", max_pages=10) == 4
    with pytest.raises(BinaryTooLargeError, match="max_pdf_pages"):
        count_ifds(out.getvalue(), "four.tif", max_pages=3)
    # A next-IFD offset past the end of the file: cut, not looping.
    cut = out.getvalue()[: damaged.ifd_offsets(out.getvalue())[-1] + 4]
    with pytest.raises(ImageConversionError, match="past the end"):
        count_ifds(cut, "cut.tif", max_pages=10)


# -- rows ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "make", "error_type", "phrase"),
    [
        pytest.param("photo.jpg", damaged.cut_photo_jpeg, "CorruptFileError", "truncated",
                     id="jpeg-cut-short-without-text"),
        pytest.param("loop.tif", damaged.looping_tiff, "CorruptFileError", "loops",
                     id="tiff-ifd-chain-loops"),
        pytest.param("huge.svg", damaged.huge_canvas_svg, "LimitExceededError",
                     "max_image_pixels", id="svg-huge-canvas"),
        pytest.param("self-use.svg", damaged.self_use_svg, "CorruptFileError",
                     "refers back to itself", id="svg-use-refers-to-itself"),
    ],
)
def test_a_damaged_picture_without_text_is_an_error_row(
    tmp_path: Path, name: str, make: Callable[[], bytes], error_type: str, phrase: str
) -> None:
    records = _process(tmp_path, name, make())
    # One row: what was decoded of a cut JPEG is no rendition of anything readable.
    [record] = records
    assert record.kind == "image" and not record.text
    assert (record.error_type, record.stage, record.text_status) == (
        error_type, "normalise", "error"
    )
    assert phrase in (record.error_message or "") and name in (record.error_message or "")


def test_a_jpeg_cut_short_keeps_the_text_read_before_the_cut(tmp_path: Path) -> None:
    records = _process(tmp_path, "invoice.jpg", damaged.cut_jpeg_with_text())
    record = records[0]
    assert record.error_type is None and record.text_status == "ok"
    assert record.ocr_engine == "tesseract"
    for marker in ("invoice", "4711", "5823"):
        assert marker in (record.text or "")
    [note] = [note for note in record.notes if "truncated" in note]
    assert note.startswith("ImageConversionError: invoice.jpg: JPEG is truncated")
    # The decoded part, as a PNG beside it: the picture the text was read from.
    assert [(r.media_type, r.derived_from) for r in records[1:]] == [
        (mt.PNG, (record.artifact_id,))
    ]


@pytest.mark.parametrize(
    ("name", "make", "phrase"),
    [
        pytest.param("huge.svg", damaged.huge_canvas_svg, "BinaryTooLargeError:",
                     id="huge-canvas"),
        pytest.param("self-use.svg", damaged.self_use_svg, "ImageConversionError:",
                     id="self-use"),
    ],
)
def test_an_undrawable_svg_with_text_keeps_it_and_notes_the_damage(
    tmp_path: Path, name: str, make: Callable[[str], bytes], phrase: str
) -> None:
    [record] = _process(tmp_path, name, make("<title>Site plan QDM03</title>"))
    assert record.error_type is None and record.text_status == "ok"
    assert "Site plan QDM03" in (record.text or "")
    [note] = record.notes
    assert note.startswith(phrase) and name in note


def test_a_clean_picture_without_text_is_no_text_layer_and_nothing_else(tmp_path: Path) -> None:
    records = _process(tmp_path, "clean.jpg", damaged.clean_photo())
    [record] = records
    assert record.text_status == "no_text_layer" and record.text is None
    assert record.error_type is None and record.error_message is None
    assert record.notes == () and record.ocr_engine == "tesseract"
