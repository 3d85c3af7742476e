"""EmailUnpacker: bodies, rendered headers, attachments, .msg, and hostile messages."""

from __future__ import annotations

import codecs
import hashlib
import io
from email.message import EmailMessage
from pathlib import Path

import pytest

from content_core.binary import EmailUnpacker
from content_core.binary import media_types as mt
from content_core.binary.archives import ExpansionBudget
from content_core.errors import BinaryFanoutError, BinaryTooLargeError, EmailParseError
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
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


def _process(tmp_path: Path, name: str, data: bytes) -> list:
    from content_core.pipeline.config import ProcessingConfig
    from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
    from content_core.store.blobs import BlobStore

    path = tmp_path / name
    path.write_bytes(data)
    [records] = process_files([FileInput(key=name, path=path, filename=name)],
                              ProcessingConfig(isolate=False),
                              blob_store=BlobStore(tmp_path / "store"))
    return records


def _check_part_failure(records: list, broken: str, good: str | None, body: str) -> None:
    message = records[0]
    assert message.error_type is None and message.kind == "email"
    [failed] = [r for r in records if r.error_type]
    assert failed.filename == broken and failed.error_type == "CorruptFileError"
    assert "unreadable PDF structure" in (failed.error_message or "")
    assert failed.derived_from == (message.artifact_id,)
    [body_row] = [r for r in records if r.kind == "email_body"]
    assert body in (body_row.text or "")
    if good is not None:
        [good_row] = [r for r in records if r.filename == good]
        assert good_row.error_type is None and "good attachment QM22" in (good_row.text or "")


def test_a_truncated_pdf_attachment_is_its_own_failure_row(tmp_path: Path) -> None:
    from email.mime.application import MIMEApplication
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    from tests.fixtures.hostile import pdf_with_text

    message = MIMEMultipart()
    message["Subject"] = "report attached"
    message.attach(MIMEText("message body QM21", "plain"))
    for name, payload in (("report.pdf", pdf_with_text("cut off")[:400]),
                          ("notes.txt", b"good attachment QM22")):
        part = MIMEApplication(payload, "octet-stream")
        part.add_header("Content-Disposition", "attachment", filename=name)
        message.attach(part)
    records = _process(tmp_path, "report.eml", message.as_bytes())
    _check_part_failure(records, "report.pdf", "notes.txt", "message body QM21")


def test_a_truncated_pdf_in_an_outlook_message_is_its_own_failure_row(tmp_path: Path) -> None:
    """No tool here writes .msg: the corpus message's attachment stream (30 bytes) is
    overwritten in place with the first 30 bytes of a PDF."""
    import shutil

    import olefile

    path = tmp_path / "source.msg"
    shutil.copy(CORPUS / "msg/fake-email-attachment.msg", path)
    stream = "__attach_version1.0_#00000000/__substg1.0_37010102"
    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        size = ole.get_size(stream)
        ole.write_stream(stream, b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog"[:size])
    records = _process(tmp_path, "report.msg", path.read_bytes())
    _check_part_failure(records, "fake-attachment.txt", None, "Lots of whitespace")

# ------------------------------------------------ XHTML bodies with inline (cid:) images


def _png(color: str) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (6, 4), color).save(out, "PNG")
    return out.getvalue()


