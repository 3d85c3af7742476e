"""Media-type detection from the bytes themselves (magic numbers, container contents, text shape).

The declared type and the file name are never trusted for the format family. The file name is
consulted only where bytes cannot decide: markdown versus plain text, CSV versus TSV versus plain
text, and which OOXML type an encrypted (OLE2-wrapped) Office package holds.

Order: the magic numbers each format declares (`content_core.formats`, plug-ins included),
then the family sniffers here (ISO-BMFF brands, zip and OLE2 members, tar, a PDF after junk),
then the text shapes (`sniff_text`).
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from content_core.binary import media_types as mt
from content_core.binary.sniff_text import (
    TEXT_SAMPLE_BYTES,
    decode_text_sample,
    file_suffix,
    sniff_text,
)
from content_core.formats import Format, Package

if TYPE_CHECKING:
    from content_core.formats import FormatRegistry

__all__ = ["FORMATS", "OLE2_MAGIC", "decode_text_sample", "sniff_file", "sniff_media_type"]

# The compound-file header: legacy Office files, .msg, and encrypted OOXML packages.
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEIC_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs"})
_HEIF_BRANDS = frozenset({b"mif1", b"msf1", b"mif2"})
_AVIF_BRANDS = frozenset({b"avif", b"avis"})

_ODF_MIMETYPES = {
    b"application/vnd.oasis.opendocument.text": mt.ODT,
    b"application/vnd.oasis.opendocument.spreadsheet": mt.ODS,
    b"application/vnd.oasis.opendocument.presentation": mt.ODP,
    b"application/epub+zip": mt.EPUB,
}
_OOXML_PARTS = (
    ("word/document.xml", mt.DOCX),
    ("xl/workbook.xml", mt.XLSX),
    ("ppt/presentation.xml", mt.PPTX),
)
# Main-part content types in [Content_Types].xml, matched lower-cased: the macro-enabled
# variants get their own media type, the others (templates, slideshows) their family's.
_OOXML_CONTENT_TYPES = (
    ("application/vnd.ms-word.document.macroenabled.main+xml", mt.DOCM),
    ("application/vnd.ms-excel.sheet.macroenabled.main+xml", mt.XLSM),
    ("application/vnd.ms-powerpoint.presentation.macroenabled.main+xml", mt.PPTM),
    ("wordprocessingml.document.main+xml", mt.DOCX),
    ("wordprocessingml.template.main+xml", mt.DOCX),
    ("application/vnd.ms-word.template.macroenabledtemplate.main+xml", mt.DOCX),
    ("spreadsheetml.sheet.main+xml", mt.XLSX),
    ("spreadsheetml.template.main+xml", mt.XLSX),
    ("application/vnd.ms-excel.template.macroenabled.main+xml", mt.XLSX),
    ("presentationml.presentation.main+xml", mt.PPTX),
    ("presentationml.slideshow.main+xml", mt.PPTX),
    ("presentationml.template.main+xml", mt.PPTX),
    ("application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml", mt.PPTX),
    ("application/vnd.ms-powerpoint.template.macroenabled.main+xml", mt.PPTX),
)
# Top folder of each package family's parts, for packages whose directory is lost.
_OOXML_FOLDERS = (("word/", mt.DOCX), ("xl/", mt.XLSX), ("ppt/", mt.PPTX))
_OOXML_BY_SUFFIX = {
    ".docx": mt.DOCX,
    ".docm": mt.DOCM,
    ".xlsx": mt.XLSX,
    ".xlsm": mt.XLSM,
    ".pptx": mt.PPTX,
    ".pptm": mt.PPTM,
}
_CONTENT_TYPES_PART = "[Content_Types].xml"
# Bounds for reading a package whose central directory is lost: how many local headers are
# looked at, and how much of [Content_Types].xml is inflated.
_MAX_LOCAL_HEADERS = 4096
_CONTENT_TYPES_BYTES = 256 * 1024

# Sniff results that are no format of their own: a compound file whose streams match none of
# DOC/XLS/PPT/MSG (it may still be an encrypted OOXML package, refused as such), and 0 bytes.
FORMATS = (
    Format(name="ole2", media_types=(mt.OLE2,), kind="binary", yields_text=False,
           package=Package.OLE2),
    Format(name="empty", media_types=(mt.EMPTY,), kind="empty", yields_text=False),
)


def sniff_media_type(
    data: bytes,
    default: str = mt.OCTET_STREAM,
    filename: str | None = None,
    *,
    formats: FormatRegistry | None = None,
) -> str:
    """Return the media type of `data`, judged from its content.

    Args:
        data: the bytes (only a bounded prefix and, for containers, the directory are read).
        default: returned when the bytes match no known binary format and do not look like text.
        filename: a hint used only to tell markdown/CSV/TSV/plain text apart and to name the
            OOXML type inside an encrypted Office package.
        formats: the registry whose declared signatures are tried first (before the zip,
            OLE2 and tar family sniffers and the text heuristics); `default_formats()` if None.

    Returns:
        A plain MIME type without parameters, one of the constants in `media_types`.
    """
    if not data:
        return mt.EMPTY
    if formats is None:
        from content_core.formats import default_formats

        formats = default_formats()
    found = formats.sniff(data) or _sniff_binary(data, filename)
    if found is not None:
        return found
    text = decode_text_sample(data[:TEXT_SAMPLE_BYTES])
    if text is None:
        return default
    return sniff_text(text, data, filename)


# Zip and OLE2 containers keep their directory anywhere up to the end of the file, so a file is
# sniffed whole, up to this size (a bigger one by its head: the normaliser refuses it anyway).
_SNIFF_FILE_MAX_BYTES = 256 << 20


def sniff_file(path: Path, filename: str | None = None) -> str:
    """Return the media type of the file at `path`, sniffed from its bytes as
    `sniff_media_type` does: a prefix would take a large DOCX for a plain zip."""
    with path.open("rb") as handle:
        return sniff_media_type(handle.read(_SNIFF_FILE_MAX_BYTES), filename=filename)


# --------------------------------------------------------------------------------------------
# Binary formats


def _sniff_binary(data: bytes, filename: str | None) -> str | None:
    """The family sniffers: formats told by their structure rather than a fixed magic."""
    head = data[:64]
    if head[4:8] == b"ftyp":
        return _sniff_isobmff(data)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return _sniff_zip(data)
    if head.startswith(OLE2_MAGIC):
        return _sniff_ole2(data, filename)
    if _is_tar(data):
        return mt.TAR
    # The PDF header may follow up to 1 KiB of junk (mail or HTTP leftovers), but markup
    # that merely mentions "%PDF-" is not a PDF.
    position = data.find(b"%PDF-", 0, 1024)
    if position > 0 and b"<" not in data[:position]:
        return mt.PDF
    return None


def _sniff_isobmff(data: bytes) -> str | None:
    box_size = int.from_bytes(data[0:4], "big")
    major = data[8:12]
    end = min(box_size, 512, len(data)) if box_size >= 16 else min(len(data), 64)
    compatible = {data[i : i + 4] for i in range(16, end - 3, 4)}
    brands = {major} | compatible
    if major in _AVIF_BRANDS or (brands & _AVIF_BRANDS and not brands & _HEIC_BRANDS):
        return mt.AVIF
    if brands & _HEIC_BRANDS:
        return mt.HEIC
    if brands & _HEIF_BRANDS:
        return mt.HEIF
    return None


def _is_tar(data: bytes) -> bool:
    if len(data) < 512:
        return False
    header = data[:512]
    if header[257:262] == b"ustar":
        return True
    # Pre-POSIX (v7) tar has no magic: accept it when the header checksum is right.
    stored = header[148:156].split(b"\x00", 1)[0].strip()
    if not stored or not all(48 <= c <= 55 for c in stored):
        return False
    computed = sum(header[:148]) + 8 * 32 + sum(header[156:])
    return int(stored, 8) == computed and header[0] != 0


def _sniff_zip(data: bytes) -> str:
    # ODF and EPUB put an uncompressed "mimetype" member first, at a fixed offset.
    if data[30:38] == b"mimetype":
        name_len, extra_len = struct.unpack_from("<HH", data, 26)
        start = 30 + name_len + extra_len
        value = data[start : start + 80]
        for mimetype, media_type in _ODF_MIMETYPES.items():
            if value.startswith(mimetype):
                return media_type
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if "mimetype" in names:
                with archive.open("mimetype") as handle:
                    value = handle.read(80)
                for mimetype, media_type in _ODF_MIMETYPES.items():
                    if value.startswith(mimetype):
                        return media_type
            content_types = b""
            if _CONTENT_TYPES_PART in names:
                with archive.open(_CONTENT_TYPES_PART) as handle:
                    content_types = handle.read(_CONTENT_TYPES_BYTES)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError, KeyError):
        # A damaged or cut central directory: judge from the local headers that remain.
        return _sniff_local_headers(data)
    return _ooxml_type(names, content_types) or mt.ZIP


def _ooxml_type(names: set[str], content_types: bytes) -> str | None:
    """The OOXML type a package's [Content_Types].xml and part names declare, if any."""
    declared = content_types.decode("utf-8", errors="replace").lower()
    for content_type, media_type in _OOXML_CONTENT_TYPES:
        if content_type in declared:
            return media_type
    if _CONTENT_TYPES_PART in names or any("/" in n for n in names):
        for part, media_type in _OOXML_PARTS:
            if part in names:
                return media_type
    return None


