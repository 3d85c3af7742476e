"""Legacy Word (.doc) text read from the binary file, without LibreOffice: Word 97-2003 and
Word 6.0/95.

Word 97+: the FIB at the start of the `WordDocument` stream points (fcClx) into the table
stream at the piece table: each piece maps a run of character positions to bytes that are
either cp1252 ("compressed") or UTF-16LE.
Word 6/95 (nFib 101-105): no table stream and no Unicode. The text is 8-bit in the code page
of the document's language, from fcMin in one run, or, after a fast save (fComplex), through a
piece table at fcClx in the `WordDocument` stream itself.
In both, the main story is the first `ccpText` characters; field instructions (between 0x13
and 0x14) are dropped and field results kept. The title is the Title property (PIDSI_TITLE) of
the `\x05SummaryInformation` property set stream.
"""

from __future__ import annotations

import io
import re
import struct

import olefile

from content_core.binary import media_types as mt
from content_core.errors import EncryptedFileError, ExtractionError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats

__all__ = ["FORMATS", "DocExtractor"]

_WORD_IDENT = 0xA5EC
_WORD6_IDENT = 0xA5DC
_F_COMPLEX = 0x0004
_F_ENCRYPTED = 0x0100
_F_WHICH_TABLE = 0x0200
_OFFSET_FLAGS = 0x0A
_OFFSET_CCP_TEXT = 0x4C
_OFFSET_FC_CLX = 0x01A2
_COMPRESSED = 0x40000000
_FIELD_BEGIN, _FIELD_SEPARATOR, _FIELD_END = "\x13", "\x14", "\x15"
_CHAR_MAP = str.maketrans(
    {
        "\r": "\n",
        "\x0b": "\n",
        "\x0c": "\n\n",
        "\x1e": "-",
        "\x1f": None,
        "\x01": None,
        "\x08": None,
        "\x02": None,
        "\x05": None,
    }
)
_ROW_END = re.compile("\x07\x07")
_MAX_PIECES = 1_000_000
# Word 6/95 FIB fields; nFib below the Word 97 value (0xC1) and from Word 6's (101) on.
_WORD6_NFIB = range(101, 0xC1)
_OFFSET_NFIB = 0x02
_OFFSET_LID = 0x06
_OFFSET_FC_MIN = 0x18
_WORD6_OFFSET_CCP_TEXT = 0x34
_WORD6_OFFSET_FC_CLX = 0x0160
# Word 6/95 stores 8-bit text in the ANSI code page of the document language (primary
# language id -> code page); everything else is Western (cp1252).
# The SummaryInformation property set: where its first section starts, the Title and CodePage
# properties and their types. A section lists at most this many properties (Word writes ~20).
_SUMMARY_STREAM = "\x05SummaryInformation"
_OFFSET_SECTION = 44
_PID_CODEPAGE, _PID_TITLE = 1, 2
_VT_I2, _VT_LPSTR = 0x02, 0x1E
_MAX_PROPERTIES = 1_000
_WORD6_CODE_PAGES = {
    0x01: "cp1256", 0x02: "cp1251", 0x05: "cp1250", 0x08: "cp1253", 0x0D: "cp1255",
    0x0E: "cp1250", 0x11: "cp932", 0x12: "cp949", 0x15: "cp1250", 0x18: "cp1250",
    0x19: "cp1251", 0x1A: "cp1250", 0x1B: "cp1250", 0x1F: "cp1254", 0x22: "cp1251",
    0x23: "cp1251", 0x24: "cp1250", 0x25: "cp1257", 0x26: "cp1257", 0x27: "cp1257",
    0x2F: "cp1251", 0x1E: "cp874", 0x2A: "cp1258",
}



def _fail(reason: str) -> ExtractionError:
    return ExtractionError(f"not a readable Word document: {reason}", media_type=mt.DOC)