_XHTML = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Title QX7100</title></head>
<body><h1>Rapport QX7101 café</h1>
<p>Voir <img src="cid:logo%40example.org" alt="logo"/> et <img src="cid:photo@example.org"/></p>
<p>Fin QX7102</p></body></html>"""


def _related_email(body_type: str, *, body_name: str | None = None) -> bytes:
    """multipart/related: an (X)HTML body and two images it shows by Content-ID."""
    message = EmailMessage()
    message["From"] = "a@example.org"
    message["To"] = "b@example.org"
    message["Subject"] = "inline images"
    maintype, subtype = body_type.split("/")
    message.set_content(_XHTML.encode("utf-8"), maintype=maintype, subtype=subtype,
                        cte="quoted-printable", disposition="inline", filename=body_name)
    message.set_param("charset", "utf-8")
    message.make_related()
    for cid, color, filename in (("logo@example.org", "red", None),
                                 ("photo@example.org", "blue", "photo.png")):
        message.add_related(_png(color), maintype="image", subtype="png",
                            cid=f"<{cid}>", disposition="inline", filename=filename)
    return message.as_bytes()


@pytest.mark.parametrize(
    ("body_type", "body_name"),
    [("text/html", None), ("application/xhtml+xml", None), ("application/xhtml+xml", "a.xhtml")],
)
def test_xhtml_body_with_inline_images_through_process_files(
    tmp_path: Path, body_type: str, body_name: str | None
) -> None:
    path = tmp_path / "inline.eml"
    path.write_bytes(_related_email(body_type, body_name=body_name))
    [records] = process_files([FileInput(key="k", path=path, filename=path.name)],
                              ProcessingConfig(isolate=False), blob_store=BlobStore(tmp_path / "s"))
    assert [(r.kind, r.media_type, r.filename) for r in records] == [
        ("email", mt.EML, "inline.eml"),
        ("email_body", mt.HTML, "inline.body.html"),
        ("image", mt.PNG, "inline-1.png"),
        ("image", mt.PNG, "photo.png"),
    ]
    assert all(r.error_type is None for r in records)
    body = records[1].text or ""
    assert "# Rapport QX7101 café" in body and "Fin QX7102" in body
    assert "Subject: inline images" in body  # the rendered header, inside the body
    assert "QX7100" not in body  # the <title> stays in the head, out of the text
    # The cid: references now name the child artifacts.
    assert "![logo](inline-1.png)" in body and "](photo.png)" in body
    assert [r.artifact_id for r in records[2:]] == [
        hashlib.sha256(_png(color)).hexdigest() for color in ("red", "blue")
    ]
    # The images are children of the email and carry no text; the body text is there once.
    raw_id = records[0].artifact_id
    assert all(r.derived_from == (raw_id,) and r.text is None for r in records[2:])
    assert sum((r.text or "").count("QX7101") for r in records) == 1


def test_html_body_header_goes_inside_the_body() -> None:
    email = EmailUnpacker().unpack(_related_email("application/xhtml+xml"), mt.EML, _budget())
    document, media_type = email.body_document(render_header=True)
    text = document.decode("utf-8-sig")
    assert media_type == mt.HTML and document.startswith(codecs.BOM_UTF8)
    assert text.startswith("<?xml") and text.index("<pre>From:") > text.index("<body>")


# ------------------------------------ (X)HTML parts beside a plain body (not alternatives)

_MIXED_XHTML = """From: a@example.org
To: b@example.org
Subject: report
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain; charset=us-ascii

Cover note QX7301
--alt
Content-Type: text/html; charset=us-ascii

<p>Cover note QX7301</p>
--alt--
--outer
Content-Type: application/xhtml+xml; charset=utf-8{name}

<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head>
<body><h1>Rapport QX7302</h1><p>Détails QX7303</p></body></html>
--outer--
"""


@pytest.mark.parametrize(
    ("name_param", "filename"),
    [("", "part-1.xhtml"), ('; name="rapport.xhtml"', "rapport.xhtml")],
    ids=["unnamed", "named-inline"],
)
def test_xhtml_part_beside_a_plain_body_is_extracted(
    tmp_path: Path, name_param: str, filename: str
) -> None:
    data = _MIXED_XHTML.format(name=name_param).replace("\n", "\r\n").encode()
    email = EmailUnpacker().unpack(data, mt.EML, _budget())
    assert email.body_media_type == mt.PLAIN and "Cover note QX7301" in email.body
    assert [a.name for a in email.attachments] == [filename]
    records = _process(tmp_path, "report.eml", data)
    [part] = [r for r in records if r.filename == filename]
    assert (part.media_type, part.error_type) == (mt.XHTML, None)
    assert "# Rapport QX7302" in (part.text or "") and "Détails QX7303" in (part.text or "")
    assert part.derived_from == (records[0].artifact_id,)
    # The HTML alternative of the plain body is the same text: it is not kept twice.
    assert sum((r.text or "").count("QX7301") for r in records) == 1
