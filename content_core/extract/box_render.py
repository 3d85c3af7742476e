"""Pictures of where a span of text lies: the page(s) of a PDF (or the image itself) with the
span's boxes filled in and outlined, pages stacked top to bottom, as PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from content_core.errors import CorruptFileError
from content_core.extract.boxes import PageBox

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = ["render_boxes"]

_FILL = (255, 200, 0, 90)
_OUTLINE = (220, 60, 0, 255)
_GAP_PX = 8
# Boxes hug the glyphs: they are drawn this much larger, so that the outline clears the ink.
_PAD_PT = 1.0
# A page wider than this is drawn smaller (a poster would make a huge PNG).
_MAX_WIDTH_PX = 2400


def render_boxes(
    data: bytes, boxes: Sequence[PageBox], *, pdf: bool, scale: float = 1.5
) -> bytes:
    """A PNG of the pages `boxes` lie on, each page rendered at `scale` (PDF points to pixels;
    an image is drawn as it is), the boxes filled semi-transparently and outlined.

    `boxes` are in the frame of `TextBox`: PDF points of the unrotated page, origin at the
    bottom left, for a PDF (`pdf`); pixels of the image, origin at the top left, else.

    Raises:
        CorruptFileError: the PDF or the image cannot be read.
        ValueError: `boxes` is empty.
    """
    if not boxes:
        raise ValueError("no boxes to draw")
    pages = sorted({box.page for box in boxes})
    drawn = [_pdf_page(data, number, boxes, scale) for number in pages] if pdf else [
        _image(data, boxes)
    ]
    return _png(_stacked(drawn))


def _pdf_page(data: bytes, number: int, boxes: Sequence[PageBox], scale: float) -> PilImage:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise CorruptFileError(f"PDFium cannot open the PDF: {exc}") from exc
    try:
        page = document[number - 1]
        page.set_rotation(0)  # the boxes are in the unrotated frame
        left, _, right, top = (float(v) for v in page.get_cropbox())
        scale = min(scale, _MAX_WIDTH_PX / max(right - left, 1.0))
        image = page.render(scale=scale).to_pil().convert("RGB")
        page.close()
    except (pdfium.PdfiumError, IndexError) as exc:
        raise CorruptFileError(f"PDFium cannot render page {number}: {exc}") from exc
    finally:
        document.close()
    pad = _PAD_PT
    rects = [
        ((box.x0 - pad - left) * scale, (top - box.y1 - pad) * scale,
         (box.x1 + pad - left) * scale, (top - box.y0 + pad) * scale)
        for box in boxes if box.page == number
    ]  # fmt: skip
    return _highlighted(image, rects)


def _image(data: bytes, boxes: Sequence[PageBox]) -> PilImage:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as opened:
            image = opened.convert("RGB")
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise CorruptFileError(f"cannot read the image: {exc}") from exc
    pad = _PAD_PT
    return _highlighted(image, [(b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad) for b in boxes])


def _highlighted(
    image: PilImage, rects: Sequence[tuple[float, float, float, float]]
) -> PilImage:
    """`image` with `rects` (pixels: left, top, right, bottom) filled and outlined."""
    from PIL import Image, ImageDraw

    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for x0, y0, x1, y1 in rects:
        draw.rectangle((x0, y0, x1, y1), fill=_FILL, outline=_OUTLINE, width=2)
    return Image.alpha_composite(image.convert("RGBA"), layer).convert("RGB")


def _stacked(images: Sequence[PilImage]) -> PilImage:
    from PIL import Image

    if len(images) == 1:
        return images[0]
    width = max(image.width for image in images)
    height = sum(image.height for image in images) + _GAP_PX * (len(images) - 1)
    sheet = Image.new("RGB", (width, height), (128, 128, 128))
    y = 0
    for image in images:
        sheet.paste(image, (0, y))
        y += image.height + _GAP_PX
    return sheet


def _png(image: PilImage) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
