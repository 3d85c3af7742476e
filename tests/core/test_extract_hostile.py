"""Hostile inputs for the extractors: each ends as a typed error or a bounded result, fast.

Every fixture is generated here. Pitfalls covered: zip bombs by ratio, by declared size and
by overlapping members; size fields that lie; XLSX dimension claims and far-away cells; ODS
repeat counts; JSON nesting; XML entity bombs and external entities; encrypted OOXML;
UTF-16 without a BOM; NULs and lone surrogates reaching the text; truncated OOXML; Word 6
FIB fields and WordPerfect function codes that lie.
"""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from content_core.errors import (
    ContentError,
    EncryptedFileError,
    ExtractionError,
    LimitExceededError,
    UnsafeInputError,
)
from content_core.extract import ExtractOptions, extract_text
from tests.core import extract_inputs as inputs
from tests.core import format_inputs as formats
from tests.fixtures.ole2 import word6_document
from tests.fixtures.wordperfect import wp6_document, wp6_text
from tests.support.budget import cpu_budget

# CPU seconds any hostile case may use (CPU time: a loaded machine does not count).
CPU_LIMIT_S = 5.0


def _docx_with_document(xml_body: bytes) -> bytes:
    """A real DOCX whose word/document.xml is replaced by `xml_body`."""
    source = zipfile.ZipFile(io.BytesIO(inputs.docx_mixed()))
    members = {m.filename: source.read(m) for m in source.infolist()}
    members["word/document.xml"] = xml_body
    return inputs.make_zip(members)


def _timed(call):  # type: ignore[no-untyped-def]
    with cpu_budget(CPU_LIMIT_S):
        return call()


def test_docx_ratio_bomb_is_refused() -> None:
    bomb = _docx_with_document(b" " * (64 * 1024 * 1024))
    assert len(bomb) < 1024 * 1024
    with pytest.raises(LimitExceededError, match="ratio") as caught:
        _timed(lambda: extract_text(bomb, inputs.DOCX))
    assert caught.value.limit == "max_compression_ratio" and caught.value.value > 200


def test_xlsx_over_byte_budget_is_refused() -> None:
    options = ExtractOptions(max_uncompressed_bytes=4 * 1024)
    with pytest.raises(LimitExceededError, match="budget") as caught:
        extract_text(inputs.xlsx_two_sheets(), inputs.XLSX, options=options)
    assert (caught.value.limit, caught.value.maximum) == ("max_uncompressed_bytes", 4 * 1024)


def test_pptx_too_many_members_is_refused() -> None:
    data = inputs.make_zip({f"ppt/junk/{i}.xml": b"<x/>" for i in range(50)})
    with pytest.raises(LimitExceededError, match="members") as caught:
        extract_text(data, inputs.PPTX, options=ExtractOptions(max_zip_members=20))
    assert (caught.value.limit, caught.value.value) == ("max_zip_members", 50)


def _overlapping_zip() -> bytes:
    """Two central-directory entries that both point at the same local member."""
    single = inputs.make_zip({"word/document.xml": b"<w:document/>" * 100})
    eocd_at = single.rindex(b"PK\x05\x06")
    (cd_size, cd_offset) = struct.unpack_from("<II", single, eocd_at + 12)
    entry = single[cd_offset : cd_offset + cd_size]
    twin = entry.replace(b"word/document.xml", b"word/documenX.xml")
    directory = entry + twin
    eocd = bytearray(single[eocd_at:])
    struct.pack_into("<HHII", eocd, 8, 2, 2, len(directory), cd_offset)
    return single[:cd_offset] + directory + bytes(eocd)


def test_overlapping_members_are_refused() -> None:
    with pytest.raises(UnsafeInputError, match="overlap"):
        extract_text(_overlapping_zip(), inputs.DOCX)


def _lying_sizes() -> bytes:
    """A member whose declared uncompressed size is smaller than what it inflates to."""
    data = bytearray(inputs.make_zip({"word/document.xml": b"A" * 100_000}))
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        offset = data.index(signature)
        struct.pack_into("<I", data, offset + size_at, 10)
    return bytes(data)


def test_lying_size_fields_are_an_error() -> None:
    with pytest.raises((ExtractionError, UnsafeInputError)):
        extract_text(_lying_sizes(), inputs.DOCX)


def test_encrypted_ooxml_package_is_refused() -> None:
    fake_cfb = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64 + "EncryptedPackage".encode("utf-16-le")
    )
    with pytest.raises(EncryptedFileError, match="password-protected XLSX"):
        extract_text(fake_cfb, inputs.XLSX)


def _xlsx_with_sheet_xml(sheet_xml: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(inputs.xlsx_two_sheets()))
    members = {m.filename: source.read(m) for m in source.infolist()}
    members["xl/worksheets/sheet1.xml"] = sheet_xml
    return inputs.make_zip(members)


_SHEET_HEAD = (
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b'<dimension ref="A1:XFD1048576"/><sheetData>'
)


