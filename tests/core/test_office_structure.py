"""Structure kept from Office documents: Word's heading numbers, charts as tables of their
series, comments with their authors, slide titles as headings."""

from __future__ import annotations

import io
from typing import Any

import docx
import pytest
from docx.oxml import parse_xml

from content_core.extract import extract_text
from content_core.extract.base import ExtractedText

_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _saved(document: Any) -> bytes:
    """The bytes python-docx, openpyxl or python-pptx writes for `document`."""
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _extract(data: bytes, media_type: str) -> ExtractedText:
    return extract_text(data, media_type)


def _numbered_docx(*, linked: bool) -> bytes:
    """Headings numbered through their styles; with `linked`, the list the styles name only
    links to the definition of its levels through a numbering style (as Word's outline
    lists do)."""
    document = docx.Document()
    numbering = document.part.numbering_part.element
    defined = "71" if linked else "70"
    link = '<w:styleLink w:val="OutlineQN"/>' if linked else ""
    numbering.insert(
        0,
        parse_xml(
            f'<w:abstractNum xmlns:w="{_W_NS}" w:abstractNumId="{defined}">{link}'
            '<w:multiLevelType w:val="multilevel"/>'
            '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
            '<w:pStyle w:val="Heading1"/><w:lvlText w:val="%1"/></w:lvl>'
            '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
            '<w:pStyle w:val="Heading2"/><w:lvlText w:val="%1.%2"/></w:lvl>'
            '<w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/>'
            '<w:lvlText w:val="(%3)"/></w:lvl>'
            "</w:abstractNum>"
        ),
    )
    if linked:
        numbering.insert(
            1,
            parse_xml(
                f'<w:abstractNum xmlns:w="{_W_NS}" w:abstractNumId="70">'
                '<w:numStyleLink w:val="OutlineQN"/></w:abstractNum>'
            ),
        )
    numbering.append(
        parse_xml(f'<w:num xmlns:w="{_W_NS}" w:numId="70"><w:abstractNumId w:val="70"/></w:num>')
    )
    for style_name, level in (("Heading 1", 0), ("Heading 2", 1)):
        props = document.styles[style_name].element.get_or_add_pPr()
        props.append(
            parse_xml(
                f'<w:numPr xmlns:w="{_W_NS}"><w:ilvl w:val="{level}"/>'
                '<w:numId w:val="70"/></w:numPr>'
            )
        )
    document.add_heading("Introduction QN1", level=1)
    document.add_heading("Scope QN2", level=2)
    document.add_paragraph("Body text of the scope.")
    document.add_heading("Terms QN3", level=2)
    for text in ("first clause QN4", "second clause QN5"):
        paragraph = document.add_paragraph(text)
        paragraph._p.get_or_add_pPr().append(
            parse_xml(
                f'<w:numPr xmlns:w="{_W_NS}"><w:ilvl w:val="2"/><w:numId w:val="70"/></w:numPr>'
            )
        )
    document.add_heading("Method QN6", level=1)
    document.add_heading("Data QN7", level=2)
    return _saved(document)


@pytest.mark.parametrize("linked", [False, True], ids=["direct", "numbering-style-link"])
def test_word_heading_numbers_are_kept(linked: bool) -> None:
    text = _extract(_numbered_docx(linked=linked), _DOCX).text
    lines = [line for line in text.splitlines() if "QN" in line]
    assert lines == [
        "# 1 Introduction QN1",
        "## 1.1 Scope QN2",
        "## 1.2 Terms QN3",
        "    - (a) first clause QN4",
        "    - (b) second clause QN5",
        "# 2 Method QN6",
        "## 2.1 Data QN7",
    ]


_CHART_TABLE = "|  | Sales QC1 | Costs QC2 |\n|---|---|---|\n| East | 1.5 | 3 |\n| West | 2 | 4 |"


def _chart_xml() -> bytes:
    from pptx.chart.data import CategoryChartData
    from pptx.chart.xmlwriter import ChartXmlWriter
    from pptx.enum.chart import XL_CHART_TYPE

    data = CategoryChartData()
    data.categories = ["East", "West"]
    data.add_series("Sales QC1", (1.5, 2))
    data.add_series("Costs QC2", (3, 4))
    return ChartXmlWriter(XL_CHART_TYPE.COLUMN_CLUSTERED, data).xml.encode("utf-8")


