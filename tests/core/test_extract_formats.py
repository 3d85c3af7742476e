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
from tests.fixtures.corpus import CORPUS

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


def _with_main_type(data: bytes, plain: str, variant: str) -> bytes:
    import io
    import zipfile

    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            body = source.read(member)
            if member.filename == "[Content_Types].xml":
                assert plain.encode() in body
                body = body.replace(plain.encode(), variant.encode())
            target.writestr(member.filename, body)
    return out.getvalue()


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
    data = _with_main_type(build(), plain, variant)
    assert marker in extract_text(data, media_type).text