def test_xlsx_dimension_claim_is_ignored() -> None:
    # The sheet claims 16384 x 1048576 cells but holds two; openpyxl would pad every row.
    sheet = (
        _SHEET_HEAD + b'<row r="1"><c r="A1" t="inlineStr"><is><t>claim QX71</t></is></c></row>'
        b'<row r="2"><c r="B2"><v>5</v></c></row></sheetData></worksheet>'
    )
    result = _timed(lambda: extract_text(_xlsx_with_sheet_xml(sheet), inputs.XLSX))
    assert "claim QX71" in result.text
    assert len(result.text) < 2000


def test_xlsx_far_away_cells_stop_at_the_cell_budget() -> None:
    sheet = (
        _SHEET_HEAD + b'<row r="1"><c r="A1" t="inlineStr"><is><t>top QX72</t></is></c></row>'
        b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>'
    )
    options = ExtractOptions(max_table_cells=10_000)
    result = _timed(lambda: extract_text(_xlsx_with_sheet_xml(sheet), inputs.XLSX, options=options))
    assert "top QX72" in result.text
    assert "cell limit reached" in result.text


def test_ods_repeated_rows_are_capped() -> None:
    body = (
        '<office:spreadsheet><table:table table:name="S">'
        '<table:table-row table:number-rows-repeated="1000000">'
        '<table:table-cell table:number-columns-repeated="16384"><text:p>x</text:p>'
        "</table:table-cell></table:table-row></table:table></office:spreadsheet>"
    )
    result = _timed(lambda: extract_text(inputs.make_odf(inputs.ODS, body), inputs.ODS))
    assert len(result.text) < 100_000


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "application/json"),
        (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "application/json"),
        (b'{"ok": 1}\n' + b"[" * 50_000 + b"]" * 50_000 + b"\n", "application/x-ndjson"),
    ],
    ids=["array-nesting", "object-nesting", "ndjson-line-nesting"],
)
def test_json_deep_nesting_is_refused(data: bytes, media_type: str) -> None:
    with pytest.raises(LimitExceededError, match="max_json_depth"):
        _timed(lambda: extract_text(data, media_type))


def test_json_brackets_inside_strings_do_not_count() -> None:
    data = b'{"text": "' + b"[" * 10_000 + b'"}'
    assert "[[[" in extract_text(data, "application/json").text


def test_invalid_json_falls_back_to_plain_text() -> None:
    result = extract_text(b'{"unterminated": QX73', "application/json")
    assert (result.handler, result.text) == ("text", '{"unterminated": QX73')


BILLION_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
        for i in range(1, 10)
    )
    + b"]><lolz>&lol9;</lolz>"
)
EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'
)


@pytest.mark.parametrize("media_type", ["application/xml", "application/rss+xml", "image/svg+xml"])
@pytest.mark.parametrize("data", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["laughs", "external"])
def test_xml_entities_are_refused(data: bytes, media_type: str) -> None:
    with pytest.raises(UnsafeInputError):
        _timed(lambda: extract_text(data, media_type))


def test_xml_size_limit() -> None:
    data = b"<r>" + b"x" * 5000 + b"</r>"
    with pytest.raises(LimitExceededError, match="max_xml_bytes"):
        extract_text(data, "application/xml", options=ExtractOptions(max_xml_bytes=1000))


def test_utf16_without_bom_is_not_read_as_utf8_with_nuls() -> None:
    text = "No mark here, QX74, only NUL-laden bytes.\n" * 5
    result = extract_text(text.encode("utf-16-le"), "text/plain")
    assert result.text == text.strip()


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (b'{"s": "lone \\ud800 surrogate", "n": "nul \\u0000 char"}', "application/json"),
        (b"binary\x00junk\x00in text \xff\xfe", "text/plain"),
        (b"a,b\n\x00x,\x00y\n", "text/csv"),
    ],
    ids=["json-escapes", "text-nuls", "csv-nuls"],
)
def test_output_never_holds_nul_or_lone_surrogates(data: bytes, media_type: str) -> None:
    text = extract_text(data, media_type).text
    assert "\x00" not in text
    assert not any("\ud800" <= ch <= "\udfff" for ch in text)
    text.encode("utf-8")  # must not raise


def test_csv_oversized_field_falls_back_to_text() -> None:
    data = b'a,"' + b"x" * 200_000 + b'"\n'
    result = extract_text(data, "text/csv")
    assert result.handler == "text"


def test_truncated_pdf_is_an_extraction_error() -> None:
    data = inputs.make_pdf(["cut short"])[:60]
    with pytest.raises(ExtractionError):
        extract_text(data, "application/pdf")


@pytest.mark.parametrize(
    "media_type",
    ["application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint"],
)
def test_legacy_office_garbage_is_an_extraction_error(media_type: str) -> None:
    with pytest.raises(ExtractionError):
        extract_text(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, media_type)


def test_csv_quote_heavy_sample_sniffs_fast() -> None:
    # csv.Sniffer backtracks for seconds on this; the linear sniffer must not.
    result = _timed(lambda: extract_text(b'"a,' * 20_000, "text/csv"))
    assert result.handler == "csv"


