"""Builders for the format variants real corpora tripped on (issue 9): Strict OOXML,
macro-enabled packages, truncated packages, Word 2003 / Excel 2003 XML and Word flat-OPC XML.
Built from the ordinary fixtures of `extract_inputs`, deterministically, with unique markers."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from tests.core.extract_inputs import docx_mixed, make_docx, xlsx_two_sheets


def _info(name: str) -> zipfile.ZipInfo:
    return zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))

# Strict OOXML (ISO/IEC 29500 Strict): what Word and Excel write for "Strict Open XML". The
# parts are the transitional ones with `http://purl.oclc.org/ooxml/...` namespaces and
# relationship types; package-level namespaces (content types, core properties, markup
# compatibility) are shared by both and stay.
_STRICT_AREAS = (
    b"officeDocument", b"wordprocessingml", b"spreadsheetml", b"presentationml", b"drawingml",
    b"schemaLibrary",
)


def as_strict(data: bytes) -> bytes:
    """Rewrite a transitional OOXML package made by python-docx/openpyxl to Strict."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            body = source.read(member)
            if member.filename.endswith((".xml", ".rels")):
                for area in _STRICT_AREAS:
                    body = body.replace(
                        b"http://schemas.openxmlformats.org/" + area + b"/2006/",
                        b"http://purl.oclc.org/ooxml/" + area + b"/",
                    )
                body = body.replace(b"/extended-properties", b"/extendedProperties")
                body = body.replace(b"/custom-properties", b"/customProperties")
                # Word and Excel mark the main part's root as strict too.
                body = body.replace(b"<w:document ", b'<w:document w:conformance="strict" ', 1)
                body = body.replace(b"<workbook ", b'<workbook conformance="strict" ', 1)
            assert b"purl.oclc.org" in body or not member.filename.endswith(".rels")
            target.writestr(_info(member.filename), body, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def docx_strict() -> bytes:
    def build(document: Any) -> None:
        document.add_heading("Strict heading QGS01", level=1)
        document.add_paragraph("Strict body text QGS02")
        table = document.add_table(rows=1, cols=2)
        table.cell(0, 0).text = "Cell QGS03"
        table.cell(0, 1).text = "9"

    return as_strict(make_docx(build))


def xlsx_strict() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Strict sheet QGS11"
    sheet.append(["Label", "Value"])
    sheet.append(["Strict cell QGS12", 42])
    out = io.BytesIO()
    workbook.save(out)
    return as_strict(out.getvalue())


def pptx_strict() -> bytes:
    from pptx import Presentation

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Strict slide QGS21"
    slide.placeholders[1].text_frame.text = "Strict point QGS22"
    out = io.BytesIO()
    presentation.save(out)
    return as_strict(out.getvalue())


# Word 2003 XML as Word 2003 saves it: sections wrapped in `wx:sect`, list paragraphs with
# `w:listPr`, a header inside `w:sectPr`, a tracked deletion and an embedded picture.
WORDML_2003_DOC = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<?mso-application progid="Word.Document"?>\n'
    b'<w:wordDocument xmlns:w="http://schemas.microsoft.com/office/word/2003/wordml" '
    b'xmlns:wx="http://schemas.microsoft.com/office/word/2003/auxHint" '
    b'xmlns:aml="http://schemas.microsoft.com/aml/2001/core" '
    b'xmlns:v="urn:schemas-microsoft-com:vml" xml:space="preserve">'
    b'<w:styles><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>'
    b"</w:style></w:styles>"
    b"<w:body><wx:sect>"
    b'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Minutes QGW01</w:t></w:r></w:p>'
    b"<w:p><w:r><w:t>Opening </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>remarks QGW02</w:t>"
    b'</w:r><aml:annotation w:type="Word.Deletion"><aml:content><w:r><w:delText>gone QGW99'
    b"</w:delText></w:r></aml:content></aml:annotation></w:p>"
    b'<w:p><w:pPr><w:listPr><w:ilvl w:val="0"/><w:ilfo w:val="1"/></w:listPr></w:pPr>'
    b"<w:r><w:t>Action item QGW03</w:t></w:r></w:p>"
    b"<w:p><w:r><w:pict><w:binData w:name=\"wordml://1.png\">iVBORw0KGgoQGW98</w:binData>"
    b'<v:shape><v:imagedata src="wordml://1.png"/></v:shape></w:pict></w:r></w:p>'
    b"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Owner</w:t></w:r></w:p></w:tc>"
    b"<w:tc><w:p><w:r><w:t>Due</w:t></w:r></w:p></w:tc></w:tr>"
    b"<w:tr><w:tc><w:p><w:r><w:t>Ada QGW04</w:t></w:r></w:p></w:tc>"
    b"<w:tc><w:p><w:r><w:t>May</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
    b'<w:sectPr><w:hdr w:type="odd"><w:p><w:r><w:t>Board header QGW05</w:t></w:r></w:p></w:hdr>'
    b"</w:sectPr></wx:sect></w:body></w:wordDocument>"
)

