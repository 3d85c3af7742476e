"""Builders for the extraction fixtures: every input is generated here, deterministically,
with unique marker strings (QG...) so containment checks cannot pass by accident."""

from __future__ import annotations

import datetime as dt
import io
import json
import unicodedata
import zipfile
from collections.abc import Callable
from typing import Any

from content_core.binary.textpdf import assemble_pdf

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"


def make_pdf(pages: list[str]) -> bytes:
    """A minimal valid PDF with one Helvetica text line per page (xref offsets computed)."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font_id = 3 + 2 * len(pages)
    for i, line in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return assemble_pdf(objects)


def make_zip(members: dict[str, bytes]) -> bytes:
    """A deflated zip holding `members` (name -> bytes), in the given order."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def make_docx(build: Callable[[Any], None]) -> bytes:
    """A DOCX made by python-docx; `build` receives the Document to fill."""
    import docx

    document = docx.Document()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_mixed() -> bytes:
    def build(document: Any) -> None:
        document.sections[0].header.paragraphs[0].text = "Running header QG201"
        document.sections[0].footer.paragraphs[0].text = "Running footer QG202"
        document.add_heading("Quarterly report QG203", level=1)
        document.add_heading("Scope QG204", level=2)
        paragraph = document.add_paragraph("Plain paragraph with ")
        paragraph.add_run("bold QG205").bold = True
        paragraph.add_run(" and tab\there.")
        document.add_paragraph("First bullet QG206", style="List Bullet")
        document.add_paragraph("Second bullet QG207", style="List Bullet")
        table = document.add_table(rows=3, cols=3)
        for r, row in enumerate(
            [["Region", "Units", "Note"], ["North", "12", "a|b"], ["South", "7", ""]]
        ):
            for c, value in enumerate(row):
                table.cell(r, c).text = value
        document.add_paragraph("Closing line QG208")

    return make_docx(build)


def xlsx_two_sheets() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    first = workbook.active
    first.title = "Sales QG301"
    first.append(["Item", "Qty", "Price", "Shipped", "Paid"])
    first.append(["Widget QG302", 3, 2.5, dt.datetime(2024, 1, 31), True])
    first.append(["Gadget", 10, 1.0, dt.datetime(2024, 2, 1, 13, 30), False])
    second = workbook.create_sheet("Notes")
    second["B3"] = "Sparse cell QG303"
    out = io.BytesIO()
    workbook.save(out)
    return _fixed_zip_times(out.getvalue())


def pptx_slides() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    title_slide = presentation.slides.add_slide(presentation.slide_layouts[0])
    title_slide.shapes.title.text = "Launch plan QG401"
    title_slide.placeholders[1].text = "Subtitle QG402"
    bullets = presentation.slides.add_slide(presentation.slide_layouts[1])
    bullets.shapes.title.text = "Milestones QG403"
    bullets.placeholders[1].text_frame.text = "Design QG404"
    bullets.placeholders[1].text_frame.add_paragraph().text = "Build QG405"
    bullets.notes_slide.notes_text_frame.text = "Speaker note QG406"
    table_slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    table_slide.shapes.title.text = "Budget QG407"
    shape = table_slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    for r, row in enumerate([["Line", "Amount"], ["Travel QG408", "100"]]):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE

    chart_slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    chart_slide.shapes.title.text = "Growth QG409"
    data = CategoryChartData()
    data.categories = ["2023", "2024"]
    data.add_series("Revenue QG410", (1.5, 2.0))
    chart = chart_slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(4), Inches(3), data
    ).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Revenue chart QG411"
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"'
)