def test_deeply_nested_html_gives_bounded_text() -> None:
    data = b"<div>" * 20_000 + b"deep QX75" + b"</div>" * 20_000
    result = _timed(lambda: extract_text(data, "text/html"))
    assert "deep QX75" in result.text


def _odt_with_doctype(doctype: str, text: str = "dtd body QX76 &amp; more") -> bytes:
    source = zipfile.ZipFile(io.BytesIO(inputs.make_odf(
        inputs.ODT, f"<office:text><text:p>{text}</text:p></office:text>"
    )))
    members = {m.filename: source.read(m) for m in source.infolist()}
    content = members["content.xml"].decode()
    head, rest = content.split("?>", 1)
    members["content.xml"] = (head + "?>" + doctype + rest).encode()
    return inputs.make_zip(members)


def test_odf_with_a_plain_dtd_is_read() -> None:
    # Unusual but harmless: the parser loads and resolves nothing.
    data = _odt_with_doctype('<!DOCTYPE office:document-content [<!ELEMENT x ANY>]>')
    assert "dtd body QX76" in extract_text(data, inputs.ODT).text


def test_odf_small_internal_entity_is_expanded() -> None:
    data = _odt_with_doctype('<!DOCTYPE office:document-content [<!ENTITY co "Acme QX77">]>',
                             "dtd body QX76 &co;")
    assert "dtd body QX76 Acme QX77" in extract_text(data, inputs.ODT).text


def test_odf_declaring_entities_is_refused() -> None:
    laughs = "".join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    data = _odt_with_doctype(f'<!DOCTYPE office:document-content [<!ENTITY l0 "lol">{laughs}]>')
    with pytest.raises(UnsafeInputError, match="billion laughs"):
        _timed(lambda: extract_text(data, inputs.ODT))


def test_truncated_docx_is_a_typed_extraction_error() -> None:
    with pytest.raises(ExtractionError, match="not a readable zip package"):
        extract_text(formats.docx_cut_before_body(), inputs.DOCX)


def _word6_with(offset: int, value: int, **kwargs: object) -> bytes:
    """A Word 95 document whose WordDocument stream has a 32-bit FIB field overwritten."""
    data = bytearray(word6_document(["Hostile QGH01 text"], **kwargs))  # type: ignore[arg-type]
    stream_at = 2 * 512 + 512  # header, FAT, directory: the stream is the first data sector
    struct.pack_into("<I", data, stream_at + offset, value)
    return bytes(data)


@pytest.mark.parametrize(
    ("data", "fast_saved"),
    [
        (_word6_with(0x34, 0x7FFFFFFF), False),  # ccpText far past the stream
        (_word6_with(0x18, 0x7FFFFFF0), False),  # fcMin past the stream
        (_word6_with(0x160, 0x7FFFFFF0, fast_saved=True), True),  # piece table outside
        (_word6_with(0x164, 0xFFFFFFFF, fast_saved=True), True),  # piece table size absurd
    ],
    ids=["ccp-text", "fc-min", "fc-clx", "lcb-clx"],
)
def test_word6_hostile_fib_fields_give_bounded_text_or_typed_error(
    data: bytes, fast_saved: bool
) -> None:
    try:
        result = extract_text(data, "application/msword")
    except ContentError:
        return
    assert len(result.text) <= len(data)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (wp6_document(wp6_text(["Locked QGH11"]), encryption=0x1234), "EncryptedFileError"),
        (b"\xffWPC\x10\x00\x00\x00\x01\x0a\x09\x00\x00\x00\x00\x00text", "CorruptFileError"),
        (b"\xffWPC\xff\xff\x00\x00\x01\x0a\x02\x01\x00\x00\x00\x00", "CorruptFileError"),
        # WordPerfect 4.2: encrypted (a non-zero checksum after FE FF 61 61), or no 4.2 structure.
        (b"\xfe\xff\x61\x61\x12\x34Locked QGH12", "EncryptedFileError"),
        (b"Plain \xc0 text \xff QGH13", "CorruptFileError"),
    ],
    ids=["encrypted", "unknown-version", "document-area-outside", "wp42-encrypted",
         "wp42-broken"],
)
def test_wordperfect_refusals_are_typed(data: bytes, error: str) -> None:
    with pytest.raises(ContentError) as raised:
        extract_text(data, "application/vnd.wordperfect")
    assert raised.value.error_type == error


def test_wordperfect_stray_codes_do_not_stop_the_text() -> None:
    # Group codes whose size or closing byte do not match are stepped over one byte at a time.
    # (WP6 spaces are code 0x80; 0x20 is the letter ß.)
    body = b"\xd4\x00\xff\xffBroken\x80QGH21\xcc\xf0\x01\xcc" + wp6_text(["Then QGH22"])
    text = extract_text(wp6_document(body), "application/vnd.wordperfect").text
    assert "Broken QGH21" in text and "Then QGH22" in text
