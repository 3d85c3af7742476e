"""ImageNormalizer: re-encode images into formats every consumer reads (PNG, or PDF for pages).

PNG, JPEG, GIF and WebP pass through after a header check; HEIC/HEIF/AVIF/TIFF/BMP become PNG,
multi-frame TIFF and a HEIF holding several images become a multi-page PDF, and SVG is rendered
to PNG by resvg with no network, no external files and no DTD (`svg_render`). The pixel limit is
an error, not Pillow's warning.

Every image is decoded in full, pass-through formats too: a picture that does not decode
completely is an `ImageConversionError`, never a clean-looking row. The one exception is a JPEG
cut short (its bytes end before the end-of-image marker): it is decoded once more with that
marker added, which is what Pillow's `LOAD_TRUNCATED_IMAGES` does for JPEG but for this image
only, and the rows before the cut come back as a PNG with `damage` saying what was lost (OCR may
still read them). A TIFF whose directory chain loops or leads out of the file is refused before
Pillow, which would stop there quietly (`tiff`).

HEIF (HEIC, and every flavour libheif reads: collections, Live Photo stills, images with depth
maps or other auxiliary images, whose primary image is taken) is decoded by pillow-heif; AVIF by
Pillow's own AVIF plugin (Pillow >= 11.3 wheels ship libavif; an animated AVIF gives its first
frame), or by pillow-heif where an older pillow-heif still registers an AVIF opener. An image
sequence with no still image gives the first picture of its track (`sequences`, FFmpeg). A HEIF
or AVIF container that holds no decodable image says why (no `meta` box, no image item), and
what it declares (sizes, EXIF) is kept as notes (`describe`).
"""

from __future__ import annotations

import io
import struct
import warnings
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from content_core.binary import media_types as mt
from content_core.binary.isobmff import ContainerSummary, read_container
from content_core.binary.sequences import first_sequence_frame
from content_core.binary.svg_render import render_svg
from content_core.binary.tiff import count_ifds
from content_core.errors import BinaryTooLargeError, ImageConversionError, MissingDependencyError
from content_core.formats import Format, NormaliseStep, Signature

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = ["FORMATS", "ImageNormalizer", "NormalisedImage", "pillow_for"]

_PASS_THROUGH = frozenset({mt.PNG, mt.JPEG, mt.GIF, mt.WEBP})
_HEIF_FAMILY = frozenset({mt.HEIC, mt.HEIF, mt.AVIF})
# Formats whose frames are separate pictures (pages), not an animation.
_PAGED = frozenset({mt.TIFF, mt.HEIC, mt.HEIF})
_MAX_NOTE_CHARS = 2000
_JPEG_END = b"\xff\xd9"


def _is_webp(data: bytes) -> bool:
    return data.startswith(b"RIFF") and data[8:12] == b"WEBP"


def _is_bmp(data: bytes) -> bool:
    head = data[:64]
    if len(head) < 26 or not head.startswith(b"BM"):
        return False
    declared_size, _, offset, dib_size = struct.unpack_from("<IIII", head, 2)
    # "BM" starts ordinary text too, so require a coherent header: a known DIB header size
    # and a pixel offset inside the file.
    return dib_size in (12, 40, 52, 56, 64, 108, 124) and 14 + dib_size <= offset <= max(
        len(data), declared_size
    )


def _image(name: str, media_type: str, extension: str, *signatures: Signature) -> Format:
    return Format(name=name, media_types=(media_type,), kind="image", yields_text=False,
                  normalise=NormaliseStep.CONVERT_IMAGE, signatures=signatures,
                  extension=extension)