def _sniff_local_headers(data: bytes) -> str:
    """Name the package type of a zip without a readable directory (a truncated download):
    the local file headers still carry each member's name, and OOXML packages start with
    `[Content_Types].xml` or `_rels/.rels`, then parts under `word/`, `xl/` or `ppt/`."""
    names: set[str] = set()
    content_types = b""
    position = data.find(b"PK\x03\x04")
    while position >= 0 and len(names) < _MAX_LOCAL_HEADERS:
        if position + 30 > len(data):
            break
        method, = struct.unpack_from("<H", data, position + 8)
        compressed_size, = struct.unpack_from("<I", data, position + 18)
        name_len, extra_len = struct.unpack_from("<HH", data, position + 26)
        raw_name = data[position + 30 : position + 30 + name_len]
        name = raw_name.decode("utf-8", errors="replace")
        if name and name.isprintable() and "\ufffd" not in name:
            names.add(name)
            if name == _CONTENT_TYPES_PART and not content_types:
                start = position + 30 + name_len + extra_len
                content_types = _inflate_prefix(data, start, compressed_size, method)
        position = data.find(b"PK\x03\x04", position + 4)
    found = _ooxml_type(names, content_types)
    if found is not None:
        return found
    if _CONTENT_TYPES_PART in names or "_rels/.rels" in names:
        for folder, media_type in _OOXML_FOLDERS:
            if any(name.startswith(folder) for name in names):
                return media_type
    return mt.ZIP