def _docx_with_chart() -> bytes:
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    document = docx.Document()
    document.add_paragraph("Before the chart QC0.")
    part = Part(
        PackURI("/word/charts/chart1.xml"),
        "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
        _chart_xml(),
        document.part.package,
    )
    rel_id = document.part.relate_to(part, RELATIONSHIP_TYPE.CHART)
    run = document.add_paragraph().add_run()
    run._r.append(
        parse_xml(
            f'<w:drawing xmlns:w="{_W_NS}"'
            ' xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
            ' xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
            ' xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"'
            ' xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
            '<wp:inline><wp:extent cx="4000000" cy="3000000"/><wp:docPr id="1" name="Chart 1"/>'
            '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart">'
            f'<c:chart r:id="{rel_id}"/></a:graphicData></a:graphic></wp:inline></w:drawing>'
        )
    )
    document.add_paragraph("After the chart QC9.")
    return _saved(document)


def _chart_workbook() -> tuple[Any, Any]:
    """A workbook with the chart's data on sheet "Figures", and a bar chart of it."""
    import openpyxl
    from openpyxl.chart import BarChart, Reference

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Figures"
    for row in (("", "Sales QC1", "Costs QC2"), ("East", 1.5, 3), ("West", 2, 4)):
        sheet.append(row)
    chart = BarChart()
    chart.add_data(
        Reference(sheet, min_col=2, max_col=3, min_row=1, max_row=3), titles_from_data=True
    )
    chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=3))
    return workbook, chart


def _xlsx_with_chart(*, cached: bool) -> bytes:
    import zipfile

    workbook, chart = _chart_workbook()
    workbook.active.add_chart(chart, "E2")
    saved = _saved(workbook)
    if not cached:
        return saved  # openpyxl writes the cell references only
    # Excel and LibreOffice also store the values; put in a chart part that has them.
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(saved)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            body = source.read(item)
            if item.filename.startswith("xl/charts/chart"):
                body = _chart_xml()
            target.writestr(item, body)
    return out.getvalue()


def test_a_docx_chart_is_a_table_of_its_series_in_place() -> None:
    text = _extract(_docx_with_chart(), _DOCX).text
    assert "Before the chart QC0.\n\n" + _CHART_TABLE + "\n\nAfter the chart QC9." in text


@pytest.mark.parametrize("cached", [True, False], ids=["cached-values", "cell-references"])
def test_an_xlsx_chart_is_a_table_on_its_sheet_page(cached: bool) -> None:
    media_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    result = _extract(_xlsx_with_chart(cached=cached), media_type)
    assert len(result.pages) == 1
    page = result.text[result.pages[0].start : result.pages[0].end]
    assert page.startswith("## Figures\n\n")
    assert page.endswith("\n\n" + _CHART_TABLE)


_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:chart="urn:oasis:names:tc:opendocument:xmlns:chart:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3"'
)


def _odf(media_type: str, body: str, objects: dict[str, str] | None = None) -> bytes:
    """An OpenDocument package with `body` inside `office:body` and embedded objects."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr(zipfile.ZipInfo("mimetype"), media_type)
        package.writestr(
            "META-INF/manifest.xml",
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
            ' manifest:version="1.3"/>',
        )
        package.writestr(
            "content.xml",
            f"<office:document-content {_ODF_NS}><office:body>{body}</office:body>"
            "</office:document-content>",
        )
        for folder, content in (objects or {}).items():
            package.writestr(f"{folder}/content.xml", content)
    return buffer.getvalue()


def _odf_row(*cells: str, header: bool = False) -> str:
    def cell(value: str) -> str:
        try:
            float(value)
        except ValueError:
            return (
                '<table:table-cell office:value-type="string">'
                f"<text:p>{value}</text:p></table:table-cell>"
            )
        return (
            f'<table:table-cell office:value-type="float" office:value="{value}">'
            f"<text:p>{value}</text:p></table:table-cell>"
        )

    row = "<table:table-row>" + "".join(cell(c) for c in cells) + "</table:table-row>"
    return f"<table:table-header-rows>{row}</table:table-header-rows>" if header else row


def _odf_chart(title: str = "") -> str:
    """An embedded chart object's `content.xml`: its title and its own data table."""
    return (
        f"<office:document-content {_ODF_NS}><office:body><office:chart><chart:chart>{title}"
        '<table:table table:name="local-table">'
        + _odf_row("", "Sales QC1", "Costs QC2", header=True)
        + "<table:table-rows>"
        + _odf_row("East", "1.5", "3")
        + _odf_row("West", "2", "4")
        + "</table:table-rows></table:table></chart:chart></office:chart></office:body>"
        "</office:document-content>"
    )