# Pictures: no text of their own (a scan needs OCR). HEIC, HEIF and AVIF are told apart by
# their ISO-BMFF brands (`sniff`'s family sniffer); SVG is declared with its text extractor.
FORMATS = (
    _image("png", mt.PNG, ".png", Signature(b"\x89PNG\r\n\x1a\n")),
    _image("jpeg", mt.JPEG, ".jpg", Signature(b"\xff\xd8\xff")),
    _image("gif", mt.GIF, ".gif", Signature(b"GIF87a"), Signature(b"GIF89a")),
    Format(name="webp", media_types=(mt.WEBP,), kind="image", yields_text=False,
           normalise=NormaliseStep.CONVERT_IMAGE, sniff=_is_webp, extension=".webp"),
    _image("tiff", mt.TIFF, ".tif", Signature(b"II*\x00"), Signature(b"MM\x00*"),
           Signature(b"II+\x00"), Signature(b"MM\x00+")),
    Format(name="bmp", media_types=(mt.BMP,), kind="image", yields_text=False,
           normalise=NormaliseStep.CONVERT_IMAGE, sniff=_is_bmp, extension=".bmp"),
    _image("heic", mt.HEIC, ".heic"),
    _image("heif", mt.HEIF, ".heif"),
    _image("avif", mt.AVIF, ".avif"),
)


