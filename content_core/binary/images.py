"""ImageNormalizer: re-encode images into formats every consumer reads (PNG, or PDF for pages).

PNG, JPEG, GIF and WebP pass through after a header check; HEIC/HEIF/AVIF/TIFF/BMP become PNG,
multi-frame TIFF becomes a multi-page PDF, and SVG is rendered to PNG by resvg with no network,
no external files and no DTD. The pixel limit is an error, not Pillow's warning.
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from content_core.binary import media_types as mt
from content_core.errors import (
    BinaryTooLargeError,
    ImageConversionError,
    MissingDependencyError,
    UnsafeInputError,
)

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = ["ImageNormalizer", "NormalisedImage"]

_PASS_THROUGH = frozenset({mt.PNG, mt.JPEG, mt.GIF, mt.WEBP})
_SVG_DEFAULT_SIZE = 1024.0
_SVG_MAX_ELEMENTS = 50_000
_SVG_MAX_USE = 5_000
_LENGTH = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px|pt|pc|mm|cm|in|em|ex|%)?\s*$"
)
_UNIT_PX = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96.0}


class NormalisedImage(BaseModel):
    """The result of normalising one image.

    `converted` is False when `data` is the input unchanged (a pass-through format).
    `page_count` is the number of frames for a multi-page PDF, 1 otherwise.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: bytes
    media_type: str
    width: int
    height: int
    page_count: int = 1
    converted: bool = False


@dataclass(frozen=True, slots=True)
class _Size:
    width: int
    height: int


class ImageNormalizer:
    """Convert an image to PNG (or multi-page PDF) within a pixel budget."""

    def __init__(self, *, max_pixels: int = 89_478_485, max_svg_bytes: int = 8 * 1024 * 1024):
        self.max_pixels = max_pixels
        self.max_svg_bytes = max_svg_bytes

    def normalise(self, data: bytes, media_type: str, *, filename: str | None = None) -> (
        NormalisedImage
    ):
        """Return the consumer-ready form of the image `data` of type `media_type`.

        Raises:
            BinaryTooLargeError: more pixels than `max_pixels` (or an SVG over its byte limit).
            ImageConversionError: the image cannot be decoded or re-encoded.
            MissingDependencyError: the decoder for this format is not installed.
        """
        name = filename or "<image>"
        if media_type == mt.SVG:
            return self._render_svg(data, name)
        Image = _pillow(media_type)
        try:
            with warnings.catch_warnings():
                # Pillow only warns between 1x and 2x its limit; make every excess an error.
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(data)) as image:
                    self._check_pixels(image.size, name, media_type)
                    frames = getattr(image, "n_frames", 1)
                    if media_type in _PASS_THROUGH:
                        image.verify()
                        return NormalisedImage(
                            data=data,
                            media_type=media_type,
                            width=image.size[0],
                            height=image.size[1],
                            page_count=1,
                        )
                    if media_type == mt.TIFF and frames > 1:
                        return self._tiff_to_pdf(image, frames, name)
                    return _to_png(image, name, media_type)
        except (BinaryTooLargeError, ImageConversionError):
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise BinaryTooLargeError(
                f"{name}: over the pixel limit ({exc})", media_type=media_type
            ) from exc
        except (OSError, ValueError, SyntaxError, EOFError, TypeError, IndexError,
                KeyError, ZeroDivisionError, MemoryError, RuntimeError) as exc:
            raise ImageConversionError(
                f"{name}: cannot decode {media_type} ({type(exc).__name__}: {exc})",
                media_type=media_type,
            ) from exc

    def _check_pixels(self, size: tuple[int, int], name: str, media_type: str) -> None:
        width, height = size
        if width <= 0 or height <= 0:
            raise ImageConversionError(f"{name}: empty image {width}x{height}")
        if width * height > self.max_pixels:
            raise BinaryTooLargeError(
                f"{name}: {width}x{height} pixels, over the limit of {self.max_pixels}",
                media_type=media_type,
            )

    def _tiff_to_pdf(self, image: PilImage, frames: int, name: str) -> NormalisedImage:
        from PIL import ImageSequence

        pages = []
        total = 0
        for frame in ImageSequence.Iterator(image):
            total += frame.size[0] * frame.size[1]
            if total > self.max_pixels:
                raise BinaryTooLargeError(
                    f"{name}: frames total over the pixel limit of {self.max_pixels}",
                    media_type=mt.TIFF,
                )
            pages.append(_pdf_ready(frame.copy()))
        buffer = io.BytesIO()
        pages[0].save(buffer, format="PDF", save_all=True, append_images=pages[1:], resolution=96)
        first = pages[0]
        return NormalisedImage(
            data=buffer.getvalue(),
            media_type=mt.PDF,
            width=first.size[0],
            height=first.size[1],
            page_count=len(pages),
            converted=True,
        )

    def _render_svg(self, data: bytes, name: str) -> NormalisedImage:
        if len(data) > self.max_svg_bytes:
            raise BinaryTooLargeError(
                f"{name}: SVG of {len(data)} bytes, over the limit of {self.max_svg_bytes}",
                media_type=mt.SVG,
            )
        text = _safe_svg_text(data, name)
        width, height = _svg_size(text, name)
        scale = 1.0
        if width * height > self.max_pixels:
            # A huge declared canvas is rendered smaller, not refused: the picture is the point.
            scale = (self.max_pixels / (width * height)) ** 0.5
        out_w = max(1, int(width * scale))
        out_h = max(1, int(height * scale))
        try:
            import resvg_py
        except ImportError as exc:
            raise MissingDependencyError(
                "resvg-py is required to render SVG", extra="binary"
            ) from exc
        try:
            # No resources_dir: resvg then resolves no relative file reference, and it has no
            # network code at all.
            png = bytes(resvg_py.svg_to_bytes(svg_string=text, width=out_w, height=out_h))
        except (ValueError, RuntimeError, OSError) as exc:
            raise ImageConversionError(f"{name}: SVG cannot be rendered ({exc})") from exc
        return NormalisedImage(
            data=png, media_type=mt.PNG, width=out_w, height=out_h, page_count=1, converted=True
        )


