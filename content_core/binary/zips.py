"""Zip reading with the checks zipfile lacks: overlapping data ranges, real decompressed size
against the shared budget, a compression-ratio ceiling, and entry names decoded as the writer
meant them. Used for archives and for the zip packages inside Office files."""

from __future__ import annotations

import io
import struct
import unicodedata
import zipfile
import zlib

from content_core.binary import media_types as mt
from content_core.binary.budget import ExpansionBudget
from content_core.binary.sniff import OLE2_MAGIC
from content_core.errors import (
    ArchiveExtractionError,
    BinaryFanoutError,
    BinaryTooLargeError,
    EncryptedArchiveError,
    EncryptedDocumentError,
    UnsafeArchiveError,
)

__all__ = [
    "check_not_encrypted_package",
    "check_zip_layout",
    "check_zip_package",
    "decode_zip_names",
    "read_zip_member",
]

_CHUNK = 64 * 1024
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_FLAG_ENCRYPTED = 0x1
_FLAG_UTF8 = 0x800
# Legacy encodings tried, when the bytes say so, for names written without the UTF-8 flag.
_CJK_ENCODINGS = ("cp932", "gbk")
_NAME_SAMPLE_BYTES = 64 * 1024
# The OLE2 directory stores stream names in UTF-16LE.
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
_PACKAGE_LABELS = {mt.DOCX: "DOCX", mt.XLSX: "XLSX", mt.PPTX: "PPTX"}


def check_not_encrypted_package(data: bytes, media_type: str, name: str) -> None:
    """Raise `EncryptedDocumentError` when `data` is a password-protected DOCX, XLSX or PPTX:
    Office wraps those in an OLE2 file whose "EncryptedPackage" stream holds the zip.

    Raises:
        EncryptedDocumentError: the document needs its password.
    """
    if data.startswith(OLE2_MAGIC) and _ENCRYPTED_PACKAGE in data:
        label = _PACKAGE_LABELS.get(media_type, "Office (DOCX, XLSX or PPTX)")
        raise EncryptedDocumentError(
            f"{name}: password-protected {label} document (OLE2 EncryptedPackage)",
            file_format=label,
            media_type=media_type,
        )


def check_zip_layout(infos: list[zipfile.ZipInfo], data: bytes, name: str) -> None:
    """Refuse zips whose entries share data ranges: the "non-recursive zip bomb" trick, which
    this Python's zipfile does not detect.

    Each entry's range runs from its local header to the end of its compressed data, with the
    lengths read from the local header itself (the bytes on disk, never a decoded name). An
    entry that points outside the file is left to fail alone when it is read: it can share
    nothing.

    Raises:
        UnsafeArchiveError: two entries' ranges overlap.
    """
    size = len(data)
    spans: list[tuple[int, int, str]] = []
    for info in infos:
        start = info.header_offset
        if start < 0 or start + _LOCAL_HEADER.size > size:
            continue
        fields = _LOCAL_HEADER.unpack_from(data, start)
        if fields[0] != _LOCAL_SIGNATURE:
            continue  # not a member zipfile can read; it fails alone when read
        end = start + _LOCAL_HEADER.size + fields[9] + fields[10] + info.compress_size
        if end > size:
            continue  # truncated data: reading it fails, for this member only
        spans.append((start, end, info.filename))
    spans.sort()
    for (_, previous_end, previous), (start, _, current) in zip(spans, spans[1:], strict=False):
        if start < previous_end:
            raise UnsafeArchiveError(
                f"{name}: zip entries {previous!r} and {current!r} share data "
                "(overlapping entries, a zip bomb construction)"
            )


def decode_zip_names(infos: list[zipfile.ZipInfo]) -> list[str]:
    """Return each entry's name decoded as its writer meant it, in `infos` order.

    Names flagged UTF-8 are UTF-8. The others are CP437 by the specification, but many
    writers used the system code page: when the raw bytes of all unflagged names are valid
    UTF-8 they are read so; when charset-normalizer finds them Shift-JIS (cp932) or GBK, so;
    otherwise CP437, unless CP1252 yields more Latin letters.
    Bytes the chosen encoding cannot decode survive as lone surrogates, which `safe_name`
    writes as `\\xNN`, so no name loses information.
    """
    raws = [info.orig_filename.encode("cp437") for info in infos]
    legacy = [raw for info, raw in zip(infos, raws, strict=True)
              if not info.flag_bits & _FLAG_UTF8 and not raw.isascii()]
    encoding = _legacy_encoding(legacy)
    names = []
    for info, raw in zip(infos, raws, strict=True):
        if info.flag_bits & _FLAG_UTF8 or raw.isascii():
            names.append(info.orig_filename)
        else:
            names.append(raw.decode(encoding, "surrogateescape"))
    return names


