"""Byte-to-text decoding with encoding detection, shared by every text-based handler.

Order: byte-order marks; UTF-16/32 without a BOM recognised by where the NUL bytes fall
(these decode "successfully" as UTF-8 full of NULs otherwise); strict UTF-8; a declared charset
that decodes cleanly; charset-normalizer on a sample; cp1252 with replacement as the last word.

Markup (`decode_html`) follows the WHATWG order instead: BOM, then the charset its own
`<meta>` (or XML declaration) names in the first 1024 bytes, then detection (also when the
named charset leaves the bytes undecodable). EBCDIC markup, whose `<meta` an ASCII prescan
cannot see, is recognised by its first bytes.
Charset labels are read as browsers read them (WHATWG Encoding): Shift_JIS is cp932, GB2312 is
GB18030, EUC-KR is cp949, Latin-1 and ASCII are cp1252, and so on.
"""

from __future__ import annotations

import codecs
import logging
import re

from content_core.binary.sniff_text import ebcdic_markup_codec, register_ebcdic_codecs

logger = logging.getLogger(__name__)

__all__ = ["decode_bytes", "decode_html", "detect_encoding", "markup_charset"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 LE must be tested before UTF-16 LE: its BOM starts with the same two bytes.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SAMPLE_BYTES = 64 * 1024
# Latin single-byte code pages that charset-normalizer cannot tell apart on short samples;
# when cp1252 fits as well as its first pick, cp1252 (by far the most common) wins.
_WESTERN_DEFAULT = "cp1252"
# WHATWG Encoding: labels whose browser decoder is a superset of Python's codec of that name
# (cp932 has the NEC/IBM kanji such as 髙 that strict shift_jis refuses).
_WHATWG_SUPERSETS = {
    "iso8859-1": _WESTERN_DEFAULT,
    "ascii": _WESTERN_DEFAULT,
    "shift_jis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "iso8859-11": "cp874",
}
# Labels Python's codec registry does not know under these names.
_EXTRA_LABELS = {"windows-31j": "cp932", "x-sjis": "cp932", "x-gbk": "gb18030",
                 "x-user-defined": _WESTERN_DEFAULT, "ibm1047": "cp1047", "ibm-1047": "cp1047"}
# The WHATWG prescan window.
_PRESCAN_BYTES = 1024
# Codecs (as `_known` names them) whose characters span several bytes; the others map each
# byte to one character.
_MULTIBYTE = frozenset({"utf-8", "cp932", "shift_jis", "euc_jp", "iso2022_jp", "gb18030", "gbk",
                        "big5hkscs", "big5", "cp949", "euc_kr", "johab", "cp950"})
_REPLACEMENT = "\ufffd"
_UTF8_REPLACEMENT = _REPLACEMENT.encode("utf-8")
_HIGH_BYTES = bytes(range(0x80, 0x100))
_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.DOTALL)
_XML_DECL = re.compile(rb"""\s*<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z0-9_.:-]{1,40})""")
_META = re.compile(rb"<meta[\s/][^>]{0,512}>", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)


def _bom_encoding(data: bytes) -> tuple[str, int] | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            if bom == codecs.BOM_UTF32_LE and len(data) % 4:
                continue  # an FF FE 00 00 start in UTF-16 LE text: "U+FEFF" then U+0000
            return encoding, len(bom)
    return None


def _nul_pattern_encoding(sample: bytes) -> str | None:
    """Guess UTF-16/32 without a BOM from the positions of NUL bytes in `sample`."""
    size = len(sample) - len(sample) % 4
    if size < 4 or sample.count(0, 0, size) < size // 8:
        return None
    lanes = [sample[lane:size:4].count(0) for lane in range(4)]
    quarter = size // 4
    # Mostly-ASCII UTF-32: three of every four bytes are NUL.
    if lanes[1] + lanes[2] + lanes[3] > 2.7 * quarter and lanes[0] < 0.3 * quarter:
        return "utf-32-le"
    if lanes[0] + lanes[1] + lanes[2] > 2.7 * quarter and lanes[3] < 0.3 * quarter:
        return "utf-32-be"
    even = lanes[0] + lanes[2]
    odd = lanes[1] + lanes[3]
    half = size // 2
    if odd > 0.6 * half and even < 0.1 * half:
        return "utf-16-le"
    if even > 0.6 * half and odd < 0.1 * half:
        return "utf-16-be"
    return None


def _known(encoding: str | None) -> str | None:
    if not encoding:
        return None
    label = encoding.strip().lower()
    label = _EXTRA_LABELS.get(label, label)
    if label == "cp1047":
        register_ebcdic_codecs()
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # As browsers do (WHATWG Encoding): text labelled Latin-1 or ASCII is read as cp1252,
    # whose printable 0x80-0x9F (euro sign, curly quotes) Latin-1 turns into C1 controls.
    return _WHATWG_SUPERSETS.get(name, name)


