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

from content_core.binary.zips import check_not_encrypted_package, check_zip_layout
from content_core.errors import EncryptedFileError, ExtractionError, LimitExceededError
from content_core.extract.base import ExtractOptions

__all__ = ["open_checked_zip"]

_READ_CHUNK = 1024 * 1024
# Small members legitimately compress very well (runs of empty XML cells); the ratio rule
# applies from this declared size on.
_RATIO_FLOOR_BYTES = 4 * 1024 * 1024


def _refuse(
    reason: str, media_type: str, *, limit: str, value: float, maximum: float
) -> LimitExceededError:
    return LimitExceededError(
        f"zip package refused: {reason} ({limit})",
        media_type=media_type,
        stage="extract",
        limit=limit,
        value=value,
        maximum=maximum,
    )


def open_checked_zip(data: bytes, options: ExtractOptions, *, media_type: str) -> zipfile.ZipFile:
    """Return a `ZipFile` over `data` once it has passed every bomb check.

    Raises:
        LimitExceededError: too many members, declared or real size over the budget, or a
            member over the compression-ratio limit.
        UnsafeArchiveError: members share data ranges (a bomb construction).
        EncryptedDocumentError: a password-protected DOCX/XLSX/PPTX (OLE2 EncryptedPackage).
        ExtractionError: the bytes are not a readable zip archive, or two parts share a name.
    """
    check_not_encrypted_package(data, media_type, "document")
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
        raise _refuse(
            f"{len(members)} members > {options.max_zip_members}", media_type,
            limit="max_zip_members", value=len(members), maximum=options.max_zip_members,
        )
    budget = options.max_uncompressed_bytes
    declared = sum(m.file_size for m in members)
    if declared > budget:
        raise _refuse(
            f"declared size {declared} bytes > budget {budget}", media_type,
            limit="max_uncompressed_bytes", value=declared, maximum=budget,
        )
    names: set[str] = set()
    for member in members:
        if member.filename in names:
            raise ExtractionError(
                f"invalid zip package: two parts named {member.filename!r}",
                media_type=media_type,
                stage="extract",
            )
        names.add(member.filename)
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _RATIO_FLOOR_BYTES and ratio > options.max_compression_ratio:
            raise _refuse(
                f"member {member.filename!r} compression ratio too high", media_type,
                limit="max_compression_ratio", value=ratio,
                maximum=options.max_compression_ratio,
            )
    check_zip_layout(members, data, "document")
    _inflate_all(archive, members, budget, media_type)
    return archive


def _inflate_all(
    archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], budget: int, media_type: str
) -> None:
    """Inflate every member once, counting real bytes; CRC errors surface here too."""
    total = 0
    for member in members:
        if member.is_dir():
            continue
        if member.flag_bits & 0x1:
            raise EncryptedFileError(
                f"zip package part {member.filename!r} is zip-encrypted",
                file_format="zip package",
                media_type=media_type,
                stage="extract",
            )
        try:
            with archive.open(member) as stream:
                while chunk := stream.read(_READ_CHUNK):
                    total += len(chunk)
                    if total > budget:
                        raise _refuse(
                            f"inflated size over budget {budget} bytes", media_type,
                            limit="max_uncompressed_bytes", value=total, maximum=budget,
                        )
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, zlib.error) as exc:
            raise ExtractionError(
                f"zip member {member.filename!r} unreadable: {exc}",
                media_type=media_type,
                stage="extract",
            ) from exc