def _legacy_encoding(raws: list[bytes]) -> str:
    if not raws:
        return "cp437"
    joined = b"\n".join(raws)
    if _decodes(joined, "utf-8"):
        return "utf-8"
    from charset_normalizer import from_bytes

    # A sample is enough to tell code pages apart; a zip may hold 100,000 names.
    best = from_bytes(joined[:_NAME_SAMPLE_BYTES], cp_isolation=[*_CJK_ENCODINGS, "cp1252"]).best()
    if best is not None and best.encoding in _CJK_ENCODINGS:
        return best.encoding
    # CP437 (the specification's default, and what DOS and Windows Explorer wrote in the
    # West) and CP1252 both decode any byte; the one that yields Latin letters wins.
    latin437 = _latin_letters(joined.decode("cp437"))
    latin1252 = _latin_letters(joined.decode("cp1252", "replace"))
    return "cp1252" if latin1252 > latin437 else "cp437"


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _latin_letters(text: str) -> int:
    return sum(
        1 for ch in text if not ch.isascii() and unicodedata.name(ch, "").startswith("LATIN")
    )


def read_zip_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    budget: ExpansionBudget,
    name: str,
    passwords: tuple[str, ...],
    *,
    display: str | None = None,
) -> bytes:
    """Read one member in chunks, charging real decompressed bytes as they come.

    Raises:
        EncryptedArchiveError: the member is encrypted and no configured password opens it.
        BinaryTooLargeError: the member passes the byte budget or the ratio limit.
        ArchiveExtractionError: the member's data is damaged or uses an unknown method.
    """
    label = display or info.filename
    encrypted = bool(info.flag_bits & _FLAG_ENCRYPTED)
    candidates: tuple[bytes | None, ...] = (
        tuple(p.encode("utf-8") for p in passwords) if encrypted else (None,)
    )
    if encrypted and not candidates:
        raise EncryptedArchiveError(
            f"{name}: zip member {label!r} is encrypted (zip password) and no password is "
            "configured",
            file_format="zip",
        )
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
                    budget.check_ratio(charged, info.compress_size, name, label)
            return out.getvalue()
        except (BinaryTooLargeError, BinaryFanoutError):
            raise
        except RuntimeError as exc:  # wrong password
            budget.used_bytes -= charged
            last = exc
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                NotImplementedError, KeyError) as exc:
            raise ArchiveExtractionError(
                f"{name}: zip member {label!r} cannot be read ({exc})"
            ) from exc
    raise EncryptedArchiveError(
        f"{name}: zip member {label!r} is encrypted (zip password) and no configured password "
        "opens it",
        file_format="zip",
    ) from last


def check_zip_package(data: bytes, budget: ExpansionBudget, *, filename: str = "") -> int:
    """Inflate every part of a zip-based document (DOCX, XLSX, PPTX, ODF, EPUB) against the
    budget, without keeping the output, and return the total expanded size.

    Office parsers inflate parts with no limit; running this first means they only ever see
    packages whose real expanded size is known to be within the budget.

    Raises:
        BinaryTooLargeError: the parts expand past the budget or past the ratio limit.
        BinaryFanoutError: the package has more parts than the member budget.
        UnsafeArchiveError: the package's entries share data (a bomb construction).
        EncryptedArchiveError: a part is zip-encrypted.
        ArchiveExtractionError: the package is not a readable zip.
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
        check_zip_layout(infos, data, name)
        if len(infos) > budget.max_files:
            raise BinaryFanoutError(
                f"{name}: {len(infos)} parts, over max_expanded_files={budget.max_files}",
                limit="max_expanded_files",
                value=len(infos),
                maximum=budget.max_files,
            )
        for info in infos:
            if info.is_dir():
                continue
            if info.flag_bits & _FLAG_ENCRYPTED:
                raise EncryptedArchiveError(
                    f"{name}: package part {info.filename!r} is zip-encrypted",
                    file_format="zip package",
                )
            try:
                with archive.open(info) as handle:
                    part = 0
                    while True:
                        chunk = handle.read(_CHUNK)
                        if not chunk:
                            break
                        part += len(chunk)
                        budget.charge_bytes(len(chunk), name)
                        budget.check_ratio(part, info.compress_size, name, info.filename)
                    total += part
            except (BinaryTooLargeError, BinaryFanoutError):
                raise
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                    NotImplementedError, RuntimeError, KeyError) as exc:
                raise ArchiveExtractionError(
                    f"{name}: part {info.filename!r} cannot be read ({exc})"
                ) from exc
    return total
