"""AVIF and every HEIF flavour that holds an image decode; a container without one says why.

Generated files (Pillow's AVIF encoder, pillow-heif's HEIF encoder, and the box writer in
tests/fixtures/heif.py for what no encoder writes) plus the corpus samples.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from content_core.binary import BinaryNormalizer, ImageNormalizer
from content_core.binary import media_types as mt
from content_core.binary.sniff import sniff_media_type
from content_core.errors import ImageConversionError
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
from tests.fixtures.corpus import CORPUS
from tests.fixtures.heif import blanked_box, exif_payload, heif_without_images, without_box

COLOURS = ("red", "lime", "blue")


def _encode(frames: list[Image.Image], fmt: str, **options: object) -> bytes:
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
    buffer = io.BytesIO()
    frames[0].save(buffer, format=fmt, save_all=len(frames) > 1, append_images=frames[1:],
                   **options)
    return buffer.getvalue()


def _png(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    return image.convert("RGB")


def _close(pixel: tuple[int, ...], expected: tuple[int, int, int]) -> bool:
    # Lossy AV1/HEVC: colours come back near, not equal.
    return all(abs(a - b) < 40 for a, b in zip(pixel, expected, strict=False))


def test_generated_avif_decodes_to_png() -> None:
    data = _encode([Image.new("RGB", (40, 30), "red")], "AVIF")
    assert sniff_media_type(data) == mt.AVIF
    result = ImageNormalizer().normalise(data, mt.AVIF)
    image = _png(result.data)
    assert image.size == (40, 30)
    assert _close(image.getpixel((20, 15)), (255, 0, 0))


def test_generated_avif_sequence_decodes_its_first_frame() -> None:
    frames = [Image.new("RGB", (32, 32), colour) for colour in COLOURS]
    data = _encode(frames, "AVIF", duration=100)
    assert data[8:12] == b"avis"  # an image sequence, not a still
    result = ImageNormalizer().normalise(data, sniff_media_type(data))
    assert (result.media_type, result.page_count) == (mt.PNG, 1)
    assert _close(_png(result.data).getpixel((16, 16)), (255, 0, 0))


def test_generated_heif_decodes_to_png() -> None:
    data = _encode([Image.new("RGB", (48, 32), "blue")], "HEIF")
    assert sniff_media_type(data) == mt.HEIC
    image = _png(ImageNormalizer().normalise(data, mt.HEIC).data)
    assert image.size == (48, 32)
    assert _close(image.getpixel((24, 16)), (0, 0, 255))


def test_heif_holding_several_images_becomes_one_pdf_page_per_image() -> None:
    frames = [Image.new("RGB", (64, 64), colour) for colour in COLOURS]
    result = ImageNormalizer().normalise(_encode(frames, "HEIF"), mt.HEIC)
    assert (result.media_type, result.page_count) == (mt.PDF, 3)
    pdf = pdfium.PdfDocument(result.data)
    assert len(pdf) == 3
    middle = pdf[1].render().to_pil().convert("RGB")
    assert _close(middle.getpixel((middle.width // 2, middle.height // 2)), (0, 255, 0))


def test_heif_with_an_alpha_auxiliary_image_keeps_the_alpha() -> None:
    data = _encode([Image.new("RGBA", (64, 48), (255, 0, 0, 128))], "HEIF")
    image = Image.open(io.BytesIO(ImageNormalizer().normalise(data, mt.HEIC).data))
    assert image.mode == "RGBA" and abs(image.getpixel((32, 24))[3] - 128) < 16


def test_heif_with_a_depth_map_decodes_its_primary_image() -> None:
    import pillow_heif

    alpha = _encode([Image.new("RGBA", (64, 48), (255, 0, 0, 128))], "HEIF")
    # Same auxiliary image, typed as a depth map instead of alpha (auxid 2: HEVC depth).
    data = alpha.replace(b"urn:mpeg:hevc:2015:auxid:1", b"urn:mpeg:hevc:2015:auxid:2")
    assert len(pillow_heif.open_heif(io.BytesIO(data)).info["depth_images"]) == 1
    result = ImageNormalizer().normalise(data, mt.HEIC)
    image = _png(result.data)
    assert image.size == (64, 48)
    assert _close(image.getpixel((32, 24)), (255, 0, 0))


@pytest.mark.parametrize(
    ("name", "media_type", "pages"),
    [
        ("avif/example.avif", mt.PNG, 1),
        ("avif/hopper.avif", mt.PNG, 1),
        ("heif/hopper.heif", mt.PNG, 1),
        ("heic/DA-1p.heic", mt.PNG, 1),
        # Two top-level images (each with a thumbnail, which is not a page).
        ("heic/example.heic", mt.PDF, 2),
    ],
)
def test_corpus_avif_and_heif_decode(name: str, media_type: str, pages: int) -> None:
    data = (CORPUS / name).read_bytes()
    result = ImageNormalizer().normalise(data, sniff_media_type(data, filename=name))
    assert (result.media_type, result.page_count) == (media_type, pages)


def _avif_sequence() -> bytes:
    frames = [Image.new("RGB", (32, 32), colour) for colour in COLOURS]
    return _encode(frames, "AVIF", duration=100)


def test_avif_sequence_without_meta_box_gives_its_first_frame() -> None:
    data = without_box(_avif_sequence(), b"meta")  # only the track is left
    result = ImageNormalizer().normalise(data, mt.AVIF, filename="clip.avif")
    assert (result.media_type, result.width, result.height) == (mt.PNG, 32, 32)
    assert _close(_png(result.data).getpixel((16, 16)), (255, 0, 0))


def test_heif_image_sequence_track_gives_its_first_frame() -> None:
    import av

    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4", options={"brand": "msf1"}) as out:
        stream = out.add_stream("libx265", rate=10, options={"x265-params": "log-level=none"})
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for colour in COLOURS:
            frame = av.VideoFrame.from_image(Image.new("RGB", (64, 48), colour))
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    data = buffer.getvalue()
    assert sniff_media_type(data) == mt.HEIF  # msf1: a HEIF image sequence, no `meta` box
    result = ImageNormalizer().normalise(data, mt.HEIF)
    assert (result.media_type, result.width, result.height) == (mt.PNG, 64, 48)
    assert _close(_png(result.data).getpixel((32, 24)), (255, 0, 0))


def test_avif_without_meta_box_or_track_data_says_so_and_keeps_the_declared_size() -> None:
    data = blanked_box(without_box(_avif_sequence(), b"meta"), b"mdat")
    with pytest.raises(ImageConversionError, match="AVIF file has no `meta` box") as caught:
        ImageNormalizer().normalise(data, mt.AVIF, filename="clip.avif")
    assert "image sequence track(s) (32x32) could not be decoded" in caught.value.message
    notes = ImageNormalizer().describe(data, mt.AVIF)
    assert "declared sizes: 32x32" in notes


def test_avif_without_any_picture_says_so() -> None:
    data = without_box(without_box(_avif_sequence(), b"meta"), b"moov")
    with pytest.raises(ImageConversionError, match="no `meta` box, so it holds no image item$"):
        ImageNormalizer().normalise(data, mt.AVIF)


def test_heif_listing_no_image_says_so_and_keeps_exif_and_size() -> None:
    data = heif_without_images(exif_payload("Apple", "iPhone 12 Pro"))
    assert sniff_media_type(data) == mt.HEIC
    expected = r"HEIF container holds no image \(1 items: Exif\)"
    with pytest.raises(ImageConversionError, match=expected):
        ImageNormalizer().normalise(data, mt.HEIC, filename="live.heic")
    notes = ImageNormalizer().describe(data, mt.HEIC)
    assert "declared sizes: 4032x3024" in notes
    assert any("Make=Apple" in note and "Model=iPhone 12 Pro" in note for note in notes)


def test_heif_without_meta_box_says_so() -> None:
    data = without_box(_encode([Image.new("RGB", (16, 16), "red")], "HEIF"), b"meta")
    with pytest.raises(ImageConversionError, match="HEIF container has no `meta` box"):
        ImageNormalizer().normalise(data, mt.HEIC)


def test_raw_heif_without_image_is_one_error_row_with_its_metadata_as_notes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.heic"
    path.write_bytes(heif_without_images(exif_payload("Apple", "iPhone 12 Pro")))
    artifacts = asyncio.run(BinaryNormalizer().normalise(path.read_bytes(), filename=path.name))
    assert [a.error_type for a in artifacts] == ["CorruptFileError"]  # an ImageConversionError
    [[record]] = process_files(
        [FileInput(key="k", path=path, filename=path.name)],
        ProcessingConfig(isolate=False),
        blob_store=BlobStore(tmp_path / "blobs"),
    )
    assert (record.kind, record.media_type, record.stage) == ("image", mt.HEIC, "normalise")
    assert record.error_type == "CorruptFileError"
    assert "holds no image (1 items: Exif)" in (record.error_message or "")
    assert "declared sizes: 4032x3024" in record.notes
    assert any("Model=iPhone 12 Pro" in note for note in record.notes)
