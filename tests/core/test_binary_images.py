"""ImageNormalizer: conversions to PNG/PDF, pass-through, pixel limits, safe SVG rendering."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from content_core.binary import ImageNormalizer
from content_core.binary import media_types as mt
from content_core.errors import BinaryTooLargeError, ImageConversionError, UnsafeInputError
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import (
    pixel_bomb_png,
    svg_huge_canvas,
    svg_self_use,
    svg_with_entities,
    svg_with_external_refs,
)
from tests.support.budget import cpu_budget


def _encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("PNG", mt.PNG), ("JPEG", mt.JPEG), ("GIF", mt.GIF), ("WEBP", mt.WEBP)],
)
def test_web_formats_pass_through_unchanged(fmt: str, media_type: str) -> None:
    data = _encode(Image.new("RGB", (8, 6), "green"), fmt)
    result = ImageNormalizer().normalise(data, media_type)
    assert result.data == data and not result.converted
    assert (result.width, result.height) == (8, 6)


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("BMP", mt.BMP), ("TIFF", mt.TIFF)],
)
def test_bmp_and_single_tiff_become_png(fmt: str, media_type: str) -> None:
    data = _encode(Image.new("RGB", (9, 7), "blue"), fmt)
    result = ImageNormalizer().normalise(data, media_type)
    assert result.converted and result.media_type == mt.PNG
    assert Image.open(io.BytesIO(result.data)).size == (9, 7)


def test_heic_becomes_png() -> None:
    import pillow_heif

    pillow_heif.register_heif_opener()
    data = _encode(Image.new("RGB", (16, 16), "red"), "HEIF")
    result = ImageNormalizer().normalise(data, mt.HEIC)
    assert result.media_type == mt.PNG and result.converted


@pytest.mark.parametrize("name", ["avif/hopper.avif", "avif/example.avif", "heif/hopper.heif"])
def test_corpus_heif_family_becomes_png(name: str) -> None:
    media = mt.AVIF if name.endswith(".avif") else mt.HEIC
    result = ImageNormalizer().normalise((CORPUS / name).read_bytes(), media)
    assert result.media_type == mt.PNG
    assert Image.open(io.BytesIO(result.data)).format == "PNG"


def test_multi_frame_tiff_becomes_multi_page_pdf() -> None:
    frames = [Image.new("RGB", (20, 10), colour) for colour in ("red", "green", "blue")]
    data = _encode(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    result = ImageNormalizer().normalise(data, mt.TIFF)
    assert result.media_type == mt.PDF and result.page_count == 3
    import pypdfium2 as pdfium

    assert len(pdfium.PdfDocument(result.data)) == 3


def test_pdf_rendition_bytes_depend_on_the_frames_only() -> None:
    # The rendition's artifact id is its sha256: a date in the PDF would give the same file a
    # new id on every run (a distributed ingest would not equal a local one).
    data = (CORPUS / "tiff" / "multipage.tiff").read_bytes()
    first = ImageNormalizer().normalise(data, mt.TIFF)
    assert first.media_type == mt.PDF and first.page_count == 3
    assert b"/CreationDate" not in first.data and b"/ModDate" not in first.data
    assert ImageNormalizer().normalise(data, mt.TIFF).data == first.data


@pytest.mark.parametrize(
    ("width", "height"),
    [
        pytest.param(1500, 1000, id="1.5x-limit-pillow-only-warns"),
        pytest.param(5000, 5000, id="25x-limit"),
        pytest.param(100_000, 100_000, id="header-claims-10-gigapixels"),
    ],
)
def test_pixel_limit_is_an_error_even_where_pillow_only_warns(width: int, height: int) -> None:
    data = pixel_bomb_png(width, height)
    with cpu_budget(2), pytest.raises(BinaryTooLargeError):
        ImageNormalizer(max_pixels=1_000_000).normalise(data, mt.PNG)


def test_multi_frame_tiff_pixels_count_across_frames() -> None:
    frames = [Image.new("L", (200, 200), shade) for shade in range(0, 250, 5)]  # 50 frames
    data = _encode(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    with pytest.raises(BinaryTooLargeError, match="frames"):
        ImageNormalizer(max_pixels=1_000_000).normalise(data, mt.TIFF)


def test_truncated_image_is_a_conversion_error() -> None:
    data = _encode(Image.new("RGB", (50, 50), "red"), "BMP")[:100]
    with pytest.raises(ImageConversionError):
        ImageNormalizer().normalise(data, mt.BMP)


def test_svg_renders_to_png() -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20"><rect width="30" ' \
          b'height="20" fill="red"/></svg>'
    result = ImageNormalizer().normalise(svg, mt.SVG)
    image = Image.open(io.BytesIO(result.data))
    assert image.size == (30, 20)
    assert image.convert("RGB").getpixel((5, 5)) == (255, 0, 0)


def test_svg_entities_are_refused() -> None:
    with pytest.raises(UnsafeInputError, match="billion laughs"):
        ImageNormalizer().normalise(svg_with_entities(), mt.SVG)


def test_svg_external_references_are_never_read(tmp_path: object) -> None:
    from pathlib import Path

    secret = Path(str(tmp_path)) / "secret.png"
    Image.new("RGB", (10, 10), (0, 255, 0)).save(secret)
    result = ImageNormalizer().normalise(svg_with_external_refs(str(secret)), mt.SVG)
    image = Image.open(io.BytesIO(result.data)).convert("RGBA")
    # The referenced green image must not appear; only the red rect is drawn.
    assert image.getpixel((7, 7))[:3] != (0, 255, 0)
    assert image.getpixel((2, 2))[:3] == (255, 0, 0)


def test_svg_self_referencing_use_is_a_conversion_error_found_quickly() -> None:
    # resvg would leave the looping <use> out and draw the rest as if nothing were missing.
    with cpu_budget(5), pytest.raises(ImageConversionError, match="refers back to itself"):
        ImageNormalizer().normalise(svg_self_use(), mt.SVG)


def test_svg_huge_canvas_is_over_the_pixel_limit_not_scaled() -> None:
    with pytest.raises(BinaryTooLargeError, match="canvas") as raised:
        ImageNormalizer(max_pixels=250_000).normalise(svg_huge_canvas(), mt.SVG)
    assert raised.value.limit == "max_image_pixels" and raised.value.maximum == 250_000


def test_svg_over_byte_limit() -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg">' + b"<g/>" * 5000 + b"</svg>"
    with pytest.raises(BinaryTooLargeError):
        ImageNormalizer(max_svg_bytes=1000).normalise(svg, mt.SVG)
