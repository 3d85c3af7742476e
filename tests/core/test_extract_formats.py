"""Every format handler over generated inputs: dispatch, markers, page spans and goldens.

The vectors table lists each case with its media type, the handler expected to answer,
marker strings that must appear (and ones that must not), and the page count. Each case's
full output is compared with `tests/golden/<case>.txt`; `pytest --update-golden` rewrites
them for review.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from content_core.extract import extract_text
from tests.core import extract_inputs as inputs
from tests.core import format_inputs as formats
from tests.fixtures.corpus import CORPUS
from tests.fixtures.ole2 import word6_document
from tests.fixtures.wordperfect import wp5_document, wp6_document, wp6_text, wp42_document

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[], bytes]
    media_type: str
    handler: str
    markers: tuple[str, ...]
    absent: tuple[str, ...] = ()
    pages: int = 0


def _const(data: bytes) -> Callable[[], bytes]:
    return lambda: data


VECTORS = [
    Case(
        "pdf_two_pages",
        lambda: inputs.make_pdf(["Golden page one QG101", "Golden page two QG102"]),
        "application/pdf",
        "pdfium",
        ("QG101", "QG102"),
        pages=2,
    ),
    Case(
        # Filled AcroForm values are appended to the page; unchecked boxes are left out.
        "pdf_form",
        inputs.pdf_with_form,
        "application/pdf",
        "pdfium",
        ("Order form QG111", "Form fields:\n- Customer: Ada QG112\n- Express: Yes"),
        absent=("Gift",),
        pages=1,
    ),
    Case(
        "docx_mixed",
        inputs.docx_mixed,
        inputs.DOCX,
        "docx",
        (
            "Running header QG201",
            "# Quarterly report QG203",
            "## Scope QG204",
            "bold QG205",
            "- First bullet QG206",
            "| North | 12 | a\\|b |",
            "Running footer QG202",
        ),
    ),
    Case(
        "xlsx_two_sheets",
        inputs.xlsx_two_sheets,
        inputs.XLSX,
        "xlsx",
        (
            "## Sales QG301",
            "| Widget QG302 | 3 | 2.5 | 2024-01-31 | TRUE |",
            "2024-02-01 13:30:00",
            "Sparse cell QG303",
        ),
        pages=2,
    ),
    Case(
        "pptx_slides",
        inputs.pptx_slides,
        inputs.PPTX,
        "pptx",
        (
            "## Slide 1",
            "### Launch plan QG401",
            "Subtitle QG402",
            "Build QG405",
            "Notes:\nSpeaker note QG406",
            "| Travel QG408 | 100 |",
            "Chart: Revenue chart QG411",
            "|  | Revenue QG410 |",
            "| 2024 | 2 |",
        ),
        pages=4,
    ),
    Case(
        "odt_text",
        inputs.odt_text,
        inputs.ODT,
        "odf",
        (
            "# Field guide QG501",
            "Spaced   words",
            "(Footnote QG503)",
            "- Item one QG504",
            "| key QG506 | value |",
        ),
    ),
    Case(
        # The empty tail repeats a million rows of 1024 cells: it must not be expanded.
        "ods_sheet",
        inputs.ods_sheet,
        inputs.ODS,
        "odf",
        ("## Inventory QG601", "| Bolt QG602 | 5 | 5 |", "| Nut |  |  | QG603 |"),
        pages=1,
    ),
    Case(
        "odp_slides",
        inputs.odp_slides,
        inputs.ODP,
        "odf",
        ("Opening slide QG701", "Notes:\nPresenter QG702", "Closing slide QG703"),
        pages=2,
    ),
    Case(
        "epub_book",
        inputs.epub_book,
        "application/epub+zip",
        "epub",
        ("# First QGG01\n\nOpening text.\n\n# Second QGG02",),
    ),
    Case(
        # ISO 29500 Strict namespaces (Word's "Strict Open XML Document").
        "docx_strict",
        formats.docx_strict,
        inputs.DOCX,
        "docx",
        ("# Strict heading QGS01", "Strict body text QGS02", "| Cell QGS03 | 9 |"),
    ),
    Case(
        "xlsx_strict",
        formats.xlsx_strict,
        inputs.XLSX,
        "xlsx",
        ("## Strict sheet QGS11", "| Strict cell QGS12 | 42 |"),
        pages=1,
    ),
    Case(
        "pptx_strict",
        formats.pptx_strict,
        inputs.PPTX,
        "pptx",
        ("### Strict slide QGS21", "Strict point QGS22"),
        pages=1,
    ),
    Case(
        # Macro-enabled workbook: read like XLSX, macros never run.
        "xlsm_workbook",
        formats.xlsm_workbook,
        "application/vnd.ms-excel.sheet.macroenabled.12",
        "xlsx",
        ("## Sales QG301", "| Widget QG302 | 3 | 2.5 | 2024-01-31 | TRUE |"),
        pages=2,
    ),
    Case(
        # Word 2003 XML: sections in wx:sect, a w:listPr list, a header in w:sectPr; the
        # tracked deletion and the embedded picture's base64 are not text.
        "wordml_2003",
        _const(formats.WORDML_2003_DOC),
        "application/vnd.ms-wordml",
        "wordml",
        (
            "Board header QGW05",
            "# Minutes QGW01",
            "Opening remarks QGW02",
            "- Action item QGW03",
            "| Ada QGW04 | May |",
        ),
        absent=("QGW99", "QGW98"),
    ),
    Case(
        # Word 2007+ flat OPC XML (also `progid="Word.Document"`): parts inline in one file.
        "word_flat_opc",
        _const(formats.WORD_FLAT_OPC_DOC),
        "application/vnd.ms-wordml",
        "wordml",
        ("# Flat title QGW11", "Flat body QGW12"),
    ),
    Case(
        # Excel 2003 XML: typed cells, ss:Index gaps, inline HTML; the cell comment is not
        # cell text.
        "spreadsheetml_2003",
        _const(formats.SPREADSHEETML_2003_DOC),
        "application/vnd.ms-spreadsheetml",
        "spreadsheetml",
        (
            "## Orders QGX01",
            "| Bolt QGX02 | 12 | 2024-01-31 | TRUE |",
            "|  |  | Late QGX03 |  |",
            "## Notes",
            "Remark QGX04",
        ),
        absent=("QGX98",),
        pages=3,
    ),
    Case(
        # Word 95 (nFib 104): 8-bit text from fcMin, a field whose result is kept.
        "doc_word95",
        lambda: word6_document(
            ["Word 95 memo QGY01", "Caf\xe9 cr\xe8me QGY02",
             "See \x13 HYPERLINK x \x14the site QGY03\x15 now"]
        ),
        "application/msword",
        "doc",
        ("Word 95 memo QGY01\nCafé crème QGY02", "See the site QGY03 now"),
        absent=("HYPERLINK",),
    ),
    Case(
        # Word 6.0 (nFib 101) after a fast save: the pieces are stored out of order.
        "doc_word6_fast_saved",
        lambda: word6_document(
            ["First half QGY11 of the text", "second half QGY12"], nfib=101, fast_saved=True
        ),
        "application/msword",
        "doc",
        ("First half QGY11 of the text\nsecond half QGY12",),
    ),
    Case(
        # Word 95 in Russian: the code page follows the document language (cp1251).
        "doc_word95_cyrillic",
        lambda: word6_document(["Отчёт QGY21"], lid=0x0419, encoding="cp1251"),
        "application/msword",
        "doc",
        ("Отчёт QGY21",),
    ),
    Case(
        "wordperfect_6",
        lambda: wp6_document(
            wp6_text(["Report QGZ01 café", "Second well-known QGZ02 straße", "Last QGZ03"])
        ),
        "application/vnd.wordperfect",
        "wordperfect",
        ("Report QGZ01 café\nSecond well-known QGZ02 straße", "Last QGZ03"),
    ),
    Case(
        "wordperfect_5",
        lambda: wp5_document(["Memo QGZ11 café", "Second QGZ12 straße"]),
        "application/vnd.wordperfect",
        "wordperfect",
        ("Memo QGZ11 café\nSecond QGZ12 straße",),
    ),
    Case(
        # No header: read as a WordPerfect 4.2 document area; the header group's text is not
        # part of the body.
        "wordperfect_42",
        lambda: wp42_document(["Memo QGZ21 café", "Second QGZ22 Straße über"]),
        "application/vnd.wordperfect",
        "wordperfect",
        ("Memo QGZ21 café\nSecond QGZ22 Straße über",),
        absent=("Running head",),
    ),
    Case(
        # cp1252 declared in <meta>; script text dropped; data: image keeps its alt only.
        "html_page",
        _const(inputs.HTML_PAGE),
        "text/html",
        "html",
        (
            "# Café guide QG801",
            "€",
            "[link QG802](https://example.org/x)",
            "- Espresso QG803",
            "| Mocha QG804 | 3 |",
            "![logo QG805]",
        ),
        absent=("QG899", "base64"),
    ),
    Case(
        "rtf_doc",
        _const(inputs.RTF_DOC),
        "application/rtf",
        "rtf",
        ("Heading QG901", "Café text QG902", "B1 QG903"),
    ),
    Case(
        "svg_text",
        _const(inputs.SVG_DRAWING),
        "image/svg+xml",
        "svg",
        ("Diagram QGA01", "Label QGA02"),
        absent=("M0 0",),
    ),
    Case(
        "xml_rss",
        _const(inputs.RSS_FEED),
        "application/rss+xml",
        "xml",
        ("  <channel>", "<title>Post QGB02</title>", "<![CDATA[<p>Rich QGB03</p>]]>"),
    ),
    Case(
        "json_doc",
        _const(inputs.JSON_DOC),
        "application/json",
        "json",
        ('  "name": "Widget QGC01"', '"unicode": "café"'),
    ),
    Case(
        "ndjson_records",
        _const(inputs.NDJSON_DOC),
        "application/x-ndjson",
        "json",
        ('"msg": "first QGC02"', '"msg": "second QGC03"'),
    ),
    Case(
        "csv_semicolon",
        _const(inputs.CSV_SEMICOLON),
        "text/csv",
        "csv",
        ("| Name | City | Note |", "| Ada | Zürich | has, comma QGD01 |", "quoted; semi"),
    ),
    Case(
        "tsv_doc",
        _const(inputs.TSV_DOC),
        "text/tab-separated-values",
        "csv",
        ("| alpha QGD02 | 1 |", "| beta | 2\\|3 |"),
    ),
    Case(
        "markdown_doc",
        _const(inputs.MARKDOWN_DOC),
        "text/markdown",
        "markdown",
        ("# Title QGE01", "```python"),
    ),
    Case(
        "text_utf16le_no_bom",
        _const("Plain words QGF01 in UTF-16 without a mark.\n".encode("utf-16-le")),
        "text/plain",
        "text",
        ("Plain words QGF01 in UTF-16",),
    ),
    Case(
        "text_utf16be_bom",
        _const("\ufeffBig endian QGF02 ü".encode("utf-16-be")),
        "text/plain",
        "text",
        ("Big endian QGF02 ü",),
    ),
    Case(
        "text_utf32_bom",
        _const("Thirty-two QGF03 ☸".encode("utf-32")),
        "text/plain",
        "text",
        ("Thirty-two QGF03 ☸",),
    ),
    Case(
        "text_cp1252",
        _const("Der Preis betrug 15,50 € für Kaffee QGF04 und Kuchen.\n".encode("cp1252")),
        "text/plain",
        "text",
        ("15,50 € für Kaffee QGF04",),
    ),
    Case(
        "text_shift_jis",
        _const("名前,年齢\n髙橋淳,30\n山田太郎 QGF05,25\n".encode("cp932")),
        "text/plain",
        "text",
        ("髙橋淳", "山田太郎 QGF05"),
    ),
    Case(
        # A declared charset is only a hint; bytes that are valid UTF-8 win.
        "text_wrong_charset_hint",
        _const("naïve QGF06".encode()),
        "text/plain; charset=iso-8859-1",
        "text",
        ("naïve QGF06",),
    ),
]


def _normalise(text: str) -> str:
    return (
        "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip() + "\n"
    )


@pytest.mark.parametrize("case", VECTORS, ids=[c.id for c in VECTORS])
def test_vectors(case: Case) -> None:
    result = extract_text(case.build(), case.media_type, filename=case.id)
    assert result.handler == case.handler
    for marker in case.markers:
        assert marker in result.text, f"{marker!r} missing from:\n{result.text}"
    for marker in case.absent:
        assert marker not in result.text
    assert len(result.pages) == case.pages
    assert "\x00" not in result.text


@pytest.mark.parametrize("case", VECTORS, ids=[c.id for c in VECTORS])
def test_golden(case: Case, request: pytest.FixtureRequest) -> None:
    actual = _normalise(extract_text(case.build(), case.media_type, filename=case.id).text)
    path = GOLDEN / f"{case.id}.txt"
    if request.config.getoption("--update-golden"):
        path.write_text(actual, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"golden {path} missing; create it with: pytest {__file__} --update-golden")
    assert actual == path.read_text(encoding="utf-8")


def test_pdf_spans_slice_each_page() -> None:
    result = extract_text(inputs.make_pdf(["first QH1", "", "third QH3"]), "application/pdf")
    pages = [result.text[span.start : span.end] for span in result.pages]
    assert [span.page for span in result.pages] == [1, 2, 3]
    assert "QH1" in pages[0] and pages[1] == "" and "QH3" in pages[2]


# Legacy binary Office formats cannot be generated here without the applications, so these
# read the corpus in tests/corpus (see its README and NOTICE for licences).
LEGACY = [
    (
        "doc/fake-doc-emphasized-text.doc",
        "application/msword",
        "doc",
        "I am a bold italic bold-italic text.",
    ),
    ("doc/simple.doc", "application/msword", "doc", "DOYLESTOWN, PA 18901"),
    ("xls/tests-example.xls", "application/vnd.ms-excel", "xls", "Bagpipes are awesome."),
    ("ppt/fake-power-point.ppt", "application/vnd.ms-powerpoint", "ppt", "Adding a Bullet Slide"),
]


@pytest.mark.parametrize(
    ("path", "media_type", "handler", "phrase"), LEGACY, ids=[row[0] for row in LEGACY]
)
def test_legacy_office_from_corpus(path: str, media_type: str, handler: str, phrase: str) -> None:
    data = (CORPUS / path).read_bytes()
    result = extract_text(data, media_type, filename=path)
    assert result.handler == handler
    assert phrase in " ".join(result.text.split())


def test_doc_field_codes_are_dropped() -> None:
    data = (CORPUS / "doc/fake-doc-emphasized-text.doc").read_bytes()
    text = extract_text(data, "application/msword").text
    assert "A Link example" in text and "HYPERLINK" not in text


@pytest.mark.parametrize(
    ("build", "media_type", "plain", "variant", "marker"),
    [
        (
            inputs.docx_mixed,
            inputs.DOCX,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
            "application/vnd.ms-word.document.macroEnabled.main+xml",
            "Quarterly report QG203",
        ),
        (
            inputs.docx_mixed,
            inputs.DOCX,
            "wordprocessingml.document.main+xml",
            "wordprocessingml.template.main+xml",
            "Quarterly report QG203",
        ),
        (
            inputs.pptx_slides,
            inputs.PPTX,
            "presentationml.presentation.main+xml",
            "presentationml.slideshow.main+xml",
            "Launch plan QG401",
        ),
    ],
    ids=["docm", "dotx", "ppsx"],
)
def test_macro_template_and_slideshow_variants(
    build: Callable[[], bytes], media_type: str, plain: str, variant: str, marker: str
) -> None:
    # python-docx/python-pptx refuse these main-part content types; the XML is the same.
    data = formats.with_main_type(build(), plain, variant)
    assert marker in extract_text(data, media_type).text



def _docx_with_inline_image(alt: dict[str, str], after: str) -> bytes:
    """A paragraph "This is a " + an inline picture + `after`, the picture's `wp:docPr`
    carrying the attributes `alt` (descr, title) besides its name."""
    import io

    import docx
    from docx.oxml.ns import qn
    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (8, 6), "teal").save(picture, "PNG")
    document = docx.Document()
    paragraph = document.add_paragraph("This is a ")
    paragraph.add_run().add_picture(picture)
    paragraph.add_run(after)
    [properties] = paragraph._p.iter(qn("wp:docPr"))
    for key, value in alt.items():
        properties.set(key, value)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("alt", "after", "expected"),
    [
        # Word 2007 leaves the inserted file's path in descr.
        ({"descr": "C:\\Users\\ana\\chart QGI1.png"}, "paragraph QGI2.",
         "This is a ![C:\\Users\\ana\\chart QGI1.png] paragraph QGI2."),
        ({"title": "Sales chart QGI3"}, "paragraph QGI4",
         "This is a ![Sales chart QGI3] paragraph QGI4"),
        ({"descr": "Logo QGI5", "title": "Title QGI6"}, ", then more",
         "This is a ![Logo QGI5], then more"),
    ],
    ids=["descr-path", "title-only", "descr-before-title"],
)
def test_docx_inline_image_alt_text_stands_apart(
    alt: dict[str, str], after: str, expected: str
) -> None:
    text = extract_text(_docx_with_inline_image(alt, after), inputs.DOCX).text
    assert expected in text, text
    assert "Picture" not in text  # the docPr name says nothing
