"""MIME helpers of the email unpacker: header decoding (bounded), part payloads and names, the
choice of body. Pure functions of the standard library's message objects."""

from __future__ import annotations

import email
import email.errors
import email.header
import email.message
import email.utils

from content_core.binary import media_types as mt
from content_core.binary.sniff import decode_text_sample
from content_core.errors import EmailParseError

__all__ = [
    "attachment_name",
    "body_index",
    "choose_body",
    "clip",
    "decode_header_value",
    "decode_part",
    "extension",
    "find_header_end",
    "part_content_id",
    "part_payload",
    "render_header",
    "to_bytes_ascii_compatible",
]

RENDERED_HEADERS = ("From", "To", "Cc", "Date", "Subject")
MAX_HEADER_VALUE_CHARS = 2000


def to_bytes_ascii_compatible(data: bytes) -> bytes:
    """Re-encode UTF-16/32 messages (seen in the wild, even without a BOM) as UTF-8."""
    sample = data[:4096]
    if b"\x00" not in sample:
        return data
    text = decode_text_sample(sample)
    if text is None:
        return data
    for encoding in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
        try:
            candidate = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if candidate[:64].replace("\ufeff", "")[:1].isascii() and "\x00" not in candidate[:4096]:
            return candidate.lstrip("\ufeff").encode("utf-8")
    return data


def find_header_end(data: bytes) -> int:
    positions = [p for p in (data.find(b"\n\n"), data.find(b"\r\n\r\n")) if p >= 0]
    return min(positions) if positions else len(data)


def clip(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= MAX_HEADER_VALUE_CHARS else value[:MAX_HEADER_VALUE_CHARS] + "…"


def decode_header_value(raw: str) -> str:
    raw = raw[: MAX_HEADER_VALUE_CHARS * 4]
    try:
        pieces = email.header.decode_header(raw)
    except (email.errors.HeaderParseError, ValueError, LookupError):
        return clip(raw)
    out = []
    for chunk, charset in pieces:
        if isinstance(chunk, bytes):
            out.append(decode_part(chunk, charset))
        else:
            out.append(chunk)
    return clip("".join(out))


def render_header(message: email.message.Message) -> str:
    lines = []
    for label in RENDERED_HEADERS:
        value = message.get(label)
        if value:
            lines.append(f"{label}: {decode_header_value(str(value))}")
    return "\n".join(lines)


def attachment_name(part: email.message.Message) -> str | None:
    try:
        raw = part.get_filename() or part.get_param("name")
    except (ValueError, TypeError, LookupError, IndexError):
        return None
    if isinstance(raw, tuple):  # RFC 2231 triple
        raw = email.utils.collapse_rfc2231_value(raw)
    if not raw:
        return None
    return decode_header_value(str(raw))


def part_content_id(part: email.message.Message) -> str | None:
    """Return the part's Content-ID without angle brackets, lower-cased, or None."""
    raw = part.get("Content-ID")
    if not raw:
        return None
    value = str(raw).strip()[:500].strip("<> \t")
    return value.lower() or None


def part_payload(part: email.message.Message) -> bytes:
    try:
        payload = part.get_payload(decode=True)
    except (ValueError, TypeError, LookupError) as exc:
        raise EmailParseError(f"undecodable part ({exc})") from exc
    if isinstance(payload, bytes):
        return payload
    raw = part.get_payload()
    return raw.encode("utf-8", "replace") if isinstance(raw, str) else b""


def decode_part(payload: bytes, charset: str | None) -> str:
    for candidate in (charset, "utf-8"):
        if not candidate:
            continue
        try:
            return payload.decode(candidate)
        except (LookupError, UnicodeDecodeError):
            continue
    return payload.decode("cp1252", errors="replace")


def body_index(bodies: list[tuple[str, str]]) -> int | None:
    """Return the position of the body among `(media type, text)` candidates: the first plain
    text that is not blank, else the first HTML that is not blank; None when all are blank."""
    for kind in (mt.PLAIN, mt.HTML):
        for index, (ctype, text) in enumerate(bodies):
            if ctype == kind and text.strip():
                return index
    return None


def choose_body(bodies: list[tuple[str, str]]) -> tuple[str, str]:
    index = body_index(bodies)
    if index is None:
        return "", mt.PLAIN
    ctype, text = bodies[index]
    return (text.replace("\r\n", "\n") if ctype == mt.PLAIN else text), ctype


def extension(ctype: str) -> str:
    known = {
        "text/plain": ".txt",
        "text/html": ".html",
        "application/pdf": ".pdf",
        "image/png": ".png",
        "image/jpeg": ".jpg",
        "image/gif": ".gif",
        "image/webp": ".webp",
        "image/bmp": ".bmp",
        "image/tiff": ".tif",
        "image/svg+xml": ".svg",
        "application/xhtml+xml": ".xhtml",
    }
    return known.get(ctype, ".bin")