def _pillow(media_type: str) -> Any:  # Any: the PIL.Image module
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is a core dependency
        raise MissingDependencyError("Pillow is required for images", extra="binary") from exc
    if media_type in (mt.HEIC, mt.HEIF, mt.AVIF):
        try:
            import pillow_heif
        except ImportError as exc:
            raise MissingDependencyError(
                f"pillow-heif is required for {media_type}", extra="binary"
            ) from exc
        pillow_heif.register_heif_opener()
        if media_type == mt.AVIF and hasattr(pillow_heif, "register_avif_opener"):
            pillow_heif.register_avif_opener()
    return Image


def _pdf_ready(frame: PilImage) -> PilImage:
    if frame.mode in ("RGB", "L", "CMYK"):
        return frame
    return frame.convert("L" if frame.mode == "1" else "RGB")


def _to_png(image: PilImage, name: str, media_type: str) -> NormalisedImage:
    image.load()
    mode = image.mode
    if mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        image = image.convert("RGBA" if "A" in mode else "RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    width, height = image.size
    return NormalisedImage(
        data=buffer.getvalue(), media_type=mt.PNG, width=width, height=height, converted=True
    )


def _safe_svg_text(data: bytes, name: str) -> str:
    """Parse the SVG with DTDs forbidden, drop external references, and return the markup."""
    from defusedxml import DefusedXmlException
    from defusedxml import ElementTree as SafeTree

    try:
        root = SafeTree.fromstring(data, forbid_dtd=False, forbid_entities=True,
                                   forbid_external=True)
    except DefusedXmlException as exc:
        raise UnsafeInputError(
            f"{name}: SVG declares entities ({exc}); entity expansion is refused", media_type=mt.SVG
        ) from exc
    except SyntaxError as exc:  # xml.etree.ElementTree.ParseError
        raise ImageConversionError(f"{name}: SVG is not well-formed XML ({exc})") from exc
    if not root.tag.endswith("svg"):
        raise ImageConversionError(f"{name}: root element is {root.tag!r}, not svg")
    elements = 0
    uses = 0
    for element in root.iter():
        elements += 1
        tag = element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""
        if tag == "use":
            uses += 1
        for attr in list(element.attrib):
            value = element.attrib[attr]
            local = attr.rsplit("}", 1)[-1]
            if local == "href" and not value.startswith(("#", "data:")):
                del element.attrib[attr]  # external file or URL: never fetched
        if elements > _SVG_MAX_ELEMENTS or uses > _SVG_MAX_USE:
            raise BinaryTooLargeError(
                f"{name}: SVG has over {_SVG_MAX_ELEMENTS} elements or {_SVG_MAX_USE} <use>",
                media_type=mt.SVG,
            )
    import xml.etree.ElementTree as ElementTree

    return ElementTree.tostring(root, encoding="unicode")


def _svg_size(text: str, name: str) -> tuple[float, float]:
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.fromstring(text)
    width = _length(root.get("width"))
    height = _length(root.get("height"))
    view_box = (root.get("viewBox") or "").replace(",", " ").split()
    if (width is None or height is None) and len(view_box) == 4:
        try:
            vb_w, vb_h = float(view_box[2]), float(view_box[3])
        except ValueError:
            vb_w = vb_h = 0.0
        if vb_w > 0 and vb_h > 0:
            if width is None and height is None:
                width, height = vb_w, vb_h
            elif width is None:
                width = height * vb_w / vb_h  # type: ignore[operator]
            else:
                height = width * vb_h / vb_w
    width = width if width and width > 0 else _SVG_DEFAULT_SIZE
    height = height if height and height > 0 else _SVG_DEFAULT_SIZE
    if not (width < 1e7 and height < 1e7):
        raise BinaryTooLargeError(f"{name}: SVG declares an absurd size {width}x{height}")
    return width, height


def _length(value: str | None) -> float | None:
    if not value:
        return None
    match = _LENGTH.match(value)
    if match is None or match.group(2) in ("%", "em", "ex"):
        return None
    return float(match.group(1)) * _UNIT_PX.get(match.group(2) or "px", 1.0)