class NormalisedImage(BaseModel):
    """The result of normalising one image.

    `converted` is False when `data` is the input unchanged (a pass-through format).
    `page_count` is the number of frames for a multi-page PDF, 1 otherwise. `damage` says why
    only part of the picture could be decoded (a truncated JPEG); `data` is then a PNG of that
    part, the rest filled in by the decoder.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: bytes
    media_type: str
    width: int
    height: int
    page_count: int = 1
    converted: bool = False
    damage: str | None = None


class ImageNormalizer:
    """Convert an image to PNG (or multi-page PDF) within a pixel budget."""

    def __init__(
        self,
        *,
        max_pixels: int = 89_478_485,
        max_svg_bytes: int = 8 * 1024 * 1024,
        max_pages: int = 5000,
    ) -> None:
        self.max_pixels = max_pixels
        self.max_svg_bytes = max_svg_bytes
        # A multi-page TIFF becomes a PDF of one page per directory: BinaryConfig.max_pdf_pages.
        self.max_pages = max_pages

    def normalise(self, data: bytes, media_type: str, *, filename: str | None = None) -> (
        NormalisedImage
    ):
        """Return the consumer-ready form of the image `data` of type `media_type`.

        Raises:
            BinaryTooLargeError: more pixels than `max_pixels` (an SVG canvas too), an SVG over
                its byte limit, or a TIFF of more than `max_pages` pages.
            ImageConversionError: the image cannot be decoded completely (save a JPEG cut
                short, see `NormalisedImage.damage`) or re-encoded.
            MissingDependencyError: the decoder for this format is not installed.
        """
        name = filename or "<image>"
        if media_type == mt.TIFF:
            count_ifds(data, name, max_pages=self.max_pages)
        if media_type == mt.SVG:
            svg = render_svg(data, name, max_pixels=self.max_pixels, max_bytes=self.max_svg_bytes)
            return NormalisedImage(
                data=svg.png, media_type=mt.PNG, width=svg.width, height=svg.height,
                converted=True,
            )
        Image = pillow_for(media_type)
        try:
            with warnings.catch_warnings():
                # Pillow only warns between 1x and 2x its limit; make every excess an error.
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(data)) as image:
                    self._check_pixels(image.size, name, media_type)
                    frames = getattr(image, "n_frames", 1)
                    if media_type in _PASS_THROUGH:
                        return _pass_through(image, data, name, media_type)
                    if media_type in _PAGED and frames > 1:
                        return self._frames_to_pdf(image, name, media_type)
                    return _to_png(image, name, media_type)
        except (BinaryTooLargeError, ImageConversionError):
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise BinaryTooLargeError(
                f"{name}: over the pixel limit ({exc})", media_type=media_type
            ) from exc
        except (OSError, ValueError, SyntaxError, EOFError, TypeError, IndexError,
                KeyError, ZeroDivisionError, MemoryError, RuntimeError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if media_type in _HEIF_FAMILY:
                return self._without_still(data, name, media_type, reason)
            raise ImageConversionError(
                f"{name}: cannot decode {media_type} ({reason})", media_type=media_type
            ) from exc

    def _without_still(
        self, data: bytes, name: str, media_type: str, reason: str
    ) -> NormalisedImage:
        """A HEIF/AVIF whose still image libheif/libavif cannot find: the first picture of its
        image sequence track, else an error that says what the container holds."""
        summary = read_container(data)
        if summary.track_sizes:
            try:
                frame = first_sequence_frame(data, name, media_type, max_pixels=self.max_pixels)
            except ImageConversionError as exc:
                reason = exc.message.removeprefix(f"{name}: ")
            else:
                return _to_png(frame, name, media_type)
        raise ImageConversionError(
            _no_image_message(summary, name, media_type, reason), media_type=media_type
        )

    def describe(self, data: bytes, media_type: str) -> tuple[str, ...]:
        """Notes on what a HEIF or AVIF container declares (brands, image items, sizes, EXIF),
        for a row whose image could not be decoded; empty for other formats."""
        if media_type not in _HEIF_FAMILY:
            return ()
        summary = read_container(data)
        notes = [f"brands: {', '.join(summary.brands) or 'none'}"]
        if summary.has_meta:
            kinds = ", ".join(summary.item_types) or "none"
            notes.append(f"items: {len(summary.item_types)} ({kinds})")
        sizes = [*summary.sizes, *summary.track_sizes]
        if sizes:
            notes.append("declared sizes: " + ", ".join(f"{w}x{h}" for w, h in sizes))
        if summary.exif:
            notes.append(_exif_note(summary.exif))
        return tuple(notes)

    def _check_pixels(self, size: tuple[int, int], name: str, media_type: str) -> None:
        width, height = size
        if width <= 0 or height <= 0:
            raise ImageConversionError(f"{name}: empty image {width}x{height}")
        if width * height > self.max_pixels:
            raise BinaryTooLargeError(
                f"{name}: {width}x{height} pixels, over the limit of {self.max_pixels}",
                media_type=media_type,
            )

    def _frames_to_pdf(self, image: PilImage, name: str, media_type: str) -> NormalisedImage:
        from PIL import ImageSequence

        pages = []
        total = 0
        for frame in ImageSequence.Iterator(image):
            total += frame.size[0] * frame.size[1]
            if total > self.max_pixels:
                raise BinaryTooLargeError(
                    f"{name}: frames total over the pixel limit of {self.max_pixels}",
                    media_type=media_type,
                )
            pages.append(_pdf_ready(frame.copy()))
        buffer = io.BytesIO()
        # No creation or modification date: the same frames make the same bytes, so the
        # rendition's content-addressed artifact id is the same on every run and every host.
        pages[0].save(
            buffer, format="PDF", save_all=True, append_images=pages[1:], resolution=96,
            creationDate=None, modDate=None,
        )
        first = pages[0]
        return NormalisedImage(
            data=buffer.getvalue(),
            media_type=mt.PDF,
            width=first.size[0],
            height=first.size[1],
            page_count=len(pages),
            converted=True,
        )


def pillow_for(media_type: str) -> Any:  # Any: the PIL.Image module
    """Pillow's Image module, able to open `media_type`: the HEIF and AVIF openers are
    registered here, in every process that decodes one (a registration is per process).

    Raises:
        MissingDependencyError: the plug-in `media_type` needs is not installed.
    """
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is a core dependency
        raise MissingDependencyError("Pillow is required for images", extra="binary") from exc
    if media_type == mt.AVIF:
        from PIL import features

        if features.check("avif"):
            return Image  # Pillow's own plugin, built with libavif
    if media_type in _HEIF_FAMILY:
        try:
            import pillow_heif
        except ImportError as exc:
            raise MissingDependencyError(
                f"pillow-heif is required for {media_type}", extra="binary"
            ) from exc
        pillow_heif.register_heif_opener()
        if media_type == mt.AVIF:
            if not hasattr(pillow_heif, "register_avif_opener"):
                raise MissingDependencyError(
                    "AVIF needs Pillow >= 11.3 built with libavif (or pillow-heif < 1.0)",
                    extra="binary",
                )
            pillow_heif.register_avif_opener()
    return Image


def _no_image_message(
    summary: ContainerSummary, name: str, media_type: str, reason: str
) -> str:
    """Why a HEIF/AVIF container gave no image, in the words a person can act on."""
    label = "AVIF file" if media_type == mt.AVIF else "HEIF container"
    tracks = summary.track_sizes
    track_note = (
        f"; its {len(tracks)} image sequence track(s) "
        f"({', '.join(f'{w}x{h}' for w, h in tracks)}) could not be decoded ({reason})"
        if tracks else ""
    )
    if not summary.has_meta:
        return f"{name}: {label} has no `meta` box, so it holds no image item{track_note}"
    if summary.image_items == 0:
        kinds = f": {', '.join(summary.item_types)}" if summary.item_types else ""
        return (
            f"{name}: {label} holds no image ({len(summary.item_types)} items{kinds})"
            f"{track_note}"
        )
    return f"{name}: cannot decode {media_type} ({reason})"


def _exif_note(tiff: bytes) -> str:
    """The readable EXIF tags (names and values, binary ones left out), one line."""
    from PIL import ExifTags, Image

    exif = Image.Exif()
    try:
        exif.load(b"Exif\x00\x00" + tiff)
        tags = dict(exif.items())
        tags.update(exif.get_ifd(ExifTags.IFD.Exif))
    except (OSError, ValueError, SyntaxError, struct.error, KeyError, TypeError) as exc:
        return f"EXIF: unreadable ({type(exc).__name__})"
    parts = [
        f"{ExifTags.TAGS.get(tag, hex(tag))}={value}"
        for tag, value in tags.items()
        if not isinstance(value, (bytes, dict)) and tag != ExifTags.IFD.Exif
    ]
    return ("EXIF: " + "; ".join(parts))[:_MAX_NOTE_CHARS]


def _pass_through(image: PilImage, data: bytes, name: str, media_type: str) -> NormalisedImage:
    """`data` unchanged once its first frame decodes in full (and a PNG's checksums hold); a
    JPEG cut short is the PNG of the part before the cut, with its damage named."""
    from PIL import Image

    width, height = image.size
    try:
        image.load()
    except OSError as exc:
        if media_type != mt.JPEG or data.endswith(_JPEG_END):
            raise
        try:
            return _truncated_jpeg(data, name, f"{type(exc).__name__}: {exc}")
        except (OSError, ValueError, SyntaxError, EOFError):
            raise exc from None  # the first reason is the one to report
    # verify() reads what load() does not check (a PNG's chunk checksums); it needs a fresh
    # image and leaves it unusable.
    with Image.open(io.BytesIO(data)) as fresh:
        fresh.verify()
    return NormalisedImage(data=data, media_type=media_type, width=width, height=height)


def _truncated_jpeg(data: bytes, name: str, reason: str) -> NormalisedImage:
    """The decodable part of a JPEG whose bytes stop before its end-of-image marker: the bytes
    with the marker added decode as far as they go (libjpeg fills the rest with grey, a
    progressive JPEG comes out at the detail its complete scans carry).

    Raises:
        OSError: even the completed stream does not decode (or ValueError, SyntaxError,
            EOFError, as Pillow's JPEG plug-in raises them).
    """
    from PIL import Image

    with Image.open(io.BytesIO(data + _JPEG_END)) as image:
        image.load()
        png = _to_png(image, name, mt.JPEG)
    damage = (
        f"{name}: JPEG is truncated ({len(data)} bytes, no end-of-image marker; {reason}): "
        "only the part before the cut was decoded"
    )
    return png.model_copy(update={"damage": damage})


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
