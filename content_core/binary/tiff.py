"""The IFD chain of a TIFF: each image file directory points at the next one, and the chain
must end (offset 0) inside the file.

Pillow stops quietly at an IFD it has seen before, so a chain that loops back on itself decodes
as a shorter, complete-looking image; walked here first, such a file is an error instead.
"""

from __future__ import annotations

import struct

from content_core.binary import media_types as mt
from content_core.errors import BinaryTooLargeError, ImageConversionError

__all__ = ["count_ifds"]

# (byte order, IFD offset format, entry count format, entry size) per header.
_LAYOUTS = {
    b"II*\x00": ("<", "I", "H", 12),
    b"MM\x00*": (">", "I", "H", 12),
    b"II+\x00": ("<", "Q", "Q", 20),  # BigTIFF
    b"MM\x00+": (">", "Q", "Q", 20),
}


def count_ifds(data: bytes, name: str, *, max_pages: int) -> int:
    """Return how many image file directories (pages) the TIFF `data` chains together.

    Raises:
        ImageConversionError: not a TIFF header, or the chain loops back on itself or leads
            past the end of the file (a truncated or damaged file).
        BinaryTooLargeError: more than `max_pages` directories (the walk stops there, so it is
            bounded on any input).
    """
    layout = _LAYOUTS.get(data[:4])
    if layout is None:
        raise ImageConversionError(f"{name}: not a TIFF header", media_type=mt.TIFF)
    order, offset_format, count_format, entry_size = layout
    offset_size = struct.calcsize(offset_format)
    count_size = struct.calcsize(count_format)
    first_at = 4 if offset_size == 4 else 8
    offset = _read(data, order + offset_format, first_at, name, "the first IFD offset")
    seen: set[int] = set()
    while offset:
        if offset in seen:
            raise ImageConversionError(
                f"{name}: TIFF directory chain loops: directory {len(seen)} points back to "
                f"the one at offset {offset}",
                media_type=mt.TIFF,
            )
        if len(seen) >= max_pages:
            raise BinaryTooLargeError(
                f"{name}: TIFF has more than {max_pages} pages (max_pdf_pages)",
                limit="max_pdf_pages", maximum=max_pages, media_type=mt.TIFF,
            )
        seen.add(offset)
        where = f"the IFD at offset {offset}"
        entries = _read(data, order + count_format, offset, name, where)
        offset = _read(data, order + offset_format, offset + count_size + entries * entry_size,
                       name, f"the end of {where}")
    return len(seen)


def _read(data: bytes, fmt: str, at: int, name: str, what: str) -> int:
    if at + struct.calcsize(fmt) > len(data):
        raise ImageConversionError(
            f"{name}: TIFF is truncated or damaged: {what} lies past the end of the file "
            f"({len(data)} bytes)",
            media_type=mt.TIFF,
        )
    value: int = struct.unpack_from(fmt, data, at)[0]
    return value
