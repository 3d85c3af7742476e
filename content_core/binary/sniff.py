"""Media-type detection from the bytes themselves (magic numbers, container contents, text shape).

The declared type and the file name are never trusted for the format family. The file name is
consulted only where bytes cannot decide: markdown versus plain text, CSV versus TSV versus plain
text, and which OOXML type an encrypted (OLE2-wrapped) Office package holds.
"""

from __future__ import annotations

import csv
import io
import json
import re
import struct
import zipfile
import zlib

from content_core.binary import media_types as mt

__all__ = ["decode_text_sample", "sniff_media_type"]

# How much of a file the text heuristics look at; sniffing stays O(1) in the file size.
_TEXT_SAMPLE_BYTES = 64 * 1024
# Upper bound for a full json.loads while telling JSON from NDJSON.
_JSON_FULL_PARSE_BYTES = 4 * 1024 * 1024

_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_SEVEN_ZIP_MAGIC = b"7z\xbc\xaf\x27\x1c"

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
_OOXML_BY_SUFFIX = {
    ".docx": mt.DOCX,
    ".docm": mt.DOCX,
    ".xlsx": mt.XLSX,
    ".xlsm": mt.XLSX,
    ".pptx": mt.PPTX,
    ".pptm": mt.PPTX,
}

_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]{0,76}:[ \t]?")
_EMAIL_KEY_HEADERS = frozenset(
    {
        b"from",
        b"to",
        b"subject",
        b"date",
        b"received",
        b"mime-version",
        b"message-id",
        b"return-path",
        b"delivered-to",
        b"cc",
        b"reply-to",
    }
)
_HTML_START = re.compile(
    r"^(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|div|p|table|span|a|"
    r"h[1-6]|ul|ol|br|link|script|style|section|article|header|nav|form|img)[\s>/]",
    re.IGNORECASE | re.DOTALL,
)
_XML_ROOT = re.compile(r"<([A-Za-z_][\w.:-]*)")
_MD_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
# Text whose name says "plain text or source code": never a table or markdown, whatever
# its commas or "# comment" lines look like.
_PLAIN_SUFFIXES = frozenset(
    {".txt", ".text", ".log", ".py", ".sh", ".bash", ".ini", ".cfg", ".conf", ".toml", ".yaml",
     ".yml", ".js", ".ts", ".java", ".c", ".h", ".cpp", ".go", ".rs", ".rb", ".sql", ".r"}
)


def sniff_media_type(
    data: bytes,
    default: str = mt.OCTET_STREAM,
    filename: str | None = None,
) -> str:
    """Return the media type of `data`, judged from its content.

    Args:
        data: the bytes (only a bounded prefix and, for containers, the directory are read).
        default: returned when the bytes match no known binary format and do not look like text.
        filename: a hint used only to tell markdown/CSV/TSV/plain text apart and to name the
            OOXML type inside an encrypted Office package.

    Returns:
        A plain MIME type without parameters, one of the constants in `media_types`.
    """
    if not data:
        return mt.PLAIN
    found = _sniff_binary(data, filename)
    if found is not None:
        return found
    text = decode_text_sample(data[:_TEXT_SAMPLE_BYTES])
    if text is None:
        return default
    return _sniff_text(text, data, filename)


# --------------------------------------------------------------------------------------------
# Binary formats