# Excel 2003 XML ("XML Spreadsheet 2003"): typed cells, a skipped column (`ss:Index`), inline
# HTML in a cell, a cell comment, and a second sheet.
SPREADSHEETML_2003_DOC = (
    b'<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n'
    b'<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
    b'xmlns:o="urn:schemas-microsoft-com:office:office" '
    b'xmlns:x="urn:schemas-microsoft-com:office:excel" '
    b'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet" '
    b'xmlns:html="http://www.w3.org/TR/REC-html40">'
    b'<Worksheet ss:Name="Orders QGX01"><Table>'
    b'<Row><Cell><Data ss:Type="String">Item</Data></Cell><Cell><Data ss:Type="String">Qty'
    b'</Data></Cell><Cell><Data ss:Type="String">Date</Data></Cell>'
    b'<Cell><Data ss:Type="String">Paid</Data></Cell></Row>'
    b'<Row><Cell><Data ss:Type="String">Bolt QGX02</Data><Comment><Data>note QGX98</Data>'
    b'</Comment></Cell><Cell><Data ss:Type="Number">12</Data></Cell>'
    b'<Cell><Data ss:Type="DateTime">2024-01-31T00:00:00.000</Data></Cell>'
    b'<Cell><Data ss:Type="Boolean">1</Data></Cell></Row>'
    b'<Row ss:Index="4"><Cell ss:Index="3"><ss:Data ss:Type="String" '
    b'xmlns="http://www.w3.org/TR/REC-html40"><B>Late</B> QGX03</ss:Data></Cell></Row>'
    b"</Table></Worksheet>"
    b'<Worksheet ss:Name="Empty"><Table/></Worksheet>'
    b'<Worksheet ss:Name="Notes"><Table><Row><Cell><Data ss:Type="String">Remark QGX04'
    b"</Data></Cell></Row></Table></Worksheet></Workbook>"
)


def with_main_type(data: bytes, plain: str, variant: str) -> bytes:
    """Re-zip an OOXML package with `variant` instead of `plain` in [Content_Types].xml (how
    macro-enabled, template and slideshow files differ from the plain document)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            body = source.read(member)
            if member.filename == "[Content_Types].xml":
                assert plain.encode() in body
                body = body.replace(plain.encode(), variant.encode())
            target.writestr(_info(member.filename), body, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


XLSX_MAIN = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
XLSM_MAIN = "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
DOCX_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
DOCM_MAIN = "application/vnd.ms-word.document.macroEnabled.main+xml"
PPTX_MAIN = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
PPTM_MAIN = "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"


def xlsm_workbook() -> bytes:
    """An Excel macro-enabled workbook (.xlsm): the XLSX parts with the macro-enabled main
    content type (the VBA project part itself is not needed to tell or read it)."""
    return with_main_type(xlsx_two_sheets(), XLSX_MAIN, XLSM_MAIN)


def truncated(data: bytes, fraction: float = 0.0) -> bytes:
    """`data` cut before its central directory (an interrupted download or copy), or, with
    `fraction`, cut to that share of its length."""
    if fraction:
        return data[: int(len(data) * fraction)]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return data[: archive.start_dir]


def docx_cut_before_body() -> bytes:
    """A DOCX in Word's member order (the main part late) cut off before the main part's
    local header: neither the directory nor `word/document.xml` survives."""
    source = zipfile.ZipFile(io.BytesIO(docx_mixed()))
    members = sorted(source.infolist(), key=lambda m: m.filename == "word/document.xml")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in members:
            target.writestr(
                _info(member.filename), source.read(member), compress_type=zipfile.ZIP_DEFLATED
            )
    data = out.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return data[: archive.getinfo("word/document.xml").header_offset]

# Word 2007+ "Word XML Document" (flat OPC): the package's parts inline in one XML file.
WORD_FLAT_OPC_DOC = (
    b'<?xml version="1.0" standalone="yes"?>\n<?mso-application progid="Word.Document"?>\n'
    b'<pkg:package xmlns:pkg="http://schemas.microsoft.com/office/2006/xmlPackage">'
    b'<pkg:part pkg:name="/word/document.xml" pkg:contentType="application/vnd.openxmlformats-'
    b'officedocument.wordprocessingml.document.main+xml"><pkg:xmlData>'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b'<w:body><w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Flat title QGW11</w:t>'
    b"</w:r></w:p><w:p><w:r><w:t>Flat body QGW12</w:t></w:r></w:p></w:body></w:document>"
    b"</pkg:xmlData></pkg:part>"
    b'<pkg:part pkg:name="/word/styles.xml" pkg:contentType="application/vnd.openxmlformats-'
    b'officedocument.wordprocessingml.styles+xml"><pkg:xmlData>'
    b'<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b'<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>'
    b"</w:styles></pkg:xmlData></pkg:part></pkg:package>"
)
