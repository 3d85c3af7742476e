"""ArchiveUnpacker: read zip, tar, gzip and 7z members into memory under one byte budget.

Nothing is extracted to disk and no member name becomes a path: members are returned as
(display name, bytes). Links, devices and other special members are reported, never followed.
The same budget is charged by every container met while normalising one raw file, including the
zip packages inside Office files (`check_zip_package`).
"""

from __future__ import annotations

import io
import lzma
import posixpath
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from content_core.binary import media_types as mt
from content_core.binary.budget import ExpansionBudget
from content_core.binary.zips import (
    check_zip_layout,
    check_zip_package,
    decode_zip_names,
    read_zip_member,
)
from content_core.errors import (
    ArchiveExtractionError,
    BinaryFanoutError,
    BinaryNormalizationError,
    BinaryTooLargeError,
    EncryptedArchiveError,
    MissingDependencyError,
    UnsafeArchiveError,
    UnsupportedBinaryError,
)
from content_core.formats import Format, NormaliseStep, Signature

__all__ = [
    "FORMATS",
    "ArchiveMember",
    "ArchiveUnpacker",
    "ExpansionBudget",
    "check_zip_package",
    "safe_name",
]


def _archive(name: str, media_type: str, extension: str, *signatures: Signature) -> Format:
    return Format(name=name, media_types=(media_type,), kind="archive", yields_text=False,
                  normalise=NormaliseStep.UNPACK_ARCHIVE, signatures=signatures,
                  extension=extension)


# Containers: their text is in their members' rows. Zip and tar are told by `sniff`'s family
# sniffers (a zip may be an Office package; tar has no magic at offset 0).
FORMATS = (
    _archive("zip", mt.ZIP, ".zip"),
    _archive("tar", mt.TAR, ".tar"),
    _archive("gzip", mt.GZIP, ".gz", Signature(b"\x1f\x8b")),
    _archive("7z", mt.SEVEN_ZIP, ".7z", Signature(b"7z\xbc\xaf\x27\x1c")),
)

_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class ArchiveMember:
    """One member read from a container: a display name and its bytes, or why it failed."""

    name: str
    data: bytes | None
    error: BinaryNormalizationError | None = None


def safe_name(raw: str, fallback: str) -> str:
    """Return a display name from a container-supplied name: its last path part, no control
    characters, no leading dots; `fallback` when nothing usable is left.

    Bytes a name could not be decoded from (lone surrogates from `surrogateescape`) are kept
    as `\\xNN`: backslashes are path separators here, so a backslash left in a display name
    always starts such an escape.
    """
    cleaned = "".join(
        ch for ch in raw.replace("\\", "/") if ch.isprintable() or "\udc80" <= ch <= "\udcff"
    )
    base = posixpath.basename(cleaned.rstrip("/")).strip().lstrip(".")
    if not base:
        return fallback
    base = "".join(f"\\x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else ch
                   for ch in base)
    return base[:255]


def _unfollowed(name: str, member: str, target: str | None) -> BinaryNormalizationError:
    """The error recorded for a link or special member: a link that leaves the archive (an
    absolute target or one climbing out with '..') is a traversal attempt; any other link,
    device or FIFO is simply not something with content of its own."""
    if target is not None:
        parts = target.replace("\\", "/").split("/")
        if target.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            return UnsafeArchiveError(
                f"{name}: member {member!r} links outside the archive ({target!r}); "
                "not followed (path traversal)"
            )
    return UnsupportedBinaryError(
        f"{name}: member {member!r} is a link or special file; not followed"
    )