def make_odf(media_type: str, body: str) -> bytes:
    """An OpenDocument package with the given `office:body` inner XML."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODF_NS}>'
        f"<office:body>{body}</office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
        'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{media_type}"/>'
        "</manifest:manifest>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(_info("mimetype"), media_type, compress_type=zipfile.ZIP_STORED)
        archive.writestr(_info("content.xml"), content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(
            _info("META-INF/manifest.xml"), manifest, compress_type=zipfile.ZIP_DEFLATED
        )
    return out.getvalue()


def odt_text() -> bytes:
    return make_odf(
        ODT,
        "<office:text>"
        '<text:h text:outline-level="1">Field guide QG501</text:h>'
        '<text:p>Spaced<text:s text:c="3"/>words and a<text:tab/>tab QG502'
        "<text:note><text:note-citation>1</text:note-citation><text:note-body>"
        "<text:p>Footnote QG503</text:p></text:note-body></text:note></text:p>"
        "<text:list><text:list-item><text:p>Item one QG504</text:p></text:list-item>"
        "<text:list-item><text:p>Item two QG505</text:p></text:list-item></text:list>"
        "<table:table><table:table-row><table:table-cell><text:p>K</text:p></table:table-cell>"
        "<table:table-cell><text:p>V</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>key QG506</text:p></table:table-cell>"
        "<table:table-cell><text:p>value</text:p></table:table-cell></table:table-row>"
        "</table:table></office:text>",
    )


def ods_sheet() -> bytes:
    empty_tail = (
        '<table:table-row table:number-rows-repeated="1048570">'
        '<table:table-cell table:number-columns-repeated="1024"/></table:table-row>'
    )
    return make_odf(
        ODS,
        "<office:spreadsheet>"
        '<table:table table:name="Inventory QG601">'
        "<table:table-row><table:table-cell><text:p>Part</text:p></table:table-cell>"
        "<table:table-cell><text:p>Count</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>Bolt QG602</text:p></table:table-cell>"
        '<table:table-cell table:number-columns-repeated="2"><text:p>5</text:p>'
        "</table:table-cell></table:table-row>"
        # An empty cell repeated twice keeps the columns after it aligned.
        "<table:table-row><table:table-cell><text:p>Nut</text:p></table:table-cell>"
        '<table:table-cell table:number-columns-repeated="2"/>'
        "<table:table-cell><text:p>QG603</text:p></table:table-cell></table:table-row>"
        f"{empty_tail}</table:table></office:spreadsheet>",
    )


def odp_slides() -> bytes:
    return make_odf(
        ODP,
        "<office:presentation>"
        '<draw:page draw:name="p1"><draw:frame><draw:text-box>'
        "<text:p>Opening slide QG701</text:p></draw:text-box></draw:frame>"
        "<presentation:notes><draw:frame><draw:text-box><text:p>Presenter QG702</text:p>"
        "</draw:text-box></draw:frame></presentation:notes></draw:page>"
        '<draw:page draw:name="p2"><draw:frame><draw:text-box>'
        "<text:p>Closing slide QG703</text:p></draw:text-box></draw:frame></draw:page>"
        "</office:presentation>",
    )


HTML_PAGE = (
    "<!DOCTYPE html><html><head><meta charset='windows-1252'><title>T</title>"
    "<style>body{color:red}</style><script>var hidden='QG899';</script></head><body>"
    "<h1>Caf\xe9 guide QG801</h1><p>Prices in \u20ac: "
    "<a href='https://example.org/x'>link QG802</a>"
    "</p><ul><li>Espresso QG803</li><li>Latte</li></ul>"
    "<table><tr><th>Drink</th><th>Price</th></tr><tr><td>Mocha QG804</td><td>3</td></tr></table>"
    "<img alt='logo QG805' src='data:image/png;base64," + "A" * 4000 + "'>"
    "</body></html>"
).encode("cp1252")

RTF_DOC = (
    rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Arial;}}"
    rb"{\b Heading QG901}\par Caf\'e9 text QG902\par"
    rb"\trowd\cellx1000\cellx2000 A1\cell B1 QG903\cell\row }"
)

SVG_DRAWING = (
    b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
    b"<title>Diagram QGA01</title><desc>Flow of orders</desc>"
    b'<path d="M0 0L10 10"/><text x="1" y="5">Label <tspan>QGA02</tspan></text></svg>'
)

RSS_FEED = (
    b'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
    b"<title>Feed QGB01</title><item><title>Post QGB02</title>"
    b"<description><![CDATA[<p>Rich QGB03</p>]]></description></item></channel></rss>"
)

JSON_DOC = json.dumps(
    {"name": "Widget QGC01", "tags": ["a", "b"], "nested": {"unicode": "caf\u00e9", "n": 1}},
    separators=(",", ":"),
).encode()

NDJSON_DOC = b'{"id":1,"msg":"first QGC02"}\n\n{"id":2,"msg":"second QGC03"}\n'

CSV_SEMICOLON = (
    'Name;City;Note\nAda;Z\u00fcrich;has, comma QGD01\nBob;Oslo;"quoted; semi"\n'.encode()
)

TSV_DOC = b"col\tvalue\nalpha QGD02\t1\nbeta\t2|3\n"

MARKDOWN_DOC = b"# Title QGE01\n\n- item\n\n```python\nprint('QGE02')\n```\n"


def _info(name: str) -> zipfile.ZipInfo:
    return zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))


def _fixed_zip_times(data: bytes) -> bytes:
    """Re-pack a zip with fixed member timestamps so the bytes are reproducible."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            target.writestr(_info(member.filename), source.read(member))
    return out.getvalue()


