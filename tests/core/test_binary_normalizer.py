"""BinaryNormalizer: routing, fan-out with derived_from chains, limits, renditions."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest

from content_core.binary import BinaryArtifact, BinaryConfig, BinaryNormalizer, GotenbergConverter
from content_core.binary import media_types as mt
from content_core.errors import BinaryTooLargeError, EncryptedPdfError
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import (
    email_with_hostile_attachment_names,
    minimal_docx,
    nested_zips,
    pdf_with_text,
    wide_zip,
)
from tests.support.gotenberg_server import GotenbergServer


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_pdf_is_one_artifact_with_pages() -> None:
    data = pdf_with_text("page\n" * 100)
    [artifact] = await BinaryNormalizer().normalise(data, declared_media_type="text/plain",
                                                     filename="r.pdf")
    assert (artifact.kind, artifact.media_type, artifact.page_count) == ("pdf", mt.PDF, 2)
    assert artifact.derived_from == () and artifact.bytes == data


async def test_nested_zip_chain_points_back_to_the_raw_file() -> None:
    data = nested_zips(3, "nested marker 1187")
    artifacts = await BinaryNormalizer().normalise(data, filename="outer.zip")
    kinds = [a.kind for a in artifacts]
    assert kinds == ["archive", "archive", "archive", "text"]
    leaf = artifacts[-1]
    assert leaf.derived_from == tuple(_sha(a.bytes) for a in artifacts[:-1])
    assert b"nested marker 1187" in leaf.bytes


async def test_recursion_depth_limit_records_a_failure() -> None:
    config = BinaryConfig(max_recursion_depth=2)
    artifacts = await BinaryNormalizer(config=config).normalise(nested_zips(4, "m"),
                                                                filename="deep.zip")
    failed = [a for a in artifacts if a.error_type]
    assert [a.error_type for a in failed] == ["LimitExceededError"]
    assert "max_recursion_depth" in (failed[0].error_message or "")
    assert artifacts[0].error_type is None  # the raw file itself is fine


async def test_member_count_limit_keeps_what_was_read() -> None:
    config = BinaryConfig(max_expanded_files=10)
    artifacts = await BinaryNormalizer(config=config).normalise(wide_zip(40), filename="w.zip")
    members = [a for a in artifacts[1:] if a.error_type is None]
    assert len(members) == 10
    assert artifacts[-1].error_type == "LimitExceededError" and artifacts[-1].bytes == b""
    assert "max_expanded_files" in (artifacts[-1].error_message or "")


async def test_a_bad_member_does_not_stop_its_siblings() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("good-1.txt", "first good member")
        archive.writestr("locked.pdf", pdf_with_text("x", user_password="pw", owner_password="o"))
        archive.writestr("good-2.txt", "second good member")
    artifacts = await BinaryNormalizer().normalise(buffer.getvalue(), filename="mixed.zip")
    by_name = {a.filename: a for a in artifacts}
    assert by_name["locked.pdf"].error_type == "EncryptedFileError"
    assert "PDF" in (by_name["locked.pdf"].error_message or "")
    assert by_name["locked.pdf"].bytes  # the member's bytes are kept with the failure
    assert by_name["good-1.txt"].error_type is None and by_name["good-2.txt"].error_type is None


async def test_raw_file_errors_raise() -> None:
    with pytest.raises(EncryptedPdfError):
        await BinaryNormalizer().normalise(
            pdf_with_text("x", user_password="pw", owner_password="o"), filename="l.pdf"
        )
    with pytest.raises(BinaryTooLargeError):
        await BinaryNormalizer(config=BinaryConfig(max_bytes=10)).normalise(b"x" * 11)


async def test_email_fans_out_into_body_and_attachments() -> None:
    marker = "cc-norm-marker-3310"
    artifacts = await BinaryNormalizer().normalise(
        email_with_hostile_attachment_names(marker), filename="m.eml"
    )
    assert artifacts[0].kind == "email"
    body = artifacts[1]
    assert body.kind == "email_body" and body.bytes.startswith(b"From: a@example.com")
    assert marker.encode() in body.bytes
    attachments = artifacts[2:]
    assert {a.filename for a in attachments} == {f"{marker}-a.txt", f"{marker}-b.txt",
                                                  f"{marker}-c.txt"}
    assert all(a.derived_from == (_sha(artifacts[0].bytes),) for a in artifacts[1:])


async def test_email_header_rendering_can_be_switched_off() -> None:
    data = (CORPUS / "eml/fake-email.eml").read_bytes()
    config = BinaryConfig(email_render_header=False)
    artifacts = await BinaryNormalizer(config=config).normalise(data, filename="f.eml")
    assert not artifacts[1].bytes.startswith(b"From:")


async def test_images_get_png_renditions() -> None:
    artifacts = await BinaryNormalizer().normalise((CORPUS / "bmp/hopper.bmp").read_bytes(),
                                                    filename="hopper.bmp")
    assert [(a.kind, a.media_type, a.rendition) for a in artifacts] == [
        ("image", mt.BMP, False), ("image", mt.PNG, True)
    ]
    assert artifacts[1].filename == "hopper.png"


async def test_wrap_text_as_pdf() -> None:
    config = BinaryConfig(wrap_text_as_pdf=True)
    artifacts = await BinaryNormalizer(config=config).normalise(b"wrapped words\n" * 10,
                                                                filename="a.txt")
    assert artifacts[1].media_type == mt.PDF and artifacts[1].rendition
    assert artifacts[1].page_count == 1


async def test_normalize_disabled_only_sniffs() -> None:
    data = (CORPUS / "zip/simple.zip").read_bytes()
    artifacts = await BinaryNormalizer(config=BinaryConfig(normalize_enabled=False)).normalise(
        data, filename="s.zip"
    )
    assert [(a.kind, a.media_type) for a in artifacts] == [("archive", mt.ZIP)]


async def test_office_rendition_through_gotenberg() -> None:
    with GotenbergServer(use_soffice=False) as server:
        normalizer = BinaryNormalizer(
            config=BinaryConfig(office_converter="gotenberg", gotenberg_url=server.url),
            office=GotenbergConverter(url=server.url),
        )
        artifacts = await normalizer.normalise(minimal_docx("office"), filename="o.docx")
    assert [(a.kind, a.rendition) for a in artifacts] == [("docx", False), ("pdf", True)]
    assert artifacts[0].page_count == artifacts[1].page_count == 1


async def test_office_conversion_failure_is_recorded_and_the_document_stays() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    normalizer = BinaryNormalizer(office=GotenbergConverter(url=f"http://127.0.0.1:{port}"))
    artifacts = await normalizer.normalise(minimal_docx("office"), filename="o.docx")
    assert artifacts[0].error_type is None
    assert artifacts[1].error_type == "OfficeConversionError" and artifacts[1].rendition


def test_artifact_is_frozen() -> None:
    artifact = BinaryArtifact(bytes=b"x", media_type=mt.PLAIN, filename="x", kind="text")
    with pytest.raises(ValueError):
        artifact.kind = "other"  # type: ignore[misc]


def test_package_exports_resolve() -> None:
    import content_core
    import content_core.binary as binary

    expected = {
        "ArchiveUnpacker", "BinaryArtifact", "BinaryConfig", "BinaryNormalizer", "EmailUnpacker",
        "GotenbergConverter", "ImageNormalizer", "LibreOfficeConverter", "NoOpOfficeConverter",
        "NormalisedImage", "OFFICE_MEDIA_TYPES", "OfficeConverter", "PdfGuard",
        "build_office_converter", "sniff_media_type",
    }
    assert set(binary.__all__) == expected
    for name in expected:
        assert getattr(binary, name) is getattr(content_core, name)


def test_binary_config_has_every_seed_field() -> None:
    fields = set(BinaryConfig.model_fields)
    assert {
        "normalize_enabled", "max_bytes", "max_recursion_depth", "max_expanded_files",
        "max_uncompressed_bytes", "wrap_text_as_pdf", "email_render_header", "office_converter",
        "gotenberg_url", "gotenberg_timeout_s", "libreoffice_path", "libreoffice_timeout_s",
    } <= fields
    with pytest.raises(ValueError):
        BinaryConfig(office_converter="word")  # type: ignore[arg-type]


async def test_the_same_bytes_are_listed_once_per_raw_file() -> None:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("logo.txt", "same bytes")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a/logo.txt", "same bytes")
        archive.writestr("b/logo-copy.txt", "same bytes")
        archive.writestr("inner.zip", inner.getvalue())
        archive.writestr("inner-again.zip", inner.getvalue())
    artifacts = await BinaryNormalizer().normalise(buffer.getvalue(), filename="dups.zip")
    ids = [_sha(a.bytes) for a in artifacts]
    assert len(ids) == len(set(ids)) == 3  # outer zip, logo.txt, inner.zip

