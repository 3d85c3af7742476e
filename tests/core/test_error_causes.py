"""One error type per cause: failure rows record EncryptedFileError, CorruptFileError,
UnsupportedFormatError, LimitExceededError or UnsafeInputError, whatever the format.

Every password-protected format is generated here (or taken from the corpus) and must end as
an EncryptedFileError row whose message names the format, so that one filter lists every file
that needs a password.
"""

from __future__ import annotations

import io
import shutil
import struct
import zipfile
from collections.abc import Callable
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import pytest

from content_core.errors import (
    CAUSES,
    BinaryFanoutError,
    BinaryTooLargeError,
    ContentError,
    CorruptPdfError,
    EncryptedPdfError,
    ExtractionError,
    LimitExceededError,
    StageTimeoutError,
    UnsupportedBinaryError,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.sandbox import WorkerTimeoutError
from content_core.store.blobs import BlobStore
from tests.fixtures.corpus import CORPUS, manifest_rows
from tests.fixtures.hostile import minimal_docx, pdf_with_text, zip_flagged_encrypted

CAUSE_NAMES = {cls.__name__ for cls in CAUSES}
PASSWORD = "cc-password-6620"


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (EncryptedPdfError("x"), "EncryptedFileError"),
        (CorruptPdfError("x"), "CorruptFileError"),
        (ExtractionError("x"), "CorruptFileError"),
        (UnsupportedBinaryError("x"), "UnsupportedFormatError"),
        (BinaryTooLargeError("x"), "LimitExceededError"),
        (BinaryFanoutError("x"), "LimitExceededError"),
        (WorkerTimeoutError("x"), "LimitExceededError"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, ContentError) else value,
)
def test_the_old_types_are_subclasses_of_their_cause(error: ContentError, cause: str) -> None:
    assert error.error_type == cause
    assert error.error_class == type(error).__name__


def test_a_stage_timeout_is_a_limit_recorded_under_its_own_name() -> None:
    error = StageTimeoutError("chunks: over the 60 s budget")
    assert isinstance(error, LimitExceededError)  # caught with the other limits
    assert error.error_type == error.error_class == "StageTimeoutError"


def test_limit_errors_say_which_limit_and_value() -> None:
    error = LimitExceededError("too many pages", limit="max_pdf_pages", value=12, maximum=10)
    assert (error.limit, error.value, error.maximum) == ("max_pdf_pages", 12, 10)


# ------------------------------------------------------------------------ encrypted inputs


def _encrypted_odt() -> bytes:
    """An ODT as LibreOffice writes one with a password: content.xml is ciphertext and the
    manifest describes it with `manifest:encryption-data`."""
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
        ' manifest:version="1.3">'
        '<manifest:file-entry manifest:full-path="/" '
        'manifest:media-type="application/vnd.oasis.opendocument.text"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml" '
        'manifest:size="1024"><manifest:encryption-data manifest:checksum-type="SHA1/1K" '
        'manifest:checksum="aGVsbG8="><manifest:algorithm manifest:algorithm-name='
        '"http://www.w3.org/2001/04/xmlenc#aes256-cbc" manifest:initialisation-vector="aGk="/>'
        '<manifest:key-derivation manifest:key-derivation-name="PBKDF2" manifest:key-size="32" '
        'manifest:iteration-count="100000" manifest:salt="c2FsdA=="/>'
        "</manifest:encryption-data></manifest:file-entry></manifest:manifest>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text",
            compress_type=zipfile.ZIP_STORED,
        )
        archive.writestr("META-INF/manifest.xml", manifest)
        archive.writestr("content.xml", bytes(range(256)) * 4)
    return buffer.getvalue()


def _ole_with_stream_edit(tmp: Path, source: str, stream: str,
                          edit: Callable[[bytearray], None]) -> bytes:
    """A corpus OLE2 file with one stream edited in place (same size)."""
    import olefile

    path = tmp / Path(source).name
    shutil.copy(CORPUS / source, path)
    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        data = bytearray(ole.openstream(stream).read())
        edit(data)
        ole.write_stream(stream, bytes(data))
    return path.read_bytes()


def _set_doc_encrypted(word: bytearray) -> None:
    (flags,) = struct.unpack_from("<H", word, 0x0A)
    struct.pack_into("<H", word, 0x0A, flags | 0x0100)  # FIB fEncrypted


def _add_xls_filepass(workbook: bytearray) -> None:
    """Turn the WRITEACCESS record of the globals into FILEPASS, the record an encrypted
    workbook carries."""
    position = 0
    while True:
        kind, length = struct.unpack_from("<HH", workbook, position)
        if kind == 0x005C:
            struct.pack_into("<H", workbook, position, 0x002F)
            return
        position += 4 + length


def _ooxml_encrypted(plain: bytes) -> bytes:
    """A real password-protected OOXML package (ECMA-376 agile encryption, as Office writes)."""
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain)).encrypt(PASSWORD, out)
    return out.getvalue()


def _pptx() -> bytes:
    from pptx import Presentation

    buffer = io.BytesIO()
    Presentation().save(buffer)
    return buffer.getvalue()


def _xlsx() -> bytes:
    from openpyxl import Workbook

    buffer = io.BytesIO()
    Workbook().save(buffer)
    return buffer.getvalue()


def _pgp_email() -> bytes:
    """A PGP/MIME encrypted message (RFC 3156): a control part and the armored ciphertext."""
    message = MIMEMultipart("encrypted", protocol="application/pgp-encrypted")
    message["Subject"] = "encrypted"
    message.attach(MIMEApplication(b"Version: 1\n", "pgp-encrypted"))
    armored = b"-----BEGIN PGP MESSAGE-----\n\nhQEMA2N9oWBghPDJAQf+\n-----END PGP MESSAGE-----\n"
    part = MIMEApplication(armored, "octet-stream")
    part.add_header("Content-Disposition", "inline", filename="encrypted.asc")
    message.attach(part)
    message.attach(MIMEText("unencrypted note QE55", "plain"))
    return message.as_bytes()