def epub_book() -> bytes:
    """An EPUB whose spine puts chapter two (stored first) after chapter one."""
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    package = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        "<manifest>"
        '<item id="c2" href="text/ch%202.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="css" href="style.css" media-type="text/css"/>'
        '</manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>'
    )

    def chapter(title: str, body: str) -> str:
        return (
            '<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html>'
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head>'
            f"<body><h1>{title}</h1><p>{body}</p></body></html>"
        )

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(_info("mimetype"), "application/epub+zip")
        archive.writestr(_info("META-INF/container.xml"), container)
        archive.writestr(_info("OEBPS/content.opf"), package)
        archive.writestr(_info("OEBPS/text/ch 2.xhtml"), chapter("Second QGG02", "Later text."))
        archive.writestr(_info("OEBPS/text/ch1.xhtml"), chapter("First QGG01", "Opening text."))
        archive.writestr(_info("OEBPS/style.css"), "p { margin: 0 }")
    return out.getvalue()


def pdf_with_form() -> bytes:
    """One page with a filled text field, a checked box and an unchecked one."""
    content = b"BT /F1 12 Tf 72 720 Td (Order form QG111) Tj ET"
    return assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R 7 0 R 8 0 R] >> >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> /Annots [6 0 R 7 0 R 8 0 R] >>",
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (Customer) /V (Ada QG112) "
            b"/Rect [72 600 300 620] /P 3 0 R >>",
            b"<< /Type /Annot /Subtype /Widget /FT /Btn /T (Express) /V /Yes /AS /Yes "
            b"/Rect [72 560 90 578] /P 3 0 R >>",
            b"<< /Type /Annot /Subtype /Widget /FT /Btn /T (Gift) /V /Off /AS /Off "
            b"/Rect [72 520 90 538] /P 3 0 R >>",
        ]
    )


def pdf_rotated_page(rotate: int) -> bytes:
    """One page shown rotated by `rotate` degrees, three upright lines top to bottom."""
    lines = [b"First line QG121", b"Second line QG122", b"Third line QG123"]
    content = b"".join(
        b"BT /F1 12 Tf 72 %d Td (%s) Tj ET\n" % (700 - 20 * i, line) for i, line in enumerate(lines)
    )
    return assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate %d /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>" % rotate,
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def pdf_visual_rtl(lines: list[list[str | float]]) -> bytes:
    """A PDF whose lines are drawn as PDF producers draw right-to-left text: glyphs left to
    right in visual order. Each line lists glyph strings (a glyph may map to several characters,
    like a lam-alef ligature; a combining mark has no advance and is moved back over its base)
    and numbers, which are TJ gaps in thousandths of an em (negative: a gap to the right).

    The font is not embedded: a CID font with fixed advances (/W) and a ToUnicode CMap, which is
    all that text extraction reads.
    """
    glyphs: dict[str, int] = {}
    for line in lines:
        for item in line:
            if isinstance(item, str) and item not in glyphs:
                glyphs[item] = len(glyphs) + 1
    widths = " ".join(
        f"{cid} [{0 if unicodedata.category(text[0]) == 'Mn' else 600}]"
        for text, cid in glyphs.items()
    )
    cmap_lines = "\n".join(
        f"<{cid:04X}> <{text.encode('utf-16-be').hex().upper()}>" for text, cid in glyphs.items()
    )
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
        f"{len(glyphs)} beginbfchar\n{cmap_lines}\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end"
    ).encode()
    content = []
    for number, line in enumerate(lines):
        parts = []
        for item in line:
            if isinstance(item, str):
                mark = unicodedata.category(item[0]) == "Mn"
                # A mark is drawn over the glyph before it, then the pen goes back.
                parts.append(f"300 <{glyphs[item]:04X}> -300" if mark else f"<{glyphs[item]:04X}>")
            else:
                parts.append(f"{item:g}")
        content.append(f"BT /F1 10 Tf 72 {720 - 14 * number} Td [{' '.join(parts)}] TJ ET")
    stream = "\n".join(content).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /DejaVuSans /Encoding /Identity-H "
        b"/DescendantFonts [6 0 R] /ToUnicode 7 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /DejaVuSans /CIDToGIDMap /Identity "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
        b"/FontDescriptor 8 0 R /DW 600 /W [" + widths.encode() + b"] >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
        b"<< /Type /FontDescriptor /FontName /DejaVuSans /Flags 32 /FontBBox [0 -200 1000 900] "
        b"/ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>",
    ]
    return assemble_pdf(objects)