def _sniff_binary(data: bytes, filename: str | None) -> str | None:
    head = data[:64]
    if head.startswith(b"%PDF-"):
        return mt.PDF
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return mt.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return mt.JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return mt.GIF
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return mt.WEBP
    if head.startswith((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")):
        return mt.TIFF
    if _is_bmp(head, len(data)):
        return mt.BMP
    if head[4:8] == b"ftyp":
        return _sniff_isobmff(data)
    if head.startswith(_SEVEN_ZIP_MAGIC):
        return mt.SEVEN_ZIP
    if head.startswith(b"\x1f\x8b"):
        return mt.GZIP
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return _sniff_zip(data)
    if head.startswith(_OLE2_MAGIC):
        return _sniff_ole2(data, filename)
    if head.startswith(b"{\\rtf"):
        return mt.RTF
    if _is_tar(data):
        return mt.TAR
    # The PDF header may follow up to 1 KiB of junk (mail or HTTP leftovers), but markup
    # that merely mentions "%PDF-" is not a PDF.
    position = data.find(b"%PDF-", 0, 1024)
    if position > 0 and b"<" not in data[:position]:
        return mt.PDF
    return None


def _is_bmp(head: bytes, size: int) -> bool:
    if len(head) < 26 or not head.startswith(b"BM"):
        return False
    declared_size, _, offset, dib_size = struct.unpack_from("<IIII", head, 2)
    # "BM" starts ordinary text too, so require a coherent header: a known DIB header size
    # and a pixel offset inside the file.
    return dib_size in (12, 40, 52, 56, 64, 108, 124) and 14 + dib_size <= offset <= max(
        size, declared_size
    )


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
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError, KeyError):
        # A damaged central directory: fall back on the local headers' names in the raw bytes.
        names = {m.decode("latin-1") for m in re.findall(rb"(?:word|xl|ppt)/[\w.]+\.xml", data)}
    if "[Content_Types].xml" in names or any("/" in n for n in names):
        for part, media_type in _OOXML_PARTS:
            if part in names:
                return media_type
    return mt.ZIP


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
        return _OOXML_BY_SUFFIX.get(_suffix(filename), mt.OLE2)
    if has("WordDocument"):
        return mt.DOC
    if has("PowerPoint Document"):
        return mt.PPT
    if has("Workbook") or (root is not None and "Book" in root) or (
        root is None and has("Book\x00")
    ):
        return mt.XLS
    return mt.OLE2


def _suffix(filename: str | None) -> str:
    if not filename:
        return ""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return "." + name.rsplit(".", 1)[-1] if "." in name else ""


# --------------------------------------------------------------------------------------------
# Text formats


def decode_text_sample(sample: bytes) -> str | None:
    """Decode a prefix of a file as text, or return None when it does not look like text.

    Handles UTF-8/16/32 with a BOM, UTF-16/32 without one (told by the position of NUL bytes)
    and falls back on cp1252/latin-1 for legacy 8-bit text.
    """
    encoding = _guess_encoding(sample)
    if encoding is None:
        return None
    text = sample.decode(encoding, errors="replace")
    if encoding.startswith("utf-8") and text.endswith("\ufffd"):
        text = text.rstrip("\ufffd")  # a multi-byte character cut by the sample boundary
    if not text:
        return ""
    controls = sum(1 for ch in text if (ord(ch) < 32 and ch not in "\t\n\r\f\x1b") or ch == "\x7f")
    return text if controls <= max(1, len(text) // 100) else None


def _guess_encoding(sample: bytes) -> str | None:
    boms = (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    )
    for bom, encoding in boms:
        if sample.startswith(bom):
            return encoding
    probe = sample[:4096]
    if len(probe) >= 4:
        quads = len(probe) // 4
        if sum(probe[i * 4 + 1 : i * 4 + 4] == b"\x00\x00\x00" for i in range(quads)) > quads * 0.9:
            return "utf-32-le"
        if sum(probe[i * 4 : i * 4 + 3] == b"\x00\x00\x00" for i in range(quads)) > quads * 0.9:
            return "utf-32-be"
        pairs = len(probe) // 2
        odd_nuls = probe[1::2].count(0)
        even_nuls = probe[0::2].count(0)
        if odd_nuls > pairs * 0.4 and even_nuls < pairs * 0.05:
            return "utf-16-le"
        if even_nuls > pairs * 0.4 and odd_nuls < pairs * 0.05:
            return "utf-16-be"
    if b"\x00" in probe:
        return None
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data":
            return "utf-8"
    return "cp1252" if _cp1252_ok(probe) else "latin-1"


def _cp1252_ok(sample: bytes) -> bool:
    try:
        sample.decode("cp1252")
    except UnicodeDecodeError:
        return False
    return True


def _sniff_text(text: str, data: bytes, filename: str | None) -> str:
    stripped = text.lstrip("\ufeff \t\r\n")
    suffix = _suffix(filename)
    if stripped.startswith("<"):
        return _sniff_markup(stripped)
    if _looks_like_email(text):
        return mt.EML
    if stripped.startswith(("{", "[")):
        found = _sniff_json(stripped, data)
        if found is not None:
            return found
    if suffix in (".md", ".markdown", ".mdown", ".mkd"):
        return mt.MARKDOWN
    if suffix in _PLAIN_SUFFIXES:
        return mt.PLAIN
    table = _sniff_delimited(text)
    if table is not None:
        if suffix == ".tsv" or suffix == ".tab":
            return mt.TSV if table == mt.TSV or "\t" in text else table
        return table
    if suffix in (".csv",):
        return mt.CSV
    if suffix in (".tsv", ".tab"):
        return mt.TSV
    if _MD_HEADING.match(stripped) or len(_MD_HEADING.findall(text)) >= 2:
        return mt.MARKDOWN
    return mt.PLAIN


def _sniff_markup(text: str) -> str:
    lowered = text[:4096].lower()
    if lowered.startswith("<?xml") or (
        lowered.startswith("<!doctype") and "html" not in lowered[:15]
    ):
        root = _xml_root(text)
        if root == "svg":
            return mt.SVG
        if root == "html":
            # An XML declaration, or the XHTML namespace, makes an HTML root XHTML.
            xhtml = lowered.startswith("<?xml") or "http://www.w3.org/1999/xhtml" in lowered
            return mt.XHTML if xhtml else mt.HTML
        if root == "rss":
            return mt.RSS
        return mt.XML
    if _HTML_START.match(text):
        return mt.HTML
    root = _xml_root(text)
    if root == "svg":
        return mt.SVG
    if root == "rss":
        return mt.RSS
    if root is not None:
        return mt.XML
    return mt.PLAIN


def _xml_root(text: str) -> str | None:
    """Return the local name of the first element, skipping the prolog, comments and DOCTYPE."""
    position = 0
    limit = min(len(text), 64 * 1024)
    while position < limit:
        start = text.find("<", position)
        if start < 0 or start >= limit:
            return None
        if text.startswith("<?", start):
            position = text.find("?>", start) + 2 or limit
        elif text.startswith("<!--", start):
            position = text.find("-->", start) + 3 or limit
        elif text.startswith("<!", start):
            position = _skip_doctype(text, start)
        else:
            match = _XML_ROOT.match(text, start)
            if match is None:
                return None
            return match.group(1).rsplit(":", 1)[-1].lower()
        if position <= start:
            return None
    return None


def _skip_doctype(text: str, start: int) -> int:
    bracket = text.find("[", start)
    close = text.find(">", start)
    if bracket != -1 and (close == -1 or bracket < close):
        end = text.find("]", bracket)
        close = text.find(">", end) if end != -1 else -1
    return close + 1 if close != -1 else len(text)


def _looks_like_email(text: str) -> bool:
    lines = text.replace("\r\n", "\n").split("\n", 40)[:40]
    if lines and lines[0].startswith("From ") and len(lines) > 1:
        lines = lines[1:]  # mbox separator line
    names: list[bytes] = []
    for line in lines:
        if not line.strip():
            break
        if line[:1] in (" ", "\t"):
            continue  # folded continuation
        match = _HEADER_LINE.match(line.encode("utf-8", errors="replace"))
        if match is None:
            return False
        names.append(match.group(0).split(b":", 1)[0].lower())
    key = sum(1 for name in names if name in _EMAIL_KEY_HEADERS)
    return len(names) >= 2 and key >= 2


def _sniff_json(text: str, data: bytes) -> str | None:
    if len(data) <= _JSON_FULL_PARSE_BYTES:
        full = decode_text_sample(data)
        if full is not None:
            try:
                json.loads(full)
                return mt.JSON
            except (ValueError, RecursionError):
                pass
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    complete = lines[:-1] if len(text) < len(data) else lines
    if len(complete) >= 2 and all(_is_json_value(line) for line in complete):
        return mt.NDJSON
    if len(data) > _JSON_FULL_PARSE_BYTES and text.startswith(("{", "[")):
        return mt.JSON
    return None


def _is_json_value(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _sniff_delimited(text: str) -> str | None:
    lines = [line for line in text.splitlines()[:50] if line.strip()]
    if len(text) >= _TEXT_SAMPLE_BYTES - 4 and len(lines) > 2:
        lines = lines[:-1]  # the last line may be cut by the sample boundary
    if len(lines) < 2:
        return None
    for delimiter, media_type in (("\t", mt.TSV), (",", mt.CSV), (";", mt.CSV), ("|", mt.CSV)):
        if delimiter not in lines[0]:
            continue
        try:
            counts = [len(row) for row in csv.reader(lines, delimiter=delimiter)]
        except csv.Error:
            continue
        if not counts or counts[0] < 2:
            continue
        same = sum(1 for count in counts if count == counts[0])
        if same >= max(2, int(len(counts) * 0.9)):
            return media_type
    return None
