"""Zip bomb checks for zip-based documents (DOCX, XLSX, PPTX, ODF, EPUB).

`zipfile` has no size or ratio limit and does not detect overlapping-entry bombs, and
python-docx/openpyxl/python-pptx inflate whatever they are given. So before a library sees a
package we check member count, names, declared sizes, compression ratios and member overlap,
then inflate every member once, counting the real bytes against the budget.
"""

from __future__ import annotations

import io
import zipfile
import zlib

from content_core.errors import ExtractionError, UnsafeInputError
from content_core.extract.base import ExtractOptions

__all__ = ["open_checked_zip"]

_READ_CHUNK = 1024 * 1024
# Small members legitimately compress very well (runs of empty XML cells); the ratio rule
# applies from this declared size on.
_RATIO_FLOOR_BYTES = 4 * 1024 * 1024
_LOCAL_HEADER_BYTES = 30
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")


def _refuse(reason: str, media_type: str) -> UnsafeInputError:
    return UnsafeInputError(
        f"zip package refused: {reason}", media_type=media_type, stage="extract"
    )


def open_checked_zip(data: bytes, options: ExtractOptions, *, media_type: str) -> zipfile.ZipFile:
    """Return a `ZipFile` over `data` once it has passed every bomb check.

    Raises:
        UnsafeInputError: too many members, declared or real size over the budget, a member
            over the compression-ratio limit, overlapping members, or duplicate names.
        ExtractionError: the bytes are not a readable zip archive.
    """
    if data.startswith(_OLE_MAGIC) and _ENCRYPTED_PACKAGE in data:
        # Office wraps a password-protected OOXML package in an OLE2 "EncryptedPackage".
        raise UnsafeInputError(
            "password-protected Office document (OLE2 EncryptedPackage, not a zip)",
            media_type=media_type,
            stage="extract",
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ExtractionError(
            f"not a readable zip package (damaged or cut short): {exc}",
            media_type=media_type,
            stage="extract",
        ) from exc
    if len(members) > options.max_zip_members:
        raise _refuse(f"{len(members)} members > {options.max_zip_members}", media_type)
    budget = options.max_uncompressed_bytes
    declared = sum(m.file_size for m in members)
    if declared > budget:
        raise _refuse(f"declared size {declared} bytes > budget {budget}", media_type)
    names: set[str] = set()
    for member in members:
        if member.filename in names:
            raise _refuse(f"duplicate member name {member.filename!r}", media_type)
        names.add(member.filename)
        if (
            member.file_size > _RATIO_FLOOR_BYTES
            and member.file_size > options.max_compression_ratio * max(member.compress_size, 1)
        ):
            raise _refuse(f"member {member.filename!r} compression ratio too high", media_type)
    _check_overlap(members, media_type)
    _inflate_all(archive, members, budget, media_type)
    return archive


def _check_overlap(members: list[zipfile.ZipInfo], media_type: str) -> None:
    """Refuse members whose stored bytes overlap the next member's local header."""
    ordered = sorted(members, key=lambda m: m.header_offset)
    for current, following in zip(ordered, ordered[1:], strict=False):
        end = (
            current.header_offset
            + _LOCAL_HEADER_BYTES
            + len(current.orig_filename.encode("utf-8", "surrogateescape"))
            + current.compress_size
        )
        if end > following.header_offset:
            raise _refuse(
                f"members {current.filename!r} and {following.filename!r} overlap", media_type
            )


def _inflate_all(
    archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], budget: int, media_type: str
) -> None:
    """Inflate every member once, counting real bytes; CRC errors surface here too."""
    total = 0
    for member in members:
        if member.is_dir():
            continue
        try:
            with archive.open(member) as stream:
                while chunk := stream.read(_READ_CHUNK):
                    total += len(chunk)
                    if total > budget:
                        raise _refuse(f"inflated size over budget {budget} bytes", media_type)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, zlib.error) as exc:
            raise ExtractionError(
                f"zip member {member.filename!r} unreadable: {exc}",
                media_type=media_type,
                stage="extract",
            ) from exc