class ArchiveUnpacker:
    """Yield the members of a zip, tar, gzip or 7z archive, charging an `ExpansionBudget`."""

    def __init__(self, *, passwords: tuple[str, ...] = ()) -> None:
        self.passwords = passwords

    def unpack(
        self, data: bytes, media_type: str, budget: ExpansionBudget, *, filename: str = ""
    ) -> Iterator[ArchiveMember]:
        """Yield the archive's regular-file members in order.

        A member that cannot be read is yielded with `error` set and the next one is tried.
        Errors that make the whole archive unreadable, or that exhaust the budget, are raised.

        Raises:
            ArchiveExtractionError: the archive is malformed or truncated.
            EncryptedArchiveError: a 7z needs a password none configured opens (an encrypted
                zip member is yielded with this error instead).
            UnsafeArchiveError: a zip's entries share data (a bomb construction).
            BinaryTooLargeError: the budget of decompressed bytes is exhausted.
            BinaryFanoutError: the budget of member files is exhausted.
        """
        name = filename or "<archive>"
        if media_type == mt.ZIP:
            yield from self._zip(data, budget, name)
        elif media_type == mt.TAR:
            yield from self._tar(data, budget, name)
        elif media_type == mt.GZIP:
            yield from self._gzip(data, budget, name)
        elif media_type == mt.SEVEN_ZIP:
            yield from self._seven_zip(data, budget, name)
        else:
            raise ArchiveExtractionError(f"{name}: {media_type} is not an archive type")

    # ---------------------------------------------------------------------------------- zip

    def _zip(self, data: bytes, budget: ExpansionBudget, name: str) -> Iterator[ArchiveMember]:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
                RuntimeError) as exc:
            raise ArchiveExtractionError(f"{name}: not a readable zip ({exc})") from exc
        with archive:
            infos = archive.infolist()
            check_zip_layout(infos, data, name)
            names = decode_zip_names(infos)
            for index, (info, full_name) in enumerate(zip(infos, names, strict=True)):
                if info.is_dir():
                    continue
                display = safe_name(full_name, f"member-{index + 1}")
                budget.charge_file(name)
                mode = (info.external_attr >> 16) & 0o170000
                if mode and not stat.S_ISREG(mode):
                    yield ArchiveMember(display, None, _unfollowed(name, display, None))
                    continue
                try:
                    content = read_zip_member(
                        archive, info, budget, name, self.passwords, display=display
                    )
                except (BinaryTooLargeError, BinaryFanoutError):
                    raise
                except (ArchiveExtractionError, EncryptedArchiveError) as exc:
                    yield ArchiveMember(display, None, exc)
                    continue
                yield ArchiveMember(display, content)

    # ---------------------------------------------------------------------------------- tar

    def _tar(self, data: bytes, budget: ExpansionBudget, name: str) -> Iterator[ArchiveMember]:
        try:
            archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
        except (tarfile.TarError, OSError, ValueError, EOFError) as exc:
            raise ArchiveExtractionError(f"{name}: not a readable tar ({exc})") from exc
        with archive:
            index = 0
            while True:
                try:
                    member = archive.next()
                except (tarfile.TarError, OSError, ValueError, EOFError) as exc:
                    raise ArchiveExtractionError(f"{name}: damaged tar header ({exc})") from exc
                if member is None:
                    break
                index += 1
                if member.isdir():
                    continue
                display = safe_name(member.name, f"member-{index}")
                budget.charge_file(name)
                if not member.isreg():
                    # Symlinks, hard links, devices, FIFOs: reported, never followed or created.
                    target = member.linkname if member.issym() or member.islnk() else None
                    yield ArchiveMember(display, None, _unfollowed(name, display, target))
                    continue
                budget.charge_bytes(member.size, name)
                handle = archive.extractfile(member)
                if handle is None:  # pragma: no cover - isreg() members always have data
                    continue
                try:
                    content = handle.read(member.size)
                except (tarfile.TarError, OSError, EOFError) as exc:
                    yield ArchiveMember(display, None, ArchiveExtractionError(
                        f"{name}: member {display!r} is truncated ({exc})"
                    ))
                    continue
                yield ArchiveMember(display, content)

    # --------------------------------------------------------------------------------- gzip

    def _gzip(self, data: bytes, budget: ExpansionBudget, name: str) -> Iterator[ArchiveMember]:
        content = gunzip(data, budget, name)
        inner = name[:-3] if name.lower().endswith(".gz") else name
        if name.lower().endswith(".tgz"):
            inner = name[:-4] + ".tar"
        budget.charge_file(name)
        yield ArchiveMember(safe_name(inner, "member-1"), content)

    # ----------------------------------------------------------------------------------- 7z

    def _seven_zip(
        self, data: bytes, budget: ExpansionBudget, name: str
    ) -> Iterator[ArchiveMember]:
        try:
            import py7zr
            from py7zr.exceptions import AbsolutePathError, ArchiveError, DecompressionBombError
        except ImportError as exc:  # pragma: no cover - py7zr is a core dependency
            raise MissingDependencyError("py7zr is required for 7z", extra="binary") from exc
        failures = (
            ArchiveError,
            AbsolutePathError,
            py7zr.Bad7zFile,
            py7zr.PasswordRequired,
            py7zr.UnsupportedCompressionMethodError,
            DecompressionBombError,
            EOFError,
            OSError,
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            AttributeError,
            NotImplementedError,
            zlib.error,
            lzma.LZMAError,
            LookupError,
        )
        passwords: tuple[str | None, ...] = (None, *self.passwords)
        last: BaseException | None = None
        for password in passwords:
            collector = _Collector(budget, name)
            try:
                with py7zr.SevenZipFile(
                    io.BytesIO(data), mode="r", password=password,
                    max_extract_size=budget.bytes_left,
                ) as archive:
                    if archive.needs_password() and password is None:
                        last = py7zr.PasswordRequired("a password is required")
                        if self.passwords:
                            continue
                        break
                    entries = archive.list()
                    declared = sum(e.uncompressed or 0 for e in entries if not e.is_directory)
                    if declared > budget.bytes_left:
                        raise BinaryTooLargeError(
                            f"{name}: declares {declared} bytes, over the budget left "
                            f"({budget.bytes_left}, max_uncompressed_bytes)",
                            limit="max_uncompressed_bytes",
                            value=budget.used_bytes + declared,
                            maximum=budget.max_bytes,
                        )
                    links = [e.filename for e in entries if e.is_symlink]
                    regular = [e.filename for e in entries
                               if not e.is_directory and not e.is_symlink]
                    # Links are never materialised, not even in memory: only regular files
                    # are extracted.
                    archive.extract(path=None, targets=regular, factory=collector)
            except (BinaryTooLargeError, BinaryFanoutError):
                raise
            except failures as exc:
                if isinstance(exc, DecompressionBombError):
                    raise BinaryTooLargeError(
                        f"{name}: {exc} (max_uncompressed_bytes)",
                        limit="max_uncompressed_bytes",
                        maximum=budget.max_bytes,
                    ) from exc
                last = exc
                continue
            except RuntimeError as exc:  # py7zr wraps worker-thread failures this way
                last = exc
                continue
            budget.charge_bytes(0, name)
            for index, (member_name, content) in enumerate(collector.members):
                budget.charge_file(name)
                yield ArchiveMember(safe_name(member_name, f"member-{index + 1}"), content)
            for link in links:
                budget.charge_file(name)
                display = safe_name(link, "link")
                yield ArchiveMember(display, None, _unfollowed(name, display, None))
            return
        message = str(last) if last else "unreadable"
        if last is not None and "password" in f"{type(last).__name__} {message}".lower():
            raise EncryptedArchiveError(
                f"{name}: encrypted 7z archive and no configured password opens it",
                file_format="7z",
            ) from last
        raise ArchiveExtractionError(f"{name}: not a readable 7z ({message})") from last


