"""sniff_media_type: magic bytes, container contents and text shape; corpus accuracy."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from content_core.binary import media_types as mt
from content_core.binary import sniff_media_type
from content_core.binary.artifact import kind_for
from tests.core import extract_inputs as inputs
from tests.core import format_inputs as formats
from tests.fixtures.corpus import CORPUS
from tests.fixtures.hostile import minimal_docx, pdf_with_text, utf16_without_bom
from tests.fixtures.ole2 import word6_document
from tests.fixtures.wordperfect import wp5_document, wp6_document, wp6_text, wp42_document


def _zip(entries: dict[str, bytes], *, stored_first: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        if stored_first:
            archive.writestr(zipfile.ZipInfo("mimetype"), stored_first)
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("a.txt")
        info.size = 5
        archive.addfile(info, io.BytesIO(b"hello"))
    return buffer.getvalue()


def _ole2(stream_name: str) -> bytes:
    # The sniffer reads directory entry names (UTF-16LE) out of a compound file.
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + stream_name.encode("utf-16-le")


def _image(fmt: str) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), "red").save(buffer, format=fmt)
    return buffer.getvalue()


def _heif(brand: bytes, compatible: bytes) -> bytes:
    box = b"ftyp" + brand + b"\x00\x00\x00\x00" + compatible
    return len(box + b"1234").to_bytes(4, "big") + box + b"\x00" * 32


VECTORS = [
    # (id, bytes, filename hint, expected)
    ("pdf", pdf_with_text("sniff"), None, mt.PDF),
    ("pdf-after-junk", b"\r\n" * 10 + pdf_with_text("x"), None, mt.PDF),
    ("png", _image("PNG"), None, mt.PNG),
    ("jpeg", _image("JPEG"), None, mt.JPEG),
    ("gif", _image("GIF"), None, mt.GIF),
    ("webp", _image("WEBP"), None, mt.WEBP),
    ("tiff", _image("TIFF"), None, mt.TIFF),
    ("bmp", _image("BMP"), None, mt.BMP),
    ("heic", _heif(b"heic", b"mif1heic"), None, mt.HEIC),
    ("heif-mif1", _heif(b"mif1", b"mif1"), None, mt.HEIF),
    ("avif", _heif(b"avif", b"mif1avif"), None, mt.AVIF),
    ("mp4-is-not-image", _heif(b"isom", b"mp42"), None, mt.OCTET_STREAM),
    ("svg", b'<svg xmlns="http://www.w3.org/2000/svg"/>', None, mt.SVG),
    ("docx", minimal_docx("x"), "x.zip", mt.DOCX),
    ("xlsx", _zip({"[Content_Types].xml": b"<x/>", "xl/workbook.xml": b"<w/>"}), None, mt.XLSX),
    ("pptx", _zip({"[Content_Types].xml": b"<x/>", "ppt/presentation.xml": b"<p/>"}), None,
     mt.PPTX),
    ("odt", _zip({"content.xml": b"<x/>"},
                 stored_first="application/vnd.oasis.opendocument.text"), None, mt.ODT),
    ("ods", _zip({"content.xml": b"<x/>"},
                 stored_first="application/vnd.oasis.opendocument.spreadsheet"), None, mt.ODS),
    ("odp", _zip({"content.xml": b"<x/>"},
                 stored_first="application/vnd.oasis.opendocument.presentation"), None, mt.ODP),
    ("epub", _zip({"META-INF/container.xml": b"<x/>"}, stored_first="application/epub+zip"),
     None, mt.EPUB),
    ("plain-zip", _zip({"a.txt": b"a"}), "a.docx", mt.ZIP),
    # Macro-enabled packages are told by their main content type, not by the name.
    ("xlsm", formats.xlsm_workbook(), "book.zip", mt.XLSM),
    ("docm", formats.with_main_type(inputs.docx_mixed(), formats.DOCX_MAIN, formats.DOCM_MAIN),
     None, mt.DOCM),
    ("pptm", formats.with_main_type(inputs.pptx_slides(), formats.PPTX_MAIN, formats.PPTM_MAIN),
     None, mt.PPTM),
    ("dotx-is-docx", formats.with_main_type(
        inputs.docx_mixed(), formats.DOCX_MAIN,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"),
     None, mt.DOCX),
    ("docx-strict", formats.docx_strict(), None, mt.DOCX),
    ("xlsx-strict", formats.xlsx_strict(), None, mt.XLSX),
    # A download cut before the central directory, and one cut before the main part too:
    # the local headers (names, [Content_Types].xml) still say DOCX.
    ("docx-truncated", formats.truncated(inputs.docx_mixed()), None, mt.DOCX),
    ("docx-cut-before-body", formats.docx_cut_before_body(), None, mt.DOCX),
    ("xlsm-truncated", formats.truncated(formats.xlsm_workbook()), None, mt.XLSM),
    ("zip-truncated", formats.truncated(_zip({"a.txt": b"a" * 100, "b/c.txt": b"c"})), None,
     mt.ZIP),
    ("tar", _tar(), None, mt.TAR),
    ("gzip", b"\x1f\x8b\x08\x00" + b"\x00" * 20, None, mt.GZIP),
    ("7z", b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 24, None, mt.SEVEN_ZIP),
    ("doc", _ole2("WordDocument"), None, mt.DOC),
    ("doc-word95", word6_document(["Word 95"]), None, mt.DOC),
    ("wordperfect-6", wp6_document(wp6_text(["WP6 text"])), None, mt.WORDPERFECT),
    ("wordperfect-5", wp5_document(["WP5 text"]), "x.txt", mt.WORDPERFECT),
    # WordPerfect 4.2 has no header: told by its structure (groups closed by their own code).
    ("wordperfect-4.2", wp42_document(["WP4.2 text, café"]), None, mt.WORDPERFECT),
    ("wordperfect-4.2-encrypted", b"\xfe\xff\x61\x61\x12\x34" + bytes(range(1, 200)), None,
     mt.WORDPERFECT),
    # 8-bit text with the same shape: two "ü" bracket a variable group, "àbcà" a fixed one
    # (but with text, not binary, between them); UTF-8 "ééé" closes a fixed group too.
    ("cp1252-paired-letters", "Grüße aus München, àbcà.\n".encode("cp1252"), None, mt.PLAIN),
    ("utf8-paired-letters", "ééé naïve\n".encode(), None, mt.PLAIN),
    # WordPerfect Corp's other files (here a WPG graphic, file type 0x16) are not documents.
    ("wordperfect-graphic", b"\xffWPC\x10\x00\x00\x00\x01\x16\x01\x00" + bytes(range(256)),
     None, mt.OCTET_STREAM),
    ("xls", _ole2("Workbook"), None, mt.XLS),
    ("ppt", _ole2("PowerPoint Document"), None, mt.PPT),
    ("msg", _ole2("__substg1.0_0037001F"), None, mt.MSG),
    ("encrypted-ooxml-hint", _ole2("EncryptedPackage"), "secret.docx", mt.DOCX),
    ("rtf", b"{\\rtf1\\ansi hello}", None, mt.RTF),
    ("eml", b"From: a@b.c\r\nTo: d@e.f\r\nSubject: hi\r\n\r\nbody", None, mt.EML),
    ("eml-utf16-no-bom", utf16_without_bom("From: a@b.c\nTo: d@e.f\nSubject: s\n\nbody"), None,
     mt.EML),
    ("html", b"<!DOCTYPE html><html><body>x</body></html>", None, mt.HTML),
    ("html-fragment", b"<div><p>fragment</p></div>", None, mt.HTML),
    ("xhtml", b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"></html>', None,
     mt.XHTML),
    ("xml", b'<?xml version="1.0"?><root><a>1</a></root>', None, mt.XML),
    ("rss", b'<?xml version="1.0"?><rss version="2.0"><channel/></rss>', None, mt.RSS),
    ("wordml-2003", formats.WORDML_2003_DOC, "letter.xml", mt.WORDML_2003),
    ("spreadsheetml-2003", formats.SPREADSHEETML_2003_DOC, "sheet.xml", mt.SPREADSHEETML_2003),
    ("word-flat-opc", b'<?xml version="1.0"?><?mso-application progid="Word.Document"?>'
     b'<pkg:package xmlns:pkg="http://schemas.microsoft.com/office/2006/xmlPackage"/>', None,
     mt.WORDML_2003),
    ("mso-pi-without-office-root", b'<?xml version="1.0"?><?mso-application '
     b'progid="Excel.Sheet"?><data/>', None, mt.XML),
    ("mso-pi-other-application", b'<?xml version="1.0"?><?mso-application '
     b'progid="InfoPath.Document"?><my:form xmlns:my="urn:x"/>', None, mt.XML),
    ("json", b'{"a": [1, 2, {"b": null}]}', None, mt.JSON),
    ("ndjson", b'{"a": 1}\n{"a": 2}\n{"a": 3}\n', None, mt.NDJSON),
    ("csv", b"a,b,c\n1,2,3\n4,5,6\n", None, mt.CSV),
    ("csv-quoted", b'a,b\n"x, y",2\n"z",3\n', None, mt.CSV),
    ("tsv", b"a\tb\tc\n1\t2\t3\n", None, mt.TSV),
    ("markdown-by-hint", b"Some words\n", "notes.md", mt.MARKDOWN),
    ("markdown-by-headings", b"# Title\n\ntext\n\n## Part\n", None, mt.MARKDOWN),
    ("txt-hint-beats-commas", b"a,b\nc,d\n", "notes.txt", mt.PLAIN),
    ("code-hint-beats-headings", b"# setup\nx = 1\n# run\nprint(x)\n", "run.py", mt.PLAIN),
    ("plain", "plain words, naïve café\n".encode(), None, mt.PLAIN),
    ("utf16-no-bom", utf16_without_bom("I love fuzzy blankets\n"), None, mt.PLAIN),
    ("utf16-bom", "\ufeffhello text".encode("utf-16-le"), None, mt.PLAIN),
    ("utf32", "\ufeffhello".encode("utf-32"), None, mt.PLAIN),
    ("cp1252", "Der Preis betrug 15,50 €.".encode("cp1252"), None, mt.PLAIN),
    ("empty", b"", None, mt.EMPTY),
    ("binary-junk", bytes(range(256)) * 4, None, mt.OCTET_STREAM),
]


@pytest.mark.parametrize(
    ("data", "filename", "expected"),
    [pytest.param(d, f, e, id=i) for i, d, f, e in VECTORS],
)
def test_sniff_vectors(data: bytes, filename: str | None, expected: str) -> None:
    assert sniff_media_type(data, filename=filename) == expected


@pytest.mark.parametrize(
    ("media_type", "kind"),
    [
        (mt.DOCM, "docx"),
        (mt.XLSM, "xlsx"),
        (mt.PPTM, "pptx"),
        (mt.WORDPERFECT, "wordperfect"),
        (mt.WORDML_2003, "wordml"),
        (mt.SPREADSHEETML_2003, "spreadsheetml"),
    ],
)
def test_new_media_types_have_a_document_kind(media_type: str, kind: str) -> None:
    # An unknown kind ("binary") is given no text by the pipeline.
    assert kind_for(media_type) == kind


def test_default_is_returned_for_unknown_binary() -> None:
    assert sniff_media_type(b"\x00\x01\x02\x03" * 50, default="x/unknown") == "x/unknown"


def test_extension_never_decides_binary_formats() -> None:
    # A PDF named .docx is a PDF; a zip named .pdf is a zip.
    assert sniff_media_type(pdf_with_text("x"), filename="report.docx") == mt.PDF
    assert sniff_media_type(_zip({"a.txt": b"a"}), filename="report.pdf") == mt.ZIP


def test_corpus_accuracy() -> None:
    """Sniff every corpus file against MANIFEST.tsv's true type (goal: at least 99 %)."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        pytest.fail(f"corpus not found at {CORPUS}")
    rows = [line.split("\t") for line in manifest.read_text().splitlines()[1:] if line]
    misses = []
    for row in rows:
        truth = mt.base_media_type(row[1])
        path = CORPUS / row[0]
        got = sniff_media_type(path.read_bytes(), filename=path.name)
        if got != truth:
            misses.append((row[0], truth, got))
    accuracy = 1 - len(misses) / len(rows)
    print(f"sniff accuracy {accuracy:.1%} over {len(rows)} corpus files; misses: {misses}")
    assert accuracy >= 0.99, misses


def test_paragraphs_with_one_comma_each_are_prose_not_csv() -> None:
    # A contract handed to RAG.index under a name with no extension: each paragraph holds one
    # semicolon and one comma, which once made it a CSV (and its text a Markdown table).
    prose = "\n\n".join(
        f"Section {i}. The supplier ships lot {i} in the first week of each month; each crate "
        "has its own packing list, signed by the carrier on arrival."
        for i in range(1, 6)
    ).encode()
    assert sniff_media_type(prose, filename="contract") == mt.PLAIN
    # A table without an extension is still one: short cells beside the long ones.
    table = b"id,name,comment\n1,Ada,first of the list and the longest comment here\n2,Bo,ok\n"
    assert sniff_media_type(table, filename="export") == mt.CSV
