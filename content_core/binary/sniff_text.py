"""Text-shape sniffing: decode a bounded prefix, then tell markup, email, JSON, tables,
markdown and plain text apart. Used by `sniff_media_type` once no binary magic matched."""

from __future__ import annotations

import csv
import json
import re

from content_core.binary import media_types as mt

__all__ = [
    "TEXT_SAMPLE_BYTES",
    "decode_text_sample",
    "ebcdic_markup_codec",
    "file_suffix",
    "register_ebcdic_codecs",
    "sniff_text",
]

# How much of a file the text heuristics look at; sniffing stays O(1) in the file size.
TEXT_SAMPLE_BYTES = 64 * 1024
# Upper bound for a full json.loads while telling JSON from NDJSON.
_JSON_FULL_PARSE_BYTES = 4 * 1024 * 1024

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
_HTML_TAGS = (
    r"(?:!doctype\s+html|html|head|body|meta|title|div|p|table|span|a|h[1-6]|ul|ol|br|link|"
    r"script|style|section|article|header|nav|form|img)[\s>/]"
)
_HTML_START = re.compile(r"^(?:<!--.*?-->\s*)*<" + _HTML_TAGS, re.IGNORECASE | re.DOTALL)
# EBCDIC: "<" is 0x4C in every EBCDIC code page (an ASCII "L"); whitespace is 0x40 (space),
# 0x05 (tab), 0x0D (CR), 0x15 and 0x25 (NL and LF, swapped between cp037/cp500 and cp1047).
_EBCDIC_LT = 0x4C
_EBCDIC_SPACE = b"\x40\x05\x0d\x15\x25"
# The openings that make text markup (as `_HTML_START` has them), read in cp037 or cp500.
_EBCDIC_MARKUP = re.compile(r"<(?:\?xml[\s?]|!--|" + _HTML_TAGS + ")", re.IGNORECASE)
_XML_ROOT = re.compile(r"<([A-Za-z_][\w.:-]*)")
# Office 2003 XML files name the application that opens them in a processing instruction
# before the root; the root then says which flavour (Word 2007+ "flat OPC" is a pkg:package).
_MSO_APPLICATION = re.compile(
    r"<\?mso-application\s[^>]{0,200}?progid\s*=\s*[\"'](Word\.Document|Excel\.Sheet)[\"']",
    re.IGNORECASE,
)
_MSO_ROOTS = {
    ("word.document", "worddocument"): mt.WORDML_2003,
    ("word.document", "package"): mt.WORDML_2003,
    ("excel.sheet", "workbook"): mt.SPREADSHEETML_2003,
}
_MD_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
# Text whose name says "plain text or source code": never a table or markdown, whatever
# its commas or "# comment" lines look like.
_PLAIN_SUFFIXES = frozenset(
    {".txt", ".text", ".log", ".py", ".sh", ".bash", ".ini", ".cfg", ".conf", ".toml", ".yaml",
     ".yml", ".js", ".ts", ".java", ".c", ".h", ".cpp", ".go", ".rs", ".rb", ".sql", ".r"}
)


def file_suffix(filename: str | None) -> str:
    """Return the lower-cased extension of the last path part of `filename` (".csv"), or ""."""
    if not filename:
        return ""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return "." + name.rsplit(".", 1)[-1] if "." in name else ""


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


def ebcdic_markup_codec(data: bytes) -> str | None:
    """Return the EBCDIC codec of `data` when it starts as HTML or XML in EBCDIC, else None.

    `<html`, `<!DOCTYPE html`, `<?xml` and a few other openings are recognised in cp037 and
    cp500 (they differ in where "!" lies: 0x5A or 0x4F); line ends in 0x15 rather than 0x25
    mean cp1047 (z/OS). A label in the document can still name the exact code page.
    """
    window = data[:1024]
    head = window.lstrip(_EBCDIC_SPACE)
    if not head or head[0] != _EBCDIC_LT:
        return None
    for codec in ("cp037", "cp500"):
        if _EBCDIC_MARKUP.match(head[:64].decode(codec)) and _mostly_ascii(head.decode(codec)):
            if codec == "cp037" and window.count(b"\x15") > window.count(b"\x25"):
                register_ebcdic_codecs()
                return "cp1047"
            return codec
    return None


def _mostly_ascii(text: str) -> bool:
    """True when nine in ten characters of `text` are printable ASCII or line ends, as in
    EBCDIC markup read in its code page (and not in 8-bit text that merely starts with "L")."""
    ascii_chars = sum(1 for ch in text if " " <= ch <= "~" or ch in "\t\r\n\x85")
    return ascii_chars * 10 >= len(text) * 9


def register_ebcdic_codecs() -> None:
    """Make the `ebcdic` package's codecs (cp1047 and others) known to `codecs.lookup`."""
    import ebcdic  # noqa: F401 - registers its codecs on import (a core dependency)


def _guess_encoding(sample: bytes) -> str | None:
    ebcdic = ebcdic_markup_codec(sample)
    if ebcdic is not None:
        return ebcdic
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


def sniff_text(text: str, data: bytes, filename: str | None) -> str:
    """Return the media type of text `text` (a decoded prefix of `data`)."""
    stripped = text.lstrip("\ufeff \t\r\n\x85")  # U+0085: an EBCDIC line end
    suffix = file_suffix(filename)
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
    office = _MSO_APPLICATION.search(text, 0, 4096)
    if office is not None:
        found = _MSO_ROOTS.get((office.group(1).lower(), _xml_root(text) or ""))
        if found is not None:
            return found
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
    if len(text) >= TEXT_SAMPLE_BYTES - 4 and len(lines) > 2:
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
        if same >= max(2, int(len(counts) * 0.9)) and not _is_prose(lines, delimiter):
            return media_type
    return None


def _is_prose(lines: list[str], delimiter: str) -> bool:
    """Paragraphs that happen to hold one comma or semicolon each, not a table: in nine of ten
    rows every field is a phrase of four words or more (a table has short cells: ids, dates,
    numbers, names)."""
    rows = list(csv.reader(lines, delimiter=delimiter))
    wordy = sum(1 for row in rows if all(len(field.split()) >= 4 for field in row))
    return wordy >= max(2, int(len(rows) * 0.9))