class _Collector:
    """py7zr writer factory that keeps members in memory and charges the budget as it grows."""

    def __init__(self, budget: ExpansionBudget, name: str) -> None:
        self.budget = budget
        self.name = name
        self.members: list[tuple[str, bytes]] = []

    def create(self, filename: str) -> _MemberSink:
        sink = _MemberSink(self, filename)
        return sink


class _MemberSink:
    def __init__(self, owner: _Collector, filename: str) -> None:
        self.owner = owner
        self.filename = filename
        self.buffer = io.BytesIO()
        self.closed_once = False

    def write(self, chunk: bytes | bytearray) -> int:
        self.owner.budget.charge_bytes(len(chunk), self.owner.name)
        return self.buffer.write(chunk)

    def read(self, size: int | None = None) -> bytes:
        return self.buffer.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.buffer.seek(offset, whence)

    def flush(self) -> None:
        return None

    def size(self) -> int:
        return self.buffer.getbuffer().nbytes

    def close(self) -> None:
        if not self.closed_once:
            self.closed_once = True
            self.owner.members.append((self.filename, self.buffer.getvalue()))


def _register_py7zr_abcs() -> None:
    try:
        import py7zr
    except ImportError:  # pragma: no cover
        return
    py7zr.WriterFactory.register(_Collector)
    py7zr.Py7zIO.register(_MemberSink)


_register_py7zr_abcs()


# ---------------------------------------------------------------------------------- helpers


def gunzip(data: bytes, budget: ExpansionBudget, name: str) -> bytes:
    """Decompress a gzip stream (all members) chunk by chunk, charging `budget`.

    Raises:
        BinaryTooLargeError: the output passes the budget.
        ArchiveExtractionError: the stream is not valid gzip.
    """
    out = io.BytesIO()
    pending = data
    try:
        while pending:
            inflater = zlib.decompressobj(wbits=31)
            while True:
                produced = inflater.decompress(pending, _CHUNK)
                budget.charge_bytes(len(produced), name)
                out.write(produced)
                pending = inflater.unconsumed_tail
                if inflater.eof or (not produced and not pending):
                    break
            if not inflater.eof:
                raise ArchiveExtractionError(f"{name}: truncated gzip stream")
            pending = inflater.unused_data
            if not pending.startswith(b"\x1f\x8b"):
                break  # trailing padding after the last member
    except zlib.error as exc:
        raise ArchiveExtractionError(f"{name}: damaged gzip stream ({exc})") from exc
    return out.getvalue()
