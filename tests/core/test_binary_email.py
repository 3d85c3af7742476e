"""EmailUnpacker: bodies, rendered headers, attachments, .msg, and hostile messages."""

from __future__ import annotations

import pytest

from content_core.binary import EmailUnpacker
from content_core.binary import media_types as mt
from content_core.binary.archives import ExpansionBudget
from content_core.errors import BinaryFanoutError, BinaryTooLargeError, EmailParseError
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import (
    deep_multipart_email,
    email_with_hostile_attachment_names,
    encoded_word_header_email,
    utf16_without_bom,
)
from tests.support.budget import cpu_budget


def _budget() -> ExpansionBudget:
    return ExpansionBudget(max_bytes=64 * 1024 * 1024, max_files=100)


def test_eml_body_header_and_attachment() -> None:
    data = (CORPUS / "eml/fake-email-attachment.eml").read_bytes()
    email = EmailUnpacker().unpack(data, mt.EML, _budget())
    assert "Subject:" in email.header and "From:" in email.header
    assert "Lots of whitespace" in email.body
    assert [a.name for a in email.attachments] == ["fake-attachment.txt"]
    body, media_type = email.body_document(render_header=True)
    assert media_type == mt.PLAIN and body.startswith(b"From:")


def test_encoded_word_subject_is_decoded() -> None:
    data = (CORPUS / "eml/mime-word-encoded-subject.eml").read_bytes()
    email = EmailUnpacker().unpack(data, mt.EML, _budget())
    assert "☸☿" in email.header


def test_html_only_body() -> None:
    email = EmailUnpacker().unpack((CORPUS / "eml/mime-html-only.eml").read_bytes(), mt.EML,
                                   _budget())
    assert email.body_media_type == mt.HTML
    body, media_type = email.body_document(render_header=True)
    assert media_type == mt.HTML and b"<pre>From:" in body


def test_utf16_message_without_bom() -> None:
    text = "From: a@example.com\nTo: b@example.com\nSubject: wide\n\nwide body text\n"
    email = EmailUnpacker().unpack(utf16_without_bom(text), mt.EML, _budget())
    assert email.body.strip() == "wide body text"
    assert "\x00" not in email.header


def test_msg_body_and_attachment() -> None:
    data = (CORPUS / "msg/fake-email-attachment.msg").read_bytes()
    email = EmailUnpacker().unpack(data, mt.MSG, _budget())
    assert "Lots of whitespace" in email.body
    assert [a.name for a in email.attachments] == ["fake-attachment.txt"]


def test_attachment_names_never_keep_path_parts() -> None:
    marker = "cc-mail-marker-5521"
    email = EmailUnpacker().unpack(email_with_hostile_attachment_names(marker), mt.EML,
                                   _budget())
    names = sorted(a.name for a in email.attachments)
    assert names == [f"{marker}-a.txt", f"{marker}-b.txt", f"{marker}-c.txt"]


def test_huge_encoded_word_header_is_refused_fast() -> None:
    data = encoded_word_header_email(40_000)  # ~1 MB Subject
    with cpu_budget(1), pytest.raises(BinaryTooLargeError):
        EmailUnpacker().unpack(data, mt.EML, _budget())


def test_large_encoded_word_header_under_the_limit_stays_linear() -> None:
    data = encoded_word_header_email(8_000)  # ~200 KB, under the default header limit
    with cpu_budget(2):
        email = EmailUnpacker().unpack(data, mt.EML, _budget())
    assert "café" in email.header and len(email.header) < 3000


def test_deep_multipart_is_a_fanout_error() -> None:
    with cpu_budget(2), pytest.raises(BinaryFanoutError):
        EmailUnpacker().unpack(deep_multipart_email(5000), mt.EML, _budget())


def test_moderately_deep_multipart_ends_typed_or_bounded() -> None:
    try:
        email = EmailUnpacker(max_parts=2000).unpack(deep_multipart_email(1500), mt.EML,
                                                     _budget())
    except (BinaryFanoutError, EmailParseError):
        return
    assert "innermost" in email.body


def test_huge_encoded_word_in_a_part_header_stays_bounded() -> None:
    words = " ".join("=?utf-8?q?caf=C3=A9?=" for _ in range(40_000))  # ~1 MB parameter
    data = (
        "From: a@example.com\r\nTo: b@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'
        "Content-Type: text/plain\r\n\r\nbody\r\n--b\r\n"
        f'Content-Type: application/octet-stream\r\nContent-Disposition: attachment; '
        f'filename="{words}"\r\n\r\npayload\r\n--b--\r\n'
    ).encode("ascii")
    with cpu_budget(3):
        email = EmailUnpacker().unpack(data, mt.EML, _budget())
    [attachment] = email.attachments
    assert attachment.data == b"payload" and len(attachment.name) <= 255
