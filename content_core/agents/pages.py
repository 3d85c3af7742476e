"""PDF pages as images for a vision model: the `PdfHandling` option and the renderer
(pypdfium2), shared by prepare_messages and the message_parts stage."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from content_core.errors import CorruptPdfError

__all__ = ["PageImage", "PdfHandling", "data_url", "pdf_page_texts", "render_pdf_pages"]

# A page is rendered at most this big (a poster-sized page at 300 DPI would be far bigger).
_MAX_PAGE_PIXELS = 4_000_000


class PdfHandling(BaseModel):
    """What a PDF becomes when no vision tool reads PDFs: `text` (its extracted text) or
    `pages` (its first `max_pages` pages rendered at `dpi` as `image_format` images; with
    `with_text`, each page image is followed by that page's text). `timeout_s` bounds the
    parts of one artifact in the message_parts stage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["text", "pages"] = "text"
    max_pages: int = Field(default=20, ge=1)
    dpi: int = Field(default=100, ge=36, le=300)
    image_format: Literal["png", "jpeg"] = "png"
    with_text: bool = False
    timeout_s: float = Field(default=120.0, gt=0)

    def fingerprint(self) -> str:
        """A short stable hash of every setting but the time budget (16 hex digits), stored
        with the parts."""
        settings = self.model_dump(mode="json", exclude={"timeout_s"})
        payload = json.dumps(settings, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class PageImage:
    """One rendered page: its number (1-based), media type and encoded bytes."""

    page: int
    media_type: str
    data: bytes


def data_url(media_type: str, data: bytes) -> str:
    """`data` as a base64 data URL (what `image_url` parts carry)."""
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def render_pdf_pages(data: bytes, handling: PdfHandling) -> tuple[list[PageImage], int]:
    """The first `handling.max_pages` pages of the PDF `data` as images, and its page count.

    Raises:
        CorruptPdfError: PDFium cannot open the PDF or render a page.
    """
    import pypdfium2 as pdfium

    media_type = f"image/{handling.image_format}"
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise CorruptPdfError(f"PDFium cannot open the PDF: {exc}", media_type=media_type) from exc
    try:
        count = len(document)
        images = []
        for index in range(min(count, handling.max_pages)):
            page = document[index]
            try:
                width, height = page.get_size()
                scale = handling.dpi / 72
                if width * height * scale * scale > _MAX_PAGE_PIXELS:
                    scale = (_MAX_PAGE_PIXELS / max(width * height, 1.0)) ** 0.5
                image = page.render(scale=scale).to_pil().convert("RGB")
            finally:
                page.close()
            buffer = io.BytesIO()
            if handling.image_format == "jpeg":
                image.save(buffer, format="JPEG", quality=85)
            else:
                image.save(buffer, format="PNG", optimize=True)
            images.append(PageImage(index + 1, media_type, buffer.getvalue()))
    except pdfium.PdfiumError as exc:
        raise CorruptPdfError(f"PDFium cannot render the PDF: {exc}") from exc
    finally:
        document.close()
    return images, count


def pdf_page_texts(data: bytes) -> dict[int, str]:
    """Each page's extracted text, by page number (1-based).

    Raises:
        ExtractionError: no extractor could read the PDF.
    """
    from content_core.extract import extract_text

    extracted = extract_text(data, "application/pdf")
    return {span.page: extracted.text[span.start : span.end] for span in extracted.pages}
