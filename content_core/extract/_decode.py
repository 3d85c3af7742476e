"""Byte-to-text decoding with encoding detection, shared by every text-based handler.

Order: byte-order marks; UTF-16/32 without a BOM recognised by where the NUL bytes fall
(these decode "successfully" as UTF-8 full of NULs otherwise); strict UTF-8; a declared charset
that decodes cleanly; charset-normalizer on a sample; cp1252 with replacement as the last word.
"""

from __future__ import annotations

import codecs
import logging

logger = logging.getLogger(__name__)

__all__ = ["decode_bytes", "detect_encoding"]

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
_LATIN1_ALIASES = frozenset({"iso8859-1", "ascii"})


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
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return None
    # As browsers do (WHATWG Encoding): text labelled Latin-1 or ASCII is read as cp1252,
    # whose printable 0x80-0x9F (euro sign, curly quotes) Latin-1 turns into C1 controls.
    return _WESTERN_DEFAULT if name in _LATIN1_ALIASES else name


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


def decode_bytes(data: bytes, *, declared: str | None = None) -> str:
    """Decode `data` to text with the detected encoding, replacing undecodable bytes."""
    if not data:
        return ""
    bom = _bom_encoding(data)
    if bom is not None:
        encoding, skip = bom
        return data[skip:].decode(encoding, errors="replace")
    encoding = detect_encoding(data, declared=declared)
    logger.debug("decoding %d bytes as %s", len(data), encoding)
    return data.decode(encoding, errors="replace")