def _inflate_prefix(data: bytes, start: int, compressed_size: int, method: int) -> bytes:
    """Up to `_CONTENT_TYPES_BYTES` of one member's data (stored or deflated), or b""."""
    # A member written with a data descriptor declares size 0 here: read a bounded window.
    end = start + compressed_size if compressed_size else start + _CONTENT_TYPES_BYTES
    raw = data[start:end]
    if method == 0:
        return raw[:_CONTENT_TYPES_BYTES]
    if method != 8:
        return b""
    try:
        return zlib.decompressobj(-15).decompress(raw, _CONTENT_TYPES_BYTES)
    except zlib.error:
        return b""


def _ole2_root_names(data: bytes) -> set[str] | None:
    """Names of the root storage's entries, or None when the directory cannot be read."""
    try:
        import olefile
    except ImportError:  # pragma: no cover - olefile comes with extract-msg
        return None
    try:
        with olefile.OleFileIO(data) as ole:
            entries = ole.listdir(streams=True, storages=True)
    except (OSError, ValueError, IndexError, KeyError, TypeError, AttributeError,
            RecursionError, struct.error, UnicodeError):
        return None
    return {entry[0] for entry in entries if len(entry) == 1}


def _sniff_ole2(data: bytes, filename: str | None) -> str:
    root = _ole2_root_names(data)
    if root is not None:
        # Root-level entries only: an XLS embedding a Word object holds "WordDocument" in a
        # sub-storage, which must not make it a DOC.
        def has(name: str) -> bool:
            return any(entry.startswith(name) for entry in root)
    else:
        # Unreadable directory (damaged or hostile sector chains): look for the UTF-16LE
        # entry names anywhere in the bytes.
        def has(name: str) -> bool:
            return name.encode("utf-16-le") in data

    if has("__substg1.0_"):
        return mt.MSG
    if has("EncryptedPackage"):
        return _OOXML_BY_SUFFIX.get(file_suffix(filename), mt.OLE2)
    if has("WordDocument"):
        return mt.DOC
    if has("PowerPoint Document"):
        return mt.PPT
    if has("Workbook") or (root is not None and "Book" in root) or (
        root is None and has("Book\x00")
    ):
        return mt.XLS
    return mt.OLE2
