"""WordPerfect 4.2, 5.x and 6.x-X9 documents: the text of the document area, read in one
linear pass without LibreOffice.

No maintained Python library reads WordPerfect; the format is documented (WordPerfect SDK)
and libwpd reads it the same way: after the 16-byte header comes a document area of text
bytes and function codes. Single-byte codes are spaces, hyphens and line ends; fixed-length
codes have a size per code; variable-length groups carry their own size and repeat their
code as the last byte, which this reader checks before stepping over a group. Text held
inside groups (headers, footnotes) and prefix packets is not read.

WordPerfect 4.x (DOS) files have no header at all: the whole file is the document area, ASCII
text and control codes below 0x80, one-byte codes 0x80-0xBF, and groups 0xC0-0xFE that end with
their own code (a fixed size per code, or variable and closed by the next byte equal to it).
As libwpd does, such a file is recognised by that structure (here over its first 64 KiB, with
at least one group whose parameters are binary); an encrypted one starts with FE FF 61 61.
Extended characters (group E1) are IBM PC code page 437.
"""

from __future__ import annotations

import re
import struct

from content_core.binary import media_types as mt
from content_core.binary.sniff_text import ebcdic_markup_codec
from content_core.errors import EncryptedFileError, ExtractionError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Format, Handler, NormaliseStep

__all__ = [
    "FORMATS",
    "WordPerfectExtractor",
    "is_wordperfect42_document",
    "is_wordperfect_document",
    "read_wordperfect_text",
]

_MAGIC = b"\xffWPC"
_HEADER_BYTES = 16
_DOCUMENT_FILE_TYPE = 10
_REPLACEMENT = "\ufffd"

# WordPerfect character set 1 ("multinational") from code 23 on: the accented Latin letters.
_MULTINATIONAL_FROM = 23
_MULTINATIONAL = "ßĸȷÁáÂâÄäÀàÅåÆæÇçÉéÊêËëÈèÍíÎîÏïÌìÑñÓóÔôÖöÒòÚúÛûÜüÙùŸÿÃãĐđØøÕõÝýÐðÞþ"
# Character set 4 ("typographic"): the common punctuation and currency signs.
_TYPOGRAPHIC = {
    0: "●", 3: "•", 5: "¶", 6: "§", 7: "¡", 8: "¿", 9: "«", 10: "»", 11: "£", 12: "¥",
    17: "½", 18: "¼", 19: "¢", 22: "®", 23: "©", 28: "’", 29: "‘", 31: "”", 32: "“",
    33: "–", 34: "—", 41: "™", 56: "…", 72: "€",
}

# WP6: codes 0x01-0x20 are accented letters (0x20 is not a space: spaces are code 0x80).
_WP6_LOW = "åÅæÆäÄáàâãÃçÇëéÉèêíñÑøØõÕöÖüÜúùß"
_WP6_SINGLE = {
    0x80: " ", 0x81: " ", 0x84: "-", 0x87: "\n",
    **{code: "\n" for code in range(0xB4, 0xBA)},  # deletable hard page/column/line ends
    **{code: " " for code in range(0xBA, 0xBD)},  # deletable soft line ends
    **{code: "\n" for code in range(0xBD, 0xC6)},  # table off, table rows
    0xC6: " | ",  # table cell
    **{code: "\n" for code in range(0xC7, 0xCD)},  # hard page/column/line ends
    **{code: " " for code in range(0xCD, 0xD0)},  # soft line ends
}
_WP6_FIXED_SIZES = (4, 5, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6, 6, 8, 8)  # codes 0xF0-0xFE
_WP6_EOL_GROUP = 0xD0
_WP6_TAB_GROUP = 0xE0
# Subgroups of the WP6 end-of-line group: what each one ends.
_WP6_EOL_TEXT = {
    **{sub: " " for sub in (0x01, 0x02, 0x03, 0x14, 0x15, 0x16)},
    **{sub: "\n" for sub in (*range(0x04, 0x0A), *range(0x0B, 0x14), *range(0x17, 0x1D))},
    0x0A: " | ",
}

