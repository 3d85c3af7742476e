"""EmailUnpacker: split an .eml or Outlook .msg into a body and attachments.

Hardened against the standard library's soft spots: headers are parsed with the `compat32`
policy (no eager encoded-word decoding, whose cost grows quadratically on huge headers) and only
the few rendered headers are decoded, truncated first; the header block and the number of MIME
parts are limited before parsing (deep multiparts make the parser recurse); attachment names are
reduced to display names, never paths.

An HTML or XHTML body (`application/xhtml+xml` too) is the body, not an attachment; the inline
images it shows (`multipart/related` parts with a Content-ID) become child artifacts, and the
body's `cid:` references are rewritten to their names so the text points at them. A text or
(X)HTML part that is neither the body nor an alternative rendering of it (a multipart/mixed
message with a plain note and an XHTML report) becomes an attachment, so its text is kept.
"""

from __future__ import annotations

import codecs
import email
import email.errors
import email.header
import email.message
import email.policy
import email.utils
import html
import re
from dataclasses import dataclass
from urllib.parse import unquote

from content_core.binary import media_types as mt
from content_core.binary._mime import (
    attachment_name,
    body_index,
    choose_body,
    clip,
    decode_part,
    extension,
    find_header_end,
    part_content_id,
    part_payload,
    render_header,
    to_bytes_ascii_compatible,
)
from content_core.binary.archives import ArchiveMember, safe_name
from content_core.binary.budget import ExpansionBudget
from content_core.errors import (
    BinaryFanoutError,
    BinaryTooLargeError,
    EmailParseError,
    EncryptedMessageError,
    MissingDependencyError,
)
from content_core.formats import Format, NormaliseStep

__all__ = ["FORMATS", "EmailUnpacker", "UnpackedEmail"]

# Messages: their text is in the rows of their body and attachments. EML is told by its header
# lines (`sniff_text`), MSG by its OLE2 streams (`sniff`).
FORMATS = (
    Format(name="eml", media_types=(mt.EML,), kind="email", yields_text=False,
           normalise=NormaliseStep.UNPACK_EMAIL, extension=".eml"),
    Format(name="msg", media_types=(mt.MSG,), kind="email", yields_text=False,
           normalise=NormaliseStep.UNPACK_EMAIL, extension=".msg"),
)