def _pieces(
    table: bytes, fc_clx: int, lcb_clx: int, *, eight_bit: bool = False
) -> list[tuple[int, int, int, bool]]:
    """Return (cp_start, cp_end, byte_offset, compressed) for each piece; with `eight_bit`
    (Word 6/95) every piece is 8-bit text at the byte offset its descriptor gives."""
    clx = table[fc_clx : fc_clx + lcb_clx]
    pos = 0
    while pos < len(clx) and clx[pos] == 0x01:  # Prc: property modifiers, skipped
        (size,) = struct.unpack_from("<H", clx, pos + 1)
        pos += 3 + size
    if pos + 5 > len(clx) or clx[pos] != 0x02:
        raise _fail("piece table not found")
    (lcb,) = struct.unpack_from("<I", clx, pos + 1)
    plc = clx[pos + 5 : pos + 5 + lcb]
    count = (len(plc) - 4) // 12
    if count <= 0 or count > _MAX_PIECES:
        raise _fail("empty or oversized piece table")
    cps = struct.unpack_from(f"<{count + 1}I", plc, 0)
    pieces = []
    for index in range(count):
        (fc,) = struct.unpack_from("<I", plc, 4 * (count + 1) + 8 * index + 2)
        if eight_bit:
            pieces.append((cps[index], cps[index + 1], fc, True))
            continue
        compressed = bool(fc & _COMPRESSED)
        offset = (fc & ~_COMPRESSED) // 2 if compressed else fc
        pieces.append((cps[index], cps[index + 1], offset, compressed))
    return pieces


def _strip_fields(text: str) -> str:
    """Drop field instructions, keep field results; fields may nest."""
    if _FIELD_BEGIN not in text:
        return text
    out: list[str] = []
    stack: list[bool] = []  # per open field: are we in its result part?
    for char in text:
        if char == _FIELD_BEGIN:
            stack.append(False)
        elif char == _FIELD_SEPARATOR and stack:
            stack[-1] = True
        elif char == _FIELD_END and stack:
            stack.pop()
        elif not stack or all(stack):
            out.append(char)
    return "".join(out)


def read_doc_text(data: bytes) -> str:
    """Return the main-story text of a Word 6/95 or Word 97-2003 file.

    Raises:
        EncryptedFileError: the document is password-protected.
        ExtractionError: the file is not a readable Word binary document.
    """
    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            word = ole.openstream("WordDocument").read()
            if len(word) < _OFFSET_FC_CLX + 8:
                raise _fail("FIB truncated")
            ident, nfib = struct.unpack_from("<HH", word, 0)
            (flags,) = struct.unpack_from("<H", word, _OFFSET_FLAGS)
            if ident not in (_WORD_IDENT, _WORD6_IDENT):
                raise _fail("bad FIB signature")
            if flags & _F_ENCRYPTED:
                raise EncryptedFileError(
                    "password-protected Word document (DOC)",
                    file_format="DOC",
                    media_type=mt.DOC,
                    stage="extract",
                )
            if nfib in _WORD6_NFIB:
                return _clean_story(_word6_text(word, flags))
            table_name = "1Table" if flags & _F_WHICH_TABLE else "0Table"
            table = ole.openstream(table_name).read()
    except EncryptedFileError:
        raise
    except (OSError, ValueError, IndexError) as exc:
        raise _fail(str(exc)) from exc
    (ccp_text,) = struct.unpack_from("<i", word, _OFFSET_CCP_TEXT)
    fc_clx, lcb_clx = struct.unpack_from("<II", word, _OFFSET_FC_CLX)
    return _clean_story(_piece_text(word, _pieces(table, fc_clx, lcb_clx), ccp_text, "cp1252"))


def _word6_text(word: bytes, flags: int) -> str:
    """The main story of a Word 6/95 `WordDocument` stream."""
    (lid,) = struct.unpack_from("<H", word, _OFFSET_LID)
    encoding = _WORD6_CODE_PAGES.get(lid & 0x3FF, "cp1252")
    (fc_min,) = struct.unpack_from("<I", word, _OFFSET_FC_MIN)
    (ccp_text,) = struct.unpack_from("<i", word, _WORD6_OFFSET_CCP_TEXT)
    if flags & _F_COMPLEX:
        fc_clx, lcb_clx = struct.unpack_from("<II", word, _WORD6_OFFSET_FC_CLX)
        pieces = _pieces(word, fc_clx, lcb_clx, eight_bit=True)
        return _piece_text(word, pieces, ccp_text, encoding)
    length = min(max(ccp_text, 0), max(len(word) - fc_min, 0))
    return word[fc_min : fc_min + length].decode(encoding, errors="replace")