# WP5: ASCII text with control codes below 0x20 and function codes from 0x80.
_WP5_CONTROL = {0x09: "\t", 0x0A: "\n", 0x0B: " ", 0x0C: "\n\n", 0x0D: " "}
_WP5_SINGLE = {0x8C: "\n", 0x99: "\n", 0xA0: " ", 0xA9: "-", 0xAA: "-"}
_WP5_FIXED_SIZES = (4, 9, 11, 3, 3, 5, 6, 7, 4, 5, 6, 6, 8, 10, 10, 12)  # codes 0xC0-0xCF
_WP5_TAB_CODES = frozenset({0xC1, 0xC2})  # tab/centre/flush right, indent

# WP 4.x: group sizes of codes 0xC0-0xFE (libwpd's table; 0 is a variable-length group).
_WP42_GROUP_SIZES = (
    6, 4, 3, 5, 5, 6, 4, 6, 8, 42, 3, 6, 4, 3, 4, 3,  # 0xC0
    6, 0, 0, 4, 4, 4, 6, 0, 4, 4, 4, 4, 0, 24, 4, 0,  # 0xD0
    4, 3, 0, 150, 6, 23, 11, 3, 3, 0, 0, 0, 4, 0, 44, 18,  # 0xE0
    6, 106, 0, 100, 4, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0,  # 0xF0-0xFE
)
_WP42_SINGLE = {0xA9: "-", 0xAA: "-"}  # hyphens; the other one-byte codes are attributes
_WP42_EXTENDED_CHARACTER = 0xE1  # E1 <IBM PC (cp437) character> E1
_WP42_ENCRYPTED = b"\xfe\xff\x61\x61"
_WP42_SNIFF_BYTES = 64 * 1024
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
# Control bytes other than tab, line and page ends: a few stray ones are tolerated outside
# groups, more mean binary data.
_STRAY_CONTROLS = bytes(set(range(0x20)) - {0x09, 0x0A, 0x0B, 0x0C, 0x0D})
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))

_SPACE_RUN = re.compile(" {2,}")


def _fail(reason: str) -> ExtractionError:
    return ExtractionError(
        f"not a readable WordPerfect document: {reason}", media_type=mt.WORDPERFECT
    )


def _extended(charset: int, code: int) -> str:
    """One character of a WordPerfect character set (extended character function)."""
    if charset == 0 and 0x20 <= code < 0x7F:
        return chr(code)
    if charset == 1 and 0 <= code - _MULTINATIONAL_FROM < len(_MULTINATIONAL):
        return _MULTINATIONAL[code - _MULTINATIONAL_FROM]
    if charset == 4:
        return _TYPOGRAPHIC.get(code, _REPLACEMENT)
    return _REPLACEMENT


def _wp6_text(body: bytes) -> str:
    out: list[str] = []
    position, size = 0, len(body)
    while position < size:
        code = body[position]
        if code == 0:
            position += 1
        elif code <= 0x20:
            out.append(_WP6_LOW[code - 1])
            position += 1
        elif code <= 0x7F:
            out.append(chr(code))
            position += 1
        elif code <= 0xCF:
            out.append(_WP6_SINGLE.get(code, ""))
            position += 1
        elif code <= 0xEF:
            length = struct.unpack_from("<H", body, position + 2)[0] if position + 4 <= size else 0
            end = position + length
            if length < 4 or end > size or body[end - 1] != code:
                position += 1  # not a coherent group: step over the stray code byte
                continue
            if code == _WP6_EOL_GROUP:
                out.append(_WP6_EOL_TEXT.get(body[position + 1], ""))
            elif code == _WP6_TAB_GROUP:
                out.append("\t")
            position = end
        elif code == 0xFF:
            position += 1
        else:
            length = _WP6_FIXED_SIZES[code - 0xF0]
            end = position + length
            if end > size or body[end - 1] != code:
                position += 1
                continue
            if code == 0xF0:
                out.append(_extended(body[position + 2], body[position + 1]))
            position = end
    return "".join(out)