def test_an_odt_chart_is_a_table_of_its_series_in_place() -> None:
    chart = _odf_chart("<chart:title><text:p>Quarterly QC3</text:p></chart:title>")
    body = (
        "<office:text><text:p>Before the chart QC0.</text:p>"
        '<text:p><draw:frame><draw:object xlink:href="./Object 1"/></draw:frame></text:p>'
        "<text:p>After the chart QC9.</text:p></office:text>"
    )
    data = _odf("application/vnd.oasis.opendocument.text", body, {"Object 1": chart})
    text = _extract(data, "application/vnd.oasis.opendocument.text").text
    assert text == (
        "Before the chart QC0.\n\nChart: Quarterly QC3\n\n"
        + _CHART_TABLE
        + "\n\nAfter the chart QC9."
    )


def _commented_workbook(text: str, author: str) -> bytes:
    """A one-sheet workbook with a (legacy) comment on B2."""
    import openpyxl
    from openpyxl.comments import Comment

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Budget"
    sheet.append(("Item", "Cost"))
    sheet.append(("Paper", 12))
    sheet["B2"].comment = Comment(text, author)
    return _saved(workbook)


def test_xlsx_cell_comments_are_kept_with_their_authors() -> None:
    data = _commented_workbook("Check the supplier price QM1", "Ada Lovelace")
    media_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    text = _extract(data, media_type).text
    assert text.endswith("\n\nComments:\n- B2 (Ada Lovelace): Check the supplier price QM1")


_P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
_P188_NS = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
_A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
_MS_RELS = "http://schemas.microsoft.com/office/2018/10/relationships"
# (authors part, its relationship type, comments part, its relationship type) per format.
_SLIDE_COMMENTS = {
    "legacy": (
        f'<p:cmAuthorLst xmlns:p="{_P_NS}"><p:cmAuthor id="3" name="Grace Hopper"'
        ' initials="GH" lastIdx="1" clrIdx="0"/></p:cmAuthorLst>',
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/commentAuthors",
        f'<p:cmLst xmlns:p="{_P_NS}"><p:cm authorId="3" dt="2024-01-01T00:00:00" idx="1">'
        '<p:pos x="10" y="10"/><p:text>Move the launch to May QP1</p:text></p:cm></p:cmLst>',
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments",
    ),
    "modern": (
        f'<p188:authorLst xmlns:p188="{_P188_NS}"><p188:author id="{{A1}}"'
        ' name="Grace Hopper" initials="GH" userId="gh" providerId="None"/></p188:authorLst>',
        f"{_MS_RELS}/authors",
        f'<p188:cmLst xmlns:p188="{_P188_NS}" xmlns:a="{_A_NS}"><p188:cm id="{{C1}}"'
        ' authorId="{A1}" created="2024-01-01T00:00:00"><p188:txBody><a:bodyPr/><a:p><a:r>'
        "<a:t>Move the launch to May QP1</a:t></a:r></a:p></p188:txBody></p188:cm>"
        "</p188:cmLst>",
        f"{_MS_RELS}/comments",
    ),
}


@pytest.mark.parametrize("kind", sorted(_SLIDE_COMMENTS))
def test_pptx_slide_comments_are_kept_with_their_authors(kind: str) -> None:
    import pptx
    from pptx.opc.package import Part
    from pptx.opc.packuri import PackURI

    authors_xml, authors_rel, comments_xml, comments_rel = _SLIDE_COMMENTS[kind]
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "Roadmap QP0"
    package = presentation.part.package
    authors = Part(PackURI("/ppt/authors1.xml"), "application/xml", package, authors_xml.encode())
    presentation.part.relate_to(authors, authors_rel)
    comments = Part(
        PackURI("/ppt/comments/comment1.xml"), "application/xml", package, comments_xml.encode()
    )
    slide.part.relate_to(comments, comments_rel)
    media_type = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    text = _extract(_saved(presentation), media_type).text
    assert text.endswith("\n\nComments:\n- (Grace Hopper): Move the launch to May QP1")


def test_odp_slide_titles_are_headings() -> None:
    def frame(kind: str, text: str) -> str:
        return (
            f'<draw:frame presentation:class="{kind}"><draw:text-box>'
            f"<text:p>{text}</text:p></draw:text-box></draw:frame>"
        )

    body = (
        "<office:presentation>"
        f'<draw:page draw:name="p1">{frame("title", "Quarterly review QT1")}'
        f"{frame('outline', 'Revenue grew QT2')}</draw:page>"
        f'<draw:page draw:name="p2">{frame("title", "Next steps QT3")}</draw:page>'
        "</office:presentation>"
    )
    media_type = "application/vnd.oasis.opendocument.presentation"
    result = _extract(_odf(media_type, body), media_type)
    pages = [result.text[span.start : span.end] for span in result.pages]
    assert pages == [
        "## Slide 1\n\n### Quarterly review QT1\n\nRevenue grew QT2",
        "## Slide 2\n\n### Next steps QT3",
    ]


