"""Zip reading with the checks zipfile lacks: overlapping entries, real decompressed size
against the shared budget, and a compression-ratio ceiling. Used for archives and for the zip
packages inside Office files."""

from __future__ import annotations

import io
import zipfile
import zlib

from content_core.binary.budget import ExpansionBudget
from content_core.errors import ArchiveExtractionError, BinaryFanoutError, BinaryTooLargeError

__all__ = ["check_zip_layout", "check_zip_package", "read_zip_member"]

_CHUNK = 64 * 1024
_ZIP_LOCAL_HEADER = 30


def check_zip_layout(infos: list[zipfile.ZipInfo], size: int, name: str) -> None:
    """Refuse zips whose entries overlap (the "non-recursive zip bomb" trick) or point past
    the end of the file; this Python's zipfile detects neither."""
    spans: list[tuple[int, int]] = []
    for info in infos:
        start = info.header_offset
        end = start + _ZIP_LOCAL_HEADER + len(info.filename.encode("utf-8", "replace"))
        end += info.compress_size
        if start < 0 or start >= size:
            raise ArchiveExtractionError(f"{name}: entry {info.filename!r} points outside")
        spans.append((start, end))
    spans.sort()
    for (_, previous_end), (start, _) in zip(spans, spans[1:], strict=False):
        if start < previous_end:
            raise ArchiveExtractionError(
                f"{name}: overlapping zip entries (a zip bomb construction)"
            )


def read_zip_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    budget: ExpansionBudget,
    name: str,
    passwords: tuple[str, ...],
) -> bytes:
    """Read one member in chunks, charging real decompressed bytes as they come."""
    encrypted = bool(info.flag_bits & 0x1)
    candidates: tuple[bytes | None, ...] = (
        tuple(p.encode("utf-8") for p in passwords) if encrypted else (None,)
    )
    if encrypted and not candidates:
        raise ArchiveExtractionError(f"{name}: member {info.filename!r} is encrypted")
    limit_ratio = budget.max_ratio
    last: BaseException | None = None
    for password in candidates:
        out = io.BytesIO()
        charged = 0
        try:
            with archive.open(info, pwd=password) as handle:
                while True:
                    chunk = handle.read(_CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    charged += len(chunk)
                    budget.charge_bytes(len(chunk), name)
                    if charged > 1_048_576 and charged > limit_ratio * max(info.compress_size, 1):
                        raise BinaryTooLargeError(
                            f"{name}: member {info.filename!r} expands more than "
                            f"{limit_ratio:.0f} times"
                        )
            return out.getvalue()
        except (BinaryTooLargeError, BinaryFanoutError):
            raise
        except RuntimeError as exc:  # wrong password
            budget.used_bytes -= charged
            last = exc
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                NotImplementedError, KeyError) as exc:
            raise ArchiveExtractionError(
                f"{name}: member {info.filename!r} cannot be read ({exc})"
            ) from exc
    raise ArchiveExtractionError(
        f"{name}: member {info.filename!r} is encrypted and no configured password works"
    ) from last


def check_zip_package(data: bytes, budget: ExpansionBudget, *, filename: str = "") -> int:
    """Inflate every part of a zip-based document (DOCX, XLSX, PPTX, ODF, EPUB) against the
    budget, without keeping the output, and return the total expanded size.

    Office parsers inflate parts with no limit; running this first means they only ever see
    packages whose real expanded size is known to be within the budget.

    Raises:
        BinaryTooLargeError: the parts expand past the budget or past the ratio limit.
        BinaryFanoutError: the package has more parts than the member budget.
        ArchiveExtractionError: the package is not a readable zip or has overlapping entries.
    """
    name = filename or "<package>"
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
            RuntimeError) as exc:
        raise ArchiveExtractionError(f"{name}: not a readable zip package ({exc})") from exc
    total = 0
    with archive:
        infos = archive.infolist()
        check_zip_layout(infos, len(data), name)
        if len(infos) > budget.max_files:
            raise BinaryFanoutError(f"{name}: {len(infos)} parts, over {budget.max_files}")
        for info in infos:
            if info.is_dir():
                continue
            if info.flag_bits & 0x1:
                raise ArchiveExtractionError(f"{name}: part {info.filename!r} is encrypted")
            try:
                with archive.open(info) as handle:
                    part = 0
                    while True:
                        chunk = handle.read(_CHUNK)
                        if not chunk:
                            break
                        part += len(chunk)
                        budget.charge_bytes(len(chunk), name)
                        ceiling = budget.max_ratio * max(info.compress_size, 1)
                        if part > 1_048_576 and part > ceiling:
                            raise BinaryTooLargeError(
                                f"{name}: part {info.filename!r} expands more than "
                                f"{budget.max_ratio:.0f} times"
                            )
                    total += part
            except (BinaryTooLargeError, BinaryFanoutError):
                raise
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                    NotImplementedError, RuntimeError, KeyError) as exc:
                raise ArchiveExtractionError(
                    f"{name}: part {info.filename!r} cannot be read ({exc})"
                ) from exc
    return total