def _wp5_text(body: bytes) -> str:
    out: list[str] = []
    position, size = 0, len(body)
    while position < size:
        code = body[position]
        if code < 0x20:
            out.append(_WP5_CONTROL.get(code, ""))
            position += 1
        elif code < 0x7F:
            out.append(chr(code))
            position += 1
        elif code < 0xC0:
            out.append(_WP5_SINGLE.get(code, ""))
            position += 1
        elif code < 0xD0:
            end = position + _WP5_FIXED_SIZES[code - 0xC0]
            if end > size or body[end - 1] != code:
                position += 1
                continue
            if code == 0xC0:
                out.append(_extended(body[position + 2], body[position + 1]))
            elif code in _WP5_TAB_CODES:
                out.append("\t")
            position = end
        elif code == 0xFF:
            position += 1
        else:
            length = struct.unpack_from("<H", body, position + 2)[0] if position + 4 <= size else 0
            end = position + 4 + length
            if length < 4 or end > size or body[end - 1] != code:
                position += 1
                continue
            position = end
    return "".join(out)


def _wp42_fixed_groups(data: bytes, *, cut: bool) -> int | None:
    """Count the fixed-size function groups with binary parameters of a WP 4.x document area,
    or None where the bytes break its structure (a stray 0xFF, a group not closed by its own
    code where it must be, too many control bytes).

    With `cut`, `data` is a prefix of the file: a group running past its end is accepted.
    """
    fixed, position, size = 0, 0, len(data)
    strays = 0
    while True:
        found = _HIGH_BYTE.search(data, position)
        end_of_text = found.start() if found else size
        strays += len(data[position:end_of_text]) - len(
            data[position:end_of_text].translate(None, _STRAY_CONTROLS)
        )
        if found is None:
            break
        code = data[end_of_text]
        position = end_of_text + 1
        if code < 0xC0:
            continue
        if code == 0xFF:
            return None
        length = _WP42_GROUP_SIZES[code - 0xC0]
        close = data.find(bytes([code]), position) if length == 0 else end_of_text + length - 1
        if close < 0 or close >= size:
            if cut:
                break
            return None
        if data[close] != code:
            return None
        if length and data[end_of_text + 1 : close].translate(None, _PRINTABLE_ASCII):
            fixed += 1  # its parameters are binary: text between two equal letters is not
        position = close + 1
    return fixed if strays * 100 <= size else None


def is_wordperfect42_document(data: bytes) -> bool:
    """Return True for a WordPerfect 4.x document (it has no header; see the module docstring).

    The structure must hold over the first 64 KiB and show at least one fixed-size group:
    one-byte codes and variable groups alone are not enough, since 8-bit text has their shape
    (curly quotes in 0x91-0x94; two "ü" read as one group). Valid UTF-8 and EBCDIC markup are
    text, never WordPerfect.
    """
    if data.startswith(_WP42_ENCRYPTED):
        return True
    window = data[:_WP42_SNIFF_BYTES]
    if window.isascii() or ebcdic_markup_codec(window) is not None:
        return False
    if not _wp42_fixed_groups(window, cut=len(data) > len(window)):
        return False
    try:
        window.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(window) - 3  # not just a character cut by the window's end
    return False