# (file name, how to make it, the format word the message must name)
ENCRYPTED: list[tuple[str, Callable[[Path], bytes], str]] = [
    ("locked.pdf", lambda _: pdf_with_text("x", user_password=PASSWORD, owner_password="o"),
     "PDF"),
    ("locked.zip", lambda _: zip_flagged_encrypted(), "zip"),
    ("locked.7z", lambda _: (CORPUS / "7z/bla.encrypted.7z").read_bytes(), "7z"),
    ("locked.docx", lambda _: _ooxml_encrypted(minimal_docx("secret")), "DOCX"),
    ("locked.pptx", lambda _: _ooxml_encrypted(_pptx()), "PPTX"),
    ("locked.xlsx", lambda _: _ooxml_encrypted(_xlsx()), "XLSX"),
    ("corpus-locked.xlsx",
     lambda _: (CORPUS / "xlsx/password_protected.xlsx").read_bytes(), "XLSX"),
    ("locked.doc",
     lambda tmp: _ole_with_stream_edit(tmp, "doc/simple.doc", "WordDocument",
                                       _set_doc_encrypted), "DOC"),
    ("locked.xls",
     lambda tmp: _ole_with_stream_edit(tmp, "xls/tests-example.xls", "Workbook",
                                       _add_xls_filepass), "XLS"),
    ("locked.odt", lambda _: _encrypted_odt(), "ODT"),
    ("pgp.eml", lambda _: _pgp_email(), "PGP"),
    ("pgp.msg", lambda _: (CORPUS / "msg/fake-encrypted.msg").read_bytes(), "PGP"),
]


@pytest.fixture(scope="module")
def encrypted_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[ArtifactRecord]]:
    root = tmp_path_factory.mktemp("encrypted")
    inputs = []
    for name, make, _ in ENCRYPTED:
        path = root / "raw" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(make(root))
        inputs.append(FileInput(key=name, path=path, filename=name))
    results = process_files(inputs, ProcessingConfig(isolate=False),
                            blob_store=BlobStore(root / "store"))
    return {name: records for (name, _, _), records in zip(ENCRYPTED, results, strict=True)}


@pytest.mark.parametrize(("name", "word"), [(n, w) for n, _, w in ENCRYPTED],
                         ids=[n for n, _, _ in ENCRYPTED])
def test_every_password_protected_format_is_an_encrypted_file_error(
    encrypted_run: dict[str, list[ArtifactRecord]], name: str, word: str
) -> None:
    records = encrypted_run[name]
    failures = [r for r in records if r.error_type is not None]
    assert failures, records
    assert {r.error_type for r in failures} == {"EncryptedFileError"}, [
        (r.filename, r.error_type, r.error_message) for r in failures]
    assert all(word in (r.error_message or "") for r in failures), failures


def test_an_encrypted_part_leaves_the_message_and_its_other_parts(
    encrypted_run: dict[str, list[ArtifactRecord]],
) -> None:
    records = encrypted_run["pgp.eml"]
    assert records[0].error_type is None and records[0].kind == "email"
    [body] = [r for r in records if r.kind == "email_body"]
    assert "unencrypted note QE55" in (body.text or "")
    [locked] = [r for r in records if r.error_type]
    assert locked.filename == "encrypted.asc" and locked.derived_from == (records[0].artifact_id,)


# --------------------------------------------------------------------------------- corpus


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[ArtifactRecord]]:
    rows = manifest_rows()
    inputs = [FileInput(key=row["path"], path=CORPUS / row["path"],
                        filename=Path(row["path"]).name) for row in rows]
    results = process_files(inputs, ProcessingConfig(workers=2),
                            blob_store=BlobStore(tmp_path_factory.mktemp("store")))
    return {row["path"]: records for row, records in zip(rows, results, strict=True)}


@pytest.mark.slow
def test_corpus_failures_are_only_the_five_causes(
    corpus_run: dict[str, list[ArtifactRecord]],
) -> None:
    rows = [r for records in corpus_run.values() for r in records if r.error_type]
    # A 0-byte file is an EmptyFileError row: an answer (DESIGN, "Empty is an answer"), not
    # a failure cause; it is recorded only for files with no bytes.
    empty = [r for r in rows if r.error_type == "EmptyFileError"]
    assert all(r.kind == "empty" for r in empty), empty
    recorded = {r.error_type for r in rows if r.error_type != "EmptyFileError"}
    assert recorded <= CAUSE_NAMES, recorded


@pytest.mark.slow
def test_every_corpus_file_that_needs_a_password_is_an_encrypted_file_error(
    corpus_run: dict[str, list[ArtifactRecord]],
) -> None:
    needs_password = [row["path"] for row in manifest_rows()
                      if row["notes"].startswith("ENCRYPTED")
                      and "owner password only" not in row["notes"]]
    assert len(needs_password) == 3, needs_password
    formats = {"7z": "7z", "pdf": "PDF", "xlsx": "XLSX"}
    for path in needs_password:
        raw = corpus_run[path][0]
        assert raw.error_type == "EncryptedFileError", (path, raw.error_type)
        assert formats[path.split("/")[0]] in (raw.error_message or ""), raw.error_message
    # The PGP/MIME Outlook message: the message row stands, its ciphertext part needs a key.
    msg = corpus_run["msg/fake-encrypted.msg"]
    assert msg[0].error_type is None
    assert [r.error_type for r in msg if r.error_type] == ["EncryptedFileError"]