def _piece_text(
    word: bytes, pieces: list[tuple[int, int, int, bool]], ccp_text: int, encoding: str
) -> str:
    """Concatenate the first `ccp_text` characters that `pieces` map into `word`."""
    chunks: list[str] = []
    # The text is stored in the WordDocument stream, so a genuine file never holds more
    # characters than that stream has bytes; hostile pieces may all point at the same bytes.
    remaining = len(word)
    for cp_start, cp_end, offset, compressed in pieces:
        if cp_start >= ccp_text or remaining <= 0:
            break
        end = min(cp_end, ccp_text)
        length = min(max(end - cp_start, 0), remaining)
        remaining -= length
        if compressed:
            raw = word[offset : offset + length]
            chunks.append(raw.decode(encoding, errors="replace"))
        else:
            raw = word[offset : offset + 2 * length]
            chunks.append(raw.decode("utf-16-le", errors="replace"))
    return "".join(chunks)


def _clean_story(raw: str) -> str:
    """Drop field codes and map Word's control characters to plain-text layout."""
    text = _strip_fields(raw)
    text = _ROW_END.sub(" |\n", text).replace("\x07", " | ")
    return text.translate(_CHAR_MAP)


def _doc_title(data: bytes) -> str | None:
    """The Title property of the document's SummaryInformation; None when there is none or it
    cannot be read (a title is optional: the text was read on its own terms)."""
    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            if not ole.exists(_SUMMARY_STREAM):
                return None
            stream: bytes = ole.openstream(_SUMMARY_STREAM).read()
        (start,) = struct.unpack_from("<I", stream, _OFFSET_SECTION)
        (count,) = struct.unpack_from("<I", stream, start + 4)
        found: dict[int, int] = {}
        for index in range(min(count, _MAX_PROPERTIES)):
            pid, offset = struct.unpack_from("<II", stream, start + 8 + 8 * index)
            found[pid] = start + offset
        if _PID_TITLE not in found:
            return None
        codepage = 1252
        if _PID_CODEPAGE in found:
            kind, value = struct.unpack_from("<H2xh", stream, found[_PID_CODEPAGE])
            codepage = value & 0xFFFF if kind == _VT_I2 else codepage
        kind, size = struct.unpack_from("<H2xI", stream, found[_PID_TITLE])
    except (OSError, ValueError, IndexError, struct.error):
        return None
    if kind != _VT_LPSTR:
        return None
    raw = stream[found[_PID_TITLE] + 8 : found[_PID_TITLE] + 8 + size]
    encoding = {1200: "utf-16-le", 65001: "utf-8"}.get(codepage, f"cp{codepage}")
    try:
        text = raw.decode(encoding, errors="replace")
    except LookupError:  # a code page Python has no codec for
        text = raw.decode("cp1252", errors="replace")
    return text.split("\x00", 1)[0]


class DocExtractor:
    """Word 6.0/95 and Word 97-2003 binary documents (plain text of the main story)."""

    name = "doc"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/msword`."""
        return info.media_type == mt.DOC

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the document's main text and its title.

        Raises:
            EncryptedFileError: the document is password-protected.
            ExtractionError: not a readable Word 6/95 or 97-2003 file.
        """
        try:
            text = read_doc_text(blob.data)
        except struct.error as exc:
            raise _fail(f"truncated structure: {exc}") from exc
        return build_text([text], handler=self.name, paged=False, title=_doc_title(blob.data))


FORMATS = office_formats(Handler(DocExtractor()), "doc", (".doc", mt.DOC), package=None)