def _wp42_text(data: bytes) -> str:
    out: list[str] = []
    position, size = 0, len(data)
    while position < size:
        code = data[position]
        if code < 0x20:
            out.append(_WP5_CONTROL.get(code, ""))
            position += 1
        elif code < 0x80:
            out.append(chr(code))
            position += 1
        elif code < 0xC0:
            out.append(_WP42_SINGLE.get(code, ""))
            position += 1
        elif code == 0xFF:
            position += 1
        else:
            length = _WP42_GROUP_SIZES[code - 0xC0]
            end = data.find(bytes([code]), position + 1) if length == 0 else position + length - 1
            if end < 0 or end >= size or data[end] != code:
                position += 1  # not a coherent group: step over the stray code byte
                continue
            if code == _WP42_EXTENDED_CHARACTER and end == position + 2:
                out.append(bytes([data[position + 1]]).decode("cp437"))
            position = end + 1
    return "".join(out)


def _wp42_document_text(data: bytes) -> str:
    if data.startswith(_WP42_ENCRYPTED) and data[4:6] != b"\x00\x00":
        raise EncryptedFileError(
            "the WordPerfect 4.2 document is password-protected",
            file_format="WordPerfect",
            media_type=mt.WORDPERFECT,
            stage="extract",
        )
    if _wp42_fixed_groups(data, cut=False) is None:
        raise _fail("no WordPerfect header, and not a WordPerfect 4.x document area")
    return _wp42_text(data)


def read_wordperfect_text(data: bytes) -> str:
    """Return the text of a WordPerfect 4.x, 5.x or 6.x+ document.

    Raises:
        EncryptedFileError: the document is password-protected (encrypted).
        ExtractionError: not a WordPerfect document, or a version this reader does not know.
    """
    if len(data) < _HEADER_BYTES or not data.startswith(_MAGIC):
        return _tidy(_wp42_document_text(data))
    document_at, _product, file_type, major, _minor, key = struct.unpack_from(
        "<IBBBBH", data, 4
    )
    if file_type != _DOCUMENT_FILE_TYPE:
        raise _fail(f"file type {file_type} is not a document")
    if key != 0:
        raise EncryptedFileError(
            "the WordPerfect document is password-protected",
            file_format="WordPerfect",
            media_type=mt.WORDPERFECT,
            stage="extract",
        )
    if not _HEADER_BYTES <= document_at <= len(data):
        raise _fail("document area outside the file")
    body = data[document_at:]
    if major == 0:
        text = _wp5_text(body)
    elif major == 2:
        text = _wp6_text(body)
    else:
        raise _fail(f"unknown major version {major}")
    return _tidy(text)


def _tidy(text: str) -> str:
    # Soft line ends become spaces; trim each line and fold space runs (linear: no
    # pattern here can rescan a run it failed on).
    lines = (_SPACE_RUN.sub(" ", line.strip(" \t")) for line in text.split("\n"))
    return "\n".join(lines).strip()


class WordPerfectExtractor:
    """WordPerfect documents (4.x and 5.x for DOS/Windows, 6.x to X9): the main text."""

    name = "wordperfect"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/vnd.wordperfect`."""
        return info.media_type == mt.WORDPERFECT

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the document text.

        Raises:
            EncryptedFileError: the document is password-protected.
            ExtractionError: not a readable WordPerfect document.
        """
        return build_text([read_wordperfect_text(blob.data)], handler=self.name, paged=False)


# LibreOffice reads WordPerfect through libwpd.
def is_wordperfect_document(data: bytes) -> bool:
    """Return True for a WordPerfect 5.x-12 document (not a WordPerfect macro or resource)."""
    return data.startswith(_MAGIC) and len(data) > 9 and data[9] == _DOCUMENT_FILE_TYPE


def _sniff_wordperfect(data: bytes) -> bool:
    return is_wordperfect_document(data) or (
        not data.startswith(_MAGIC) and is_wordperfect42_document(data)
    )


FORMATS = (
    Format(name="wordperfect", media_types=(mt.WORDPERFECT,), kind="wordperfect",
           normalise=NormaliseStep.RENDER_OFFICE, handlers=(Handler(WordPerfectExtractor()),),
           extension=".wpd",
           sniff=_sniff_wordperfect),
)