def detect_encoding(data: bytes, *, declared: str | None = None) -> str:
    """Return the codec name that best decodes `data` (see the module docstring for the order)."""
    bom = _bom_encoding(data)
    if bom is not None:
        return bom[0]
    sample = data[:_SAMPLE_BYTES]
    by_nuls = _nul_pattern_encoding(sample)
    if by_nuls is not None:
        return by_nuls
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    hint = _known(declared)
    if hint is not None and hint != "utf-8":
        try:
            data.decode(hint)
        except UnicodeDecodeError:
            pass
        else:
            return hint
    return _guess(sample)


def _guess(sample: bytes) -> str:
    from charset_normalizer import from_bytes

    results = list(from_bytes(sample))
    if not results:
        return _WESTERN_DEFAULT
    best = results[0]
    for match in results:
        if match.chaos <= best.chaos and _WESTERN_DEFAULT in match.could_be_from_charset:
            return _WESTERN_DEFAULT
    return _known(best.encoding) or _WESTERN_DEFAULT


def _decode_with_bom(data: bytes) -> str | None:
    """Empty text for no bytes, the text after a byte-order mark, or None without a BOM."""
    if not data:
        return ""
    bom = _bom_encoding(data)
    if bom is None:
        return None
    encoding, skip = bom
    return data[skip:].decode(encoding, errors="replace")


def decode_bytes(data: bytes, *, declared: str | None = None) -> str:
    """Decode `data` to text with the detected encoding, replacing undecodable bytes."""
    with_bom = _decode_with_bom(data)
    if with_bom is not None:
        return with_bom
    encoding = detect_encoding(data, declared=declared)
    logger.debug("decoding %d bytes as %s", len(data), encoding)
    return data.decode(encoding, errors="replace")


def markup_charset(data: bytes) -> str | None:
    """Return the codec named by the document's own declaration, as the WHATWG prescan finds it.

    Looks at the first 1024 bytes only: an XML declaration's `encoding`, else the first
    `<meta charset>` or `<meta http-equiv="Content-Type" content="...; charset=...">` outside
    comments. Labels are mapped as browsers map them; a declared UTF-16 means UTF-8 (the bytes
    were readable as ASCII, so they are not UTF-16). None when nothing usable is declared.
    """
    head = data[:_PRESCAN_BYTES]
    declaration = _XML_DECL.match(head)
    labels = [declaration.group(1)] if declaration else []
    for meta in _META.finditer(_COMMENT.sub(b"", head)):
        found = _META_CHARSET.search(meta.group(0))
        if found:
            labels.append(found.group(1))
            break
    for label in labels:
        name = _known(label.decode("ascii"))
        if name is not None:
            return "utf-8" if name.startswith(("utf-16", "utf-32")) else name
    return None


def decode_html(data: bytes, *, transport: str | None = None) -> str:
    """Decode an HTML or XHTML document the way a browser picks its encoding.

    BOM first; then EBCDIC markup (its label, if any, read from the EBCDIC-decoded head);
    then the charset the document declares (`markup_charset`), unless the bytes do not decode
    in it (then the label is wrong and is ignored); then `transport` (a charset given beside
    the bytes) and detection as in `decode_bytes`. One deviation from WHATWG: a
    declared legacy charset loses to UTF-8 when the bytes are valid UTF-8 with non-ASCII
    characters, because a mislabelled UTF-8 page is common and a legacy-encoded page that is
    also valid UTF-8 is practically unknown.
    """
    with_bom = _decode_with_bom(data)
    if with_bom is not None:
        return with_bom
    ebcdic = ebcdic_markup_codec(data)
    if ebcdic is not None:
        declared = markup_charset(data[:_PRESCAN_BYTES].decode(ebcdic).encode("ascii", "replace"))
        if declared is not None and _is_ebcdic(declared):
            ebcdic = declared
        return data.decode(ebcdic, errors="replace")
    declared = markup_charset(data)
    if declared is not None and _is_ebcdic(declared):
        declared = None  # read from ASCII bytes: the label is wrong, the bytes are not EBCDIC
    if declared is not None and declared != "utf-8" and not data.isascii():
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if declared is not None:
        text = data.decode(declared, errors="replace")
        if not _mislabelled(data, text, declared):
            logger.debug("decoding %d bytes of markup as declared %s", len(data), declared)
            return text
        # The label is wrong for these bytes (a page saved in one code page and declared as
        # another): detection reads them instead of turning the text into U+FFFD.
        logger.debug("markup declared %s does not decode; detecting its charset", declared)
    return decode_bytes(data, declared=transport)


def _mislabelled(data: bytes, text: str, codec: str) -> bool:
    """True when `text`, decoded from `data` as `codec` with replacement, shows that the
    bytes are not in `codec`: any undecodable byte for a single-byte code page (a real page
    in one holds none), at least one undecodable byte in 20 high bytes for a multi-byte one
    (where a damaged but genuine page may hold a few)."""
    bad = text.count(_REPLACEMENT) - (data.count(_UTF8_REPLACEMENT) if codec == "utf-8" else 0)
    if bad <= 0:
        return False
    if codec not in _MULTIBYTE:
        return True
    high = len(data) - len(data.translate(None, _HIGH_BYTES))
    return bad * 20 >= high


def _is_ebcdic(codec: str) -> bool:
    return codec in ("cp037", "cp273", "cp500", "cp875", "cp1026", "cp1047", "cp1140")
