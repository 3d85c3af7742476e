"""An artifact as parts for a vision-capable model (the message_parts stage): images as
`image_url` data URLs, PDF pages as images when asked, text otherwise; and stored parts back
into a chat message."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from content_core.agents.chat import ChatMessage, ImageURL, ImageURLPart, Part, TextPart
from content_core.agents.pages import PdfHandling, data_url, render_pdf_pages
from content_core.binary.images import pillow_for
from content_core.binary.media_types import PDF
from content_core.errors import ImageConversionError

__all__ = [
    "MODEL_IMAGE_TYPES",
    "ArtifactPart",
    "artifact_parts",
    "is_picture",
    "message_from_parts",
]

# What chat APIs take in `image_url` parts; other image formats are sent as PNG.
MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# An image is re-encoded only up to this many pixels (the normaliser's limit came first).
_MAX_PIXELS = 40_000_000
# Markup, not pixels: its picture is the PNG rendition the normaliser makes beside it, and its
# own parts are its text.
_SVG = "image/svg+xml"


def is_picture(media_type: str) -> bool:
    """Whether an artifact of `media_type` is sent as an image part."""
    return media_type.startswith("image/") and media_type != _SVG


@dataclass(frozen=True, slots=True)
class ArtifactPart:
    """One part of an artifact's message, the page it shows (PDF pages), for an image the
    SHA-256 of the image bytes in its data URL, and for a text part the offsets of its text in
    the artifact's text (`span`, start and end)."""

    part: TextPart | ImageURLPart
    page: int | None = None
    image_sha256: str | None = None
    span: tuple[int, int] | None = None


def artifact_parts(
    data: bytes | None,
    *,
    media_type: str,
    text: str | None,
    pages: Sequence[tuple[int, int, int]],
    handling: PdfHandling,
) -> list[ArtifactPart]:
    """The parts of one artifact: an image (`data`) as one `image_url` part (a format chat APIs
    do not take is re-encoded as PNG, its first frame) followed by its OCR text if any; a PDF
    as its rendered pages when `handling.mode` is "pages" (each followed by its text with
    `handling.with_text`); anything else (an SVG too: `is_picture`), or a PDF in "text" mode,
    its `text`. Nothing when there is neither image nor text.

    Raises:
        ImageConversionError: the image cannot be decoded.
        CorruptPdfError: the PDF cannot be rendered.
    """
    if is_picture(media_type) and data is not None:
        image_type, image = media_type, data
        if media_type not in MODEL_IMAGE_TYPES:
            image_type, image = "image/png", _as_png(data, media_type)
        parts = [_image(image_type, image)]
        return parts + ([_text(text)] if text else [])
    if media_type == PDF and handling.mode == "pages" and data is not None:
        spans = {page: (start, end) for page, start, end in pages}
        out: list[ArtifactPart] = []
        for page in render_pdf_pages(data, handling)[0]:
            out.append(_image(page.media_type, page.data, page.page))
            if handling.with_text and text and page.page in spans:
                start, end = spans[page.page]
                out.append(
                    ArtifactPart(TextPart(text=text[start:end]), page.page, span=(start, end))
                )
        return out
    return [_text(text)] if text else []


def _text(text: str) -> ArtifactPart:
    return ArtifactPart(TextPart(text=text), span=(0, len(text)))


def _image(media_type: str, data: bytes, page: int | None = None) -> ArtifactPart:
    url = ImageURL(url=data_url(media_type, data))
    return ArtifactPart(ImageURLPart(image_url=url), page, hashlib.sha256(data).hexdigest())


def _as_png(data: bytes, media_type: str) -> bytes:
    from PIL import UnidentifiedImageError

    # With the HEIF/AVIF openers the normaliser uses, whichever process decoded before.
    Image = pillow_for(media_type)
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > _MAX_PIXELS:
                raise ImageConversionError(
                    f"{image.width}x{image.height} pixels: too big to send", media_type=media_type
                )
            buffer = io.BytesIO()
            image.convert("RGBA" if "A" in image.getbands() else "RGB").save(buffer, "PNG")
            return buffer.getvalue()
    except UnidentifiedImageError as exc:
        # Pillow's own message names the buffer object by its address: not a stable row.
        raise ImageConversionError(
            f"cannot re-encode {media_type} as PNG: Pillow cannot identify the image",
            media_type=media_type,
        ) from exc
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageConversionError(
            f"cannot re-encode {media_type} as PNG: {exc}", media_type=media_type
        ) from exc


def message_from_parts(rows: Iterable[Mapping[str, Any]], *, role: str = "user") -> ChatMessage:
    """A chat message of stored message_parts rows (`part_type`, `text`, `image_url`), in the
    order given; failure rows (no part type) are left out."""
    # Any: rows as DuckDB or Arrow return them.
    parts: list[Part] = []
    for row in rows:
        if row.get("part_type") == "image_url" and row.get("image_url"):
            parts.append(ImageURLPart(image_url=ImageURL(url=str(row["image_url"]))))
        elif row.get("part_type") == "text":
            parts.append(TextPart(text=str(row.get("text") or "")))
    return ChatMessage(role=role, content=parts)