def test_docx_comments_are_kept_with_their_authors() -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Reviewed sentence QD0.")
    document.add_comment(paragraph.runs, text="Cite the source QD1", author="Alan Turing")
    data = _saved(document)
    text = _extract(data, _DOCX).text
    assert text.endswith("## Comments\n\n- (Alan Turing): Cite the source QD1")


def test_an_ods_chart_is_a_table_on_its_sheet_page() -> None:
    chart = _odf_chart()
    body = (
        '<office:spreadsheet><table:table table:name="Figures">'
        '<table:shapes><draw:frame><draw:object xlink:href="./Object 1"/></draw:frame>'
        "</table:shapes>" + _odf_row("Region QS1", "Units") + "</table:table></office:spreadsheet>"
    )
    media_type = "application/vnd.oasis.opendocument.spreadsheet"
    result = _extract(_odf(media_type, body, {"Object 1": chart}), media_type)
    assert result.text == (
        "## Figures\n\n| Region QS1 | Units |\n|---|---|\n|  |  |\n\n" + _CHART_TABLE
    )


def test_an_xlsx_chart_sheet_is_a_page_after_the_worksheets() -> None:
    workbook, chart = _chart_workbook()
    workbook.create_chartsheet("Chart QC8").add_chart(chart)
    media_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    result = _extract(_saved(workbook), media_type)
    assert len(result.pages) == 2
    last = result.pages[1]
    assert result.text[last.start : last.end] == "## Chart QC8\n\n" + _CHART_TABLE


def test_custom_heading_styles_are_headings_by_outline_level_or_base() -> None:
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    based = document.styles.add_style("Kapitel", WD_STYLE_TYPE.PARAGRAPH)
    based.base_style = document.styles["Heading 1"]
    outlined = document.styles.add_style("Abschnitt", WD_STYLE_TYPE.PARAGRAPH)
    outlined.element.get_or_add_pPr().append(
        parse_xml(f'<w:outlineLvl xmlns:w="{_W_NS}" w:val="1"/>')
    )
    document.add_paragraph("Einleitung QO1", style="Kapitel")
    document.add_paragraph("Umfang QO2", style="Abschnitt")
    document.add_paragraph("Body text QO3.")
    text = _extract(_saved(document), _DOCX).text
    assert text == "# Einleitung QO1\n\n## Umfang QO2\n\nBody text QO3."


def test_xlsx_threaded_comments_are_kept_with_their_people() -> None:
    import zipfile

    # Excel keeps a legacy copy of each threaded comment, with this stub as its text.
    stub = "[Threaded comment]\n\nYour version of Excel allows you to read this threaded comment"
    legacy = _commented_workbook(stub, "tc={C1}")
    tc_ns = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
    rels = "http://schemas.microsoft.com/office/2017/10/relationships"
    added = {
        "xl/threadedComments/threadedComment1.xml": (
            f'<ThreadedComments xmlns="{tc_ns}"><threadedComment ref="B2" dT="2024-01-01T00:00:00"'
            ' personId="{P1}" id="{C1}"><text>Ask for a second quote QM2</text>'
            "</threadedComment></ThreadedComments>"
        ),
        "xl/persons/person.xml": (
            f'<personList xmlns="{tc_ns}"><person displayName="Katherine Johnson" id="{{P1}}"'
            ' userId="kj" providerId="None"/></personList>'
        ),
    }
    links = {
        "xl/worksheets/_rels/sheet1.xml.rels": (
            f'<Relationship Id="rIdTC" Type="{rels}/threadedComment"'
            ' Target="../threadedComments/threadedComment1.xml"/>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'<Relationship Id="rIdP" Type="{rels}/person" Target="persons/person.xml"/>'
        ),
    }
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(legacy)) as source,
        zipfile.ZipFile(out, "w") as target,
    ):
        for item in source.infolist():
            body = source.read(item).decode()
            if item.filename in links:
                body = body.replace("</Relationships>", links[item.filename] + "</Relationships>")
            target.writestr(item, body)
        for name, body in added.items():
            target.writestr(name, body)
    media_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    text = _extract(out.getvalue(), media_type).text
    assert text.endswith("\n\nComments:\n- B2 (Katherine Johnson): Ask for a second quote QM2")
