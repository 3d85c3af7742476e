"""Legacy Word 97-2003 (.doc) text read from the binary piece table, without LibreOffice.

The FIB at the start of the `WordDocument` stream points (fcClx) into the table stream at
the piece table: each piece maps a run of character positions to bytes that are either
cp1252 ("compressed") or UTF-16LE. The main story is the first `ccpText` characters; field
instructions (between 0x13 and 0x14) are dropped and field results kept.
"""

from __future__ import annotations

import io
import re
import struct
from typing import Any

from content_core.binary import media_types as mt
from content_core.errors import EncryptedFileError, ExtractionError, MissingDependencyError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text

__all__ = ["DocExtractor"]

_WORD_IDENT = 0xA5EC
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


def _load_olefile() -> Any:  # Any: the olefile module, imported lazily
    try:
        import olefile
    except ImportError as exc:
        raise MissingDependencyError(
            "olefile is not installed (a core dependency: pip install olefile)"
        ) from exc
    return olefile


def _fail(reason: str) -> ExtractionError:
    return ExtractionError(f"not a readable Word 97 document: {reason}", media_type=mt.DOC)


def _pieces(table: bytes, fc_clx: int, lcb_clx: int) -> list[tuple[int, int, int, bool]]:
    """Return (cp_start, cp_end, byte_offset, compressed) for each piece."""
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
    """Return the main-story text of a Word 97-2003 file.

    Raises:
        EncryptedFileError: the document is password-protected.
        ExtractionError: the file is not a readable Word binary document.
    """
    olefile = _load_olefile()
    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            word = ole.openstream("WordDocument").read()
            if len(word) < _OFFSET_FC_CLX + 8:
                raise _fail("FIB truncated")
            (ident,) = struct.unpack_from("<H", word, 0)
            (flags,) = struct.unpack_from("<H", word, _OFFSET_FLAGS)
            if ident != _WORD_IDENT:
                raise _fail("bad FIB signature")
            if flags & _F_ENCRYPTED:
                raise EncryptedFileError(
                    "password-protected Word 97-2003 document (DOC)",
                    file_format="DOC",
                    media_type=mt.DOC,
                    stage="extract",
                )
            table_name = "1Table" if flags & _F_WHICH_TABLE else "0Table"
            table = ole.openstream(table_name).read()
    except EncryptedFileError:
        raise
    except (OSError, ValueError, IndexError) as exc:
        raise _fail(str(exc)) from exc
    (ccp_text,) = struct.unpack_from("<i", word, _OFFSET_CCP_TEXT)
    fc_clx, lcb_clx = struct.unpack_from("<II", word, _OFFSET_FC_CLX)
    chunks: list[str] = []
    # The text is stored in the WordDocument stream, so a genuine file never holds more
    # characters than that stream has bytes; hostile pieces may all point at the same bytes.
    remaining = len(word)
    for cp_start, cp_end, offset, compressed in _pieces(table, fc_clx, lcb_clx):
        if cp_start >= ccp_text or remaining <= 0:
            break
        end = min(cp_end, ccp_text)
        length = min(max(end - cp_start, 0), remaining)
        remaining -= length
        if compressed:
            raw = word[offset : offset + length]
            chunks.append(raw.decode("cp1252", errors="replace"))
        else:
            raw = word[offset : offset + 2 * length]
            chunks.append(raw.decode("utf-16-le", errors="replace"))
    text = _strip_fields("".join(chunks))
    text = _ROW_END.sub(" |\n", text).replace("\x07", " | ")
    return text.translate(_CHAR_MAP)


class DocExtractor:
    """Word 97-2003 binary documents (plain text of the main story)."""

    name = "doc"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/msword`."""
        return info.media_type == mt.DOC

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the document's main text.

        Raises:
            EncryptedFileError: the document is password-protected.
            ExtractionError: not a readable Word 97-2003 file.
        """
        try:
            text = read_doc_text(blob.data)
        except struct.error as exc:
            raise _fail(f"truncated structure: {exc}") from exc
        return build_text([text], handler=self.name, paged=False)