_BOUNDARY = re.compile(rb"boundary\s*=", re.IGNORECASE)
_PGP_ARMOR = b"-----BEGIN PGP MESSAGE-----"
# The DER object identifier of CMS enveloped-data (1.2.840.113549.1.7.3): an encrypted
# S/MIME body; signed-data (.7.2) is not encrypted.
_ENVELOPED_DATA_OID = bytes.fromhex("06092a864886f70d010703")
_HTML_BODY_TYPES = frozenset({mt.HTML, mt.XHTML, "application/xhtml"})
# Where the rendered header goes in an HTML body: after <body>, else after </head>.
_BODY_TAG = re.compile(r"<body\b[^<>]{0,2000}>", re.IGNORECASE)
_HEAD_END = re.compile(r"</head\s*>", re.IGNORECASE)
_CID_REF = re.compile(r"""(?<=["'(=])cid:([^"'()<>\s]{1,500})""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _BodyPart:
    """A part that may be the body: its kind (plain or HTML), text, own type, name, bytes and
    the multipart/alternative parts it belongs to."""

    kind: str
    text: str
    ctype: str
    label: str | None
    payload: bytes
    alternatives: frozenset[int]


@dataclass(frozen=True, slots=True)
class UnpackedEmail:
    """An email split into parts: rendered header lines, one body, and attachments."""

    header: str
    body: str
    body_media_type: str
    attachments: tuple[ArchiveMember, ...]

    def body_document(self, *, render_header: bool) -> tuple[bytes, str]:
        """Return the body as a document (bytes, media type), with the header on top if asked."""
        if self.body_media_type == mt.HTML:
            document = self.body
            if render_header and self.header:
                head = "<pre>" + html.escape(self.header) + "</pre>\n"
                # Inside the body: before an XML declaration or <head> it would push the
                # head's <title> into the text.
                anchor = _BODY_TAG.search(document) or _HEAD_END.search(document)
                at = anchor.end() if anchor else 0
                document = document[:at] + head + document[at:]
            # The text was decoded from its part's charset: a BOM says UTF-8 ahead of any
            # charset the markup still declares.
            return codecs.BOM_UTF8 + document.encode("utf-8"), mt.HTML
        text = self.body
        if render_header and self.header:
            text = self.header + "\n\n" + text
        return text.encode("utf-8"), mt.PLAIN


class EmailUnpacker:
    """Parse RFC 822 (.eml) and Outlook (.msg) messages within configured limits."""

    def __init__(self, *, max_header_bytes: int = 256 * 1024, max_parts: int = 500) -> None:
        self.max_header_bytes = max_header_bytes
        self.max_parts = max_parts

    def unpack(
        self, data: bytes, media_type: str, budget: ExpansionBudget, *, filename: str = ""
    ) -> UnpackedEmail:
        """Return the body and attachments of the message `data`.

        Raises:
            EmailParseError: the message cannot be parsed.
            BinaryTooLargeError: the header block is over its limit, or the decoded parts pass
                the byte budget.
            BinaryFanoutError: more MIME parts than allowed.
        """
        name = filename or "<email>"
        if media_type == mt.MSG:
            return self._msg(data, budget, name)
        return self._eml(data, budget, name)

    # ---------------------------------------------------------------------------------- eml

    def _eml(self, data: bytes, budget: ExpansionBudget, name: str) -> UnpackedEmail:
        data = to_bytes_ascii_compatible(data)
        header_end = find_header_end(data)
        if header_end > self.max_header_bytes:
            raise BinaryTooLargeError(
                f"{name}: header block of {header_end} bytes, over "
                f"max_email_header_bytes={self.max_header_bytes}",
                limit="max_email_header_bytes",
                value=header_end,
                maximum=self.max_header_bytes,
            )
        boundaries = len(_BOUNDARY.findall(data))
        if boundaries > self.max_parts:
            raise BinaryFanoutError(
                f"{name}: {boundaries} multipart levels or parts, over "
                f"max_email_parts={self.max_parts}",
                limit="max_email_parts", value=boundaries, maximum=self.max_parts,
            )
        try:
            message = email.message_from_bytes(data, policy=email.policy.compat32)
        except RecursionError as exc:
            raise EmailParseError(f"{name}: MIME structure nests too deeply") from exc
        except (ValueError, TypeError, LookupError, IndexError, email.errors.MessageError) as exc:
            raise EmailParseError(f"{name}: unparseable message ({exc})") from exc
        header = render_header(message)
        bodies: list[_BodyPart] = []
        attachments: list[ArchiveMember] = []
        content_ids: dict[str, str] = {}
        # Each part with the multipart/alternative parts it sits in (numbered in walk order).
        stack: list[tuple[email.message.Message, int, frozenset[int]]] = [
            (message, 0, frozenset())
        ]
        parts = 0
        while stack:
            part, depth, alternatives = stack.pop()
            parts += 1
            if parts > self.max_parts:
                raise BinaryFanoutError(
                    f"{name}: more than max_email_parts={self.max_parts} MIME parts",
                    limit="max_email_parts", value=parts, maximum=self.max_parts,
                )
            if depth > 64:
                raise BinaryFanoutError(
                    f"{name}: MIME parts nest deeper than 64 levels", limit="mime_depth",
                    value=depth, maximum=64,
                )
            ctype = part.get_content_type()
            if part.is_multipart() and ctype != "message/rfc822":
                payload = part.get_payload()
                if ctype == "multipart/alternative":
                    alternatives = alternatives | {parts}
                if isinstance(payload, list):
                    stack.extend(
                        (child, depth + 1, alternatives)
                        for child in reversed(payload)
                        if isinstance(child, email.message.Message)
                    )
                continue
            label = attachment_name(part)
            disposition = (part.get("Content-Disposition") or "").lower()
            is_attachment = label is not None or disposition.startswith("attachment")
            if ctype in _HTML_BODY_TYPES and not disposition.startswith("attachment") and not any(
                body.kind == mt.HTML for body in bodies
            ):
                is_attachment = False  # the (first) HTML body, even when it carries a name
            if ctype == "message/rfc822":
                attachments.append(self._embedded_message(part, budget, name, len(attachments)))
                continue
            payload_bytes = part_payload(part)
            budget.charge_bytes(len(payload_bytes), name)
            if not is_attachment and (ctype == mt.PLAIN or ctype in _HTML_BODY_TYPES):
                kind = mt.PLAIN if ctype == mt.PLAIN else mt.HTML
                text = decode_part(payload_bytes, part.get_content_charset())
                bodies.append(_BodyPart(kind, text, ctype, label, payload_bytes, alternatives))
                continue
            if part is message and not is_attachment and ctype.startswith("text/"):
                text = decode_part(payload_bytes, None)
                bodies.append(_BodyPart(mt.PLAIN, text, mt.PLAIN, None, payload_bytes, frozenset()))
                continue
            budget.charge_file(name)
            content_id = part_content_id(part)
            prefix = "inline" if content_id and not label else "attachment"
            fallback = f"{prefix}-{len(attachments) + 1}{extension(ctype)}"
            member = _member(name, safe_name(label or "", fallback), payload_bytes)
            attachments.append(member)
            if content_id:
                content_ids.setdefault(content_id, member.name)
        body, body_type = choose_body([(part.kind, part.text) for part in bodies])
        attachments.extend(self._other_bodies(bodies, budget, name, len(attachments)))
        if body_type == mt.HTML and content_ids:
            body = _CID_REF.sub(
                lambda m: content_ids.get(unquote(m.group(1)).lower(), m.group(0)), body
            )
        return UnpackedEmail(header, body, body_type, tuple(attachments))

    @staticmethod
    def _other_bodies(
        bodies: list[_BodyPart], budget: ExpansionBudget, name: str, count: int
    ) -> list[ArchiveMember]:
        """The text and (X)HTML parts that are not the body nor an alternative rendering of it
        (a second HTML part of a multipart/mixed message): attachments, so that their text
        is extracted rather than lost."""
        chosen = body_index([(part.kind, part.text) for part in bodies])
        if chosen is None:
            return []
        body = bodies[chosen]
        members: list[ArchiveMember] = []
        for part in bodies:
            if part is body or not part.text.strip() or part.alternatives & body.alternatives:
                continue
            budget.charge_file(name)
            fallback = f"part-{count + len(members) + 1}{extension(part.ctype)}"
            members.append(_member(name, safe_name(part.label or "", fallback), part.payload))
        return members

    def _embedded_message(
        self, part: email.message.Message, budget: ExpansionBudget, name: str, index: int
    ) -> ArchiveMember:
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        fallback = f"message-{index + 1}.eml"
        display = safe_name(attachment_name(part) or "", fallback)
        budget.charge_file(name)
        try:
            content = inner.as_bytes() if isinstance(inner, email.message.Message) else b""
        except RecursionError as exc:
            return ArchiveMember(display, None, EmailParseError(
                f"{name}: attached message nests too deeply ({exc})"
            ))
        except (ValueError, TypeError, LookupError, UnicodeError) as exc:
            return ArchiveMember(display, None, EmailParseError(
                f"{name}: attached message cannot be serialised ({exc})"
            ))
        budget.charge_bytes(len(content), name)
        return ArchiveMember(display, content)

    # ---------------------------------------------------------------------------------- msg

    def _msg(self, data: bytes, budget: ExpansionBudget, name: str) -> UnpackedEmail:
        try:
            import extract_msg
            from extract_msg.exceptions import ExMsgBaseException
        except ImportError as exc:  # pragma: no cover - extract-msg is a core dependency
            raise MissingDependencyError(
                "extract-msg is required for .msg", extra="binary"
            ) from exc
        failures = (
            ExMsgBaseException, OSError, ValueError, KeyError, TypeError, IndexError,
            AttributeError, NotImplementedError, UnicodeError, RecursionError, EOFError,
            LookupError, email.errors.MessageError,
        )
        try:
            message = extract_msg.openMsg(data)
        except failures as exc:
            raise EmailParseError(f"{name}: unreadable Outlook message ({exc})") from exc
        try:
            header = "\n".join(
                f"{label}: {clip(str(value))}"
                for label, value in (
                    ("From", getattr(message, "sender", None)),
                    ("To", getattr(message, "to", None)),
                    ("Cc", getattr(message, "cc", None)),
                    ("Date", getattr(message, "date", None)),
                    ("Subject", getattr(message, "subject", None)),
                )
                if value
            )
            body = getattr(message, "body", None) or ""
            body_type = mt.PLAIN
            if not body.strip():
                html_body = getattr(message, "htmlBody", None)
                if html_body:
                    body = decode_part(html_body, None)
                    body_type = mt.HTML
            attachments = []
            for index, attachment in enumerate(getattr(message, "attachments", [])):
                attachments.append(_msg_attachment(attachment, index, budget, name))
        except (BinaryTooLargeError, BinaryFanoutError):
            raise
        except failures as exc:
            raise EmailParseError(f"{name}: Outlook message cannot be read ({exc})") from exc
        finally:
            message.close()
        return UnpackedEmail(header, body.replace("\r\n", "\n"), body_type, tuple(attachments))


def _msg_attachment(
    attachment: object, index: int, budget: ExpansionBudget, name: str
) -> ArchiveMember:
    label = getattr(attachment, "longFilename", None) or getattr(attachment, "shortFilename", None)
    display = safe_name(label or "", f"attachment-{index + 1}")
    budget.charge_file(name)
    content = getattr(attachment, "data", None)
    if content is not None and not isinstance(content, bytes):
        export = getattr(content, "exportBytes", None)
        if export is None:
            return ArchiveMember(display, None, EmailParseError(
                f"{name}: attachment {display!r} is an embedded object that cannot be exported"
            ))
        content = export()
        if not display.lower().endswith(".msg"):
            display += ".msg"
    if not isinstance(content, bytes):
        return ArchiveMember(display, None, EmailParseError(
            f"{name}: attachment {display!r} has no data (a link or OLE object)"
        ))
    budget.charge_bytes(len(content), name)
    return _member(name, display, content)


# ------------------------------------------------------------------------------------ helpers


def _member(name: str, display: str, content: bytes) -> ArchiveMember:
    """An attachment, or its failure when it is encrypted for a recipient (PGP or S/MIME):
    no extractor can read it, and the row should say it needs a key."""
    scheme = None
    if content.lstrip()[: len(_PGP_ARMOR)] == _PGP_ARMOR:
        scheme = "PGP"
    elif _ENVELOPED_DATA_OID in content[:64]:
        scheme = "S/MIME"
    if scheme is None:
        return ArchiveMember(display, content)
    return ArchiveMember(display, None, EncryptedMessageError(
        f"{name}: attachment {display!r} is {scheme}-encrypted email content; it needs the "
        "recipient's private key",
        file_format=f"{scheme} email",
    ))
