"""The first picture of a HEIF or AVIF image sequence that has no still image to decode.

An image sequence (`msf1`, `avis`) keeps its pictures in a track, like a video; a file may
carry only the track (no `meta` box, or one that lists no image), which libheif and libavif
do not decode as a still. FFmpeg's MP4 demuxer reads those tracks; PyAV (the `media` extra)
is its binding. Only that demuxer is used, with external data references off, and the frame
size is checked against the pixel budget before a frame is decoded.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from content_core.errors import BinaryTooLargeError, ImageConversionError, MissingDependencyError

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = ["first_sequence_frame"]


def first_sequence_frame(data: bytes, name: str, media_type: str, *, max_pixels: int) -> (
    PilImage
):
    """Decode the first frame of the first picture track of `data`.

    Raises:
        BinaryTooLargeError: the track's pictures are over `max_pixels`.
        ImageConversionError: no picture track, or FFmpeg cannot decode it.
        MissingDependencyError: PyAV is not installed.
    """
    try:
        import av
    except ImportError as exc:
        raise MissingDependencyError(
            f"{name}: a {media_type} image sequence without a still image needs PyAV",
            extra="media",
        ) from exc
    try:
        # "mp4" names FFmpeg's ISOBMFF demuxer; no probing of other formats, no drefs.
        with av.open(
            io.BytesIO(data), mode="r", format="mp4", options={"enable_drefs": "0"}
        ) as box:
            if not box.streams.video:
                raise ImageConversionError(
                    f"{name}: no picture track in the {media_type} sequence",
                    media_type=media_type,
                )
            stream = box.streams.video[0]
            _check(stream.codec_context.width, stream.codec_context.height, name, media_type,
                   max_pixels)
            for frame in box.decode(stream):
                _check(frame.width, frame.height, name, media_type, max_pixels)
                image: PilImage = frame.to_image()  # type: ignore[no-untyped-call]
                return image
    except av.FFmpegError as exc:
        raise ImageConversionError(
            f"{name}: the {media_type} sequence track cannot be decoded ({exc})",
            media_type=media_type,
        ) from exc
    raise ImageConversionError(
        f"{name}: the {media_type} sequence track holds no frame", media_type=media_type
    )


def _check(width: int, height: int, name: str, media_type: str, max_pixels: int) -> None:
    if width * height > max_pixels:
        raise BinaryTooLargeError(
            f"{name}: sequence frames of {width}x{height} pixels, over the limit of {max_pixels}",
            media_type=media_type,
        )
