"""What a HEIF or AVIF container declares, read from its boxes without decoding anything.

libheif and libavif say only that they found no image; a user needs to know why (no `meta`
box, a `meta` box listing no image item, only a video track) and what the file still declares:
its brands, the image sizes in `ispe` and `tkhd`, and its EXIF. ISO/IEC 14496-12 (boxes),
23008-12 (HEIF items). Only the boxes named here are read; sizes are checked against the data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["IMAGE_ITEM_TYPES", "ContainerSummary", "read_container"]

# Item types that code a picture (23008-12, ISO/IEC 23000-22 and the AV1/VVC/JPEG bindings).
IMAGE_ITEM_TYPES = frozenset(
    {"hvc1", "av01", "grid", "iden", "iovl", "jpeg", "j2k1", "avc1", "vvc1", "unci", "tili"}
)
_MAX_BOXES = 10_000


@dataclass(frozen=True, slots=True)
class ContainerSummary:
    """The declarations of an ISOBMFF image container.

    `item_types` lists the type of every item in `iinf` (image items and others such as
    `Exif`); `sizes` the `ispe` image sizes; `track_sizes` the sizes of the tracks in `moov`
    (image sequences); `exif` the TIFF-structured EXIF payload of the first `Exif` item.
    """

    brands: tuple[str, ...] = ()
    has_meta: bool = False
    item_types: tuple[str, ...] = ()
    sizes: tuple[tuple[int, int], ...] = ()
    track_sizes: tuple[tuple[int, int], ...] = ()
    exif: bytes | None = None

    @property
    def image_items(self) -> int:
        """The number of items that code a picture."""
        return sum(1 for kind in self.item_types if kind in IMAGE_ITEM_TYPES)


def _boxes(data: bytes, start: int, end: int) -> list[tuple[str, int, int]]:
    """(type, payload start, payload end) of the boxes between `start` and `end`."""
    out: list[tuple[str, int, int]] = []
    offset = start
    while offset + 8 <= end and len(out) < _MAX_BOXES:
        size, raw_type = struct.unpack_from(">I4s", data, offset)
        header = 8
        if size == 1 and offset + 16 <= end:
            (size,) = struct.unpack_from(">Q", data, offset + 8)
            header = 16
        elif size == 0:
            size = end - offset
        if size < header or offset + size > end:
            break  # truncated or lying size: stop here, keep what was read
        out.append((raw_type.decode("latin-1"), offset + header, offset + size))
        offset += size
    return out


def read_container(data: bytes) -> ContainerSummary:
    """Return what the top-level `ftyp`, `meta` and `moov` boxes of `data` declare."""
    brands: list[str] = []
    meta: tuple[int, int] | None = None
    tracks: list[tuple[int, int]] = []
    for kind, start, end in _boxes(data, 0, len(data)):
        if kind == "ftyp" and end - start >= 8:
            brands.append(data[start:start + 4].decode("latin-1"))
            brands.extend(
                data[i:i + 4].decode("latin-1") for i in range(start + 8, end - 3, 4)
            )
        elif kind == "meta" and meta is None:
            meta = (start + 4, end)  # a full box: version and flags first
        elif kind == "moov":
            tracks.extend(_track_sizes(data, start, end))
    unique_brands = tuple(dict.fromkeys(b for b in brands if b.strip("\x00 ")))
    if meta is None:
        return ContainerSummary(brands=unique_brands, track_sizes=tuple(tracks))
    items: dict[int, str] = {}
    sizes: list[tuple[int, int]] = []
    locations: dict[int, list[tuple[int, int]]] = {}
    for kind, start, end in _boxes(data, *meta):
        if kind == "iinf":
            items = _items(data, start, end)
        elif kind == "iprp":
            sizes = _ispe_sizes(data, start, end)
        elif kind == "iloc":
            locations = _locations(data, start, end)
    exif_ids = [item for item, kind in items.items() if kind == "Exif"]
    exif = _exif(data, locations.get(exif_ids[0], [])) if exif_ids else None
    return ContainerSummary(
        brands=unique_brands,
        has_meta=True,
        item_types=tuple(items.values()),
        sizes=tuple(sizes),
        track_sizes=tuple(tracks),
        exif=exif,
    )


def _track_sizes(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    sizes: list[tuple[int, int]] = []
    for kind, t_start, t_end in _boxes(data, start, end):
        if kind != "trak":
            continue
        for sub, s_start, s_end in _boxes(data, t_start, t_end):
            if sub != "tkhd" or s_end - s_start < 84:
                continue
            version = data[s_start]
            at = s_start + (92 if version == 1 else 80) - 4  # width, height: last 8 bytes
            if at + 8 <= s_end:
                width, height = struct.unpack_from(">II", data, at)
                sizes.append((width >> 16, height >> 16))
    return sizes


def _items(data: bytes, start: int, end: int) -> dict[int, str]:
    version = data[start] if start < end else 0
    first = start + (8 if version else 6)
    items: dict[int, str] = {}
    for kind, i_start, i_end in _boxes(data, first, end):
        if kind != "infe" or i_end - i_start < 4:
            continue
        infe_version = data[i_start]
        if infe_version < 2:
            continue  # versions 0 and 1 name no item type
        id_size = 4 if infe_version >= 3 else 2
        at = i_start + 4
        if at + id_size + 6 > i_end:
            continue
        item_id = int.from_bytes(data[at:at + id_size], "big")
        type_at = at + id_size + 2
        items[item_id] = data[type_at:type_at + 4].decode("latin-1")
    return items


def _ispe_sizes(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    sizes: list[tuple[int, int]] = []
    for kind, c_start, c_end in _boxes(data, start, end):
        if kind != "ipco":
            continue
        for prop, p_start, p_end in _boxes(data, c_start, c_end):
            if prop == "ispe" and p_end - p_start >= 12:
                sizes.append(struct.unpack_from(">II", data, p_start + 4))
    return sizes


def _locations(data: bytes, start: int, end: int) -> dict[int, list[tuple[int, int]]]:
    """Item id to (offset, length) extents, from `iloc` (file offsets only)."""
    try:
        return _parse_iloc(data, start, end)
    except (struct.error, IndexError):
        return {}


def _parse_iloc(data: bytes, start: int, end: int) -> dict[int, list[tuple[int, int]]]:
    view = data[start:end]
    version = view[0]
    offset_size, length_size = view[4] >> 4, view[4] & 15
    base_size, index_size = view[5] >> 4, (view[5] & 15 if version in (1, 2) else 0)
    at = 6

    def number(size: int) -> int:
        nonlocal at
        value = int.from_bytes(view[at:at + size], "big") if size else 0
        if at + size > len(view):
            raise IndexError("iloc truncated")
        at += size
        return value

    count = number(4 if version == 2 else 2)
    out: dict[int, list[tuple[int, int]]] = {}
    for _ in range(min(count, _MAX_BOXES)):
        item_id = number(4 if version == 2 else 2)
        method = number(2) & 15 if version in (1, 2) else 0
        number(2)  # data reference index
        base = number(base_size)
        extents = []
        for _ in range(number(2)):
            number(index_size)
            extents.append((base + number(offset_size), number(length_size)))
        if method == 0:
            out[item_id] = extents
    return out


def _exif(data: bytes, extents: list[tuple[int, int]]) -> bytes | None:
    payload = b"".join(data[offset:offset + length] for offset, length in extents[:16])
    if len(payload) < 8:
        return None
    # The item starts with the offset of the TIFF header; Apple puts "Exif\0\0" before it.
    skip = 4 + int.from_bytes(payload[:4], "big")
    tiff = payload[skip:] if skip < len(payload) else payload[4:]
    if tiff.startswith(b"Exif\x00\x00"):
        tiff = tiff[6:]
    return tiff if tiff[:4] in (b"II*\x00", b"MM\x00*") else None
