"""File names as data: any bytes a filesystem allows, as valid UTF-8 text and back, losslessly.

Linux allows any bytes but `/` and NUL in a name (old zips, Windows shares and other locales
make names that are not UTF-8), while Arrow, Parquet, DuckDB, JSON and terminals want valid
UTF-8 text. So every table keeps two columns: `path_bytes`, the exact bytes the filesystem gave,
and `path`, their text form made by `escape_path`:

- the bytes are decoded as UTF-8;
- each byte that is not part of valid UTF-8 becomes `\\xNN` (two lowercase hex digits);
- every literal backslash becomes `\\\\`.

Names that are valid UTF-8 and hold no backslash are unchanged. Because a backslash in the text
always starts an escape, the text form is injective (`a\\xff` is the byte 0xFF, `a\\\\xff` the
four characters `a\\xff`) and `unescape_path` is its exact inverse, so the text alone is enough
to key a file; nothing reads a file back from the text, though (`path_bytes` is carried).
"""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pyarrow.compute as pc

from content_core.errors import SourceError

__all__ = ["escape_path", "escape_path_array", "os_path_text", "unescape_path"]

# After decoding with surrogateescape, each undecodable byte is a lone surrogate U+DC80-U+DCFF
# (strict UTF-8 never decodes to a surrogate, so every one of them is an escaped byte).
_NEEDS_ESCAPE = re.compile("[\\\\\udc80-\udcff]")
_ESCAPE_SEQUENCE = re.compile(r"\\(?:x([0-9a-f]{2})|(\\))?")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return "\\\\" if char == "\\" else f"\\x{ord(char) - 0xDC00:02x}"


def escape_path(raw: bytes) -> str:
    """The text form of a name given as bytes (see the module docstring); valid UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "surrogateescape")
        return _NEEDS_ESCAPE.sub(_escape_char, text)
    return text.replace("\\", "\\\\") if "\\" in text else text


def unescape_path(text: str) -> bytes:
    """The bytes of a name given in its text form: the exact inverse of `escape_path`.

    Raises:
        SourceError: `text` is not a text form `escape_path` makes (a lone backslash, an
            escape of bytes that are valid UTF-8, a lone surrogate).
    """
    try:
        if "\\" not in text:
            return text.encode("utf-8")
        out = bytearray()
        position = 0
        for match in _ESCAPE_SEQUENCE.finditer(text):
            out += text[position : match.start()].encode("utf-8")
            hex_digits, backslash = match.groups()
            if hex_digits is not None:
                out.append(int(hex_digits, 16))
            elif backslash is not None:
                out.append(0x5C)
            else:
                raise SourceError(f"not an escaped path (lone backslash): {text!r}")
            position = match.end()
        out += text[position:].encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SourceError(f"not an escaped path (lone surrogate): {text!r}") from exc
    raw = bytes(out)
    if escape_path(raw) != text:  # e.g. `\x41` for `A`: one name has exactly one text form
        raise SourceError(f"not an escaped path (non-canonical escape): {text!r}")
    return raw


def os_path_text(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """The text form of any local path (absolute or not), for logs, messages and columns.

    A `str` path from Python's os functions carries undecodable bytes as surrogates
    (`os.fsdecode`); printing it raises UnicodeEncodeError, its text form never does.
    """
    return escape_path(os.fsencode(path))


def escape_path_array(raw: pa.Array) -> pa.Array:
    """`escape_path` over an Arrow binary array (a folder listing), vectorised when it can be.

    The common listing (every name valid UTF-8, no backslash) costs one validating cast.
    """
    if len(raw) == 0:
        return pa.array([], pa.string())
    try:
        text = raw.cast(pa.string())
    except pa.ArrowInvalid:  # some name is not UTF-8
        pass
    else:
        if not pc.any(pc.match_substring(text, "\\")).as_py():
            return text
    return pa.array([escape_path(name) for name in raw.to_pylist()], pa.string())
