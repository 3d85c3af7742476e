"""Structure kept from Office documents: Word's heading numbers, charts as tables of their
series, comments with their authors, slide titles as headings."""

from __future__ import annotations

import io

import docx
from docx.oxml import parse_xml

from content_core.extract import extract_text
from content_core.extract.base import ExtractedText

_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _extract(data: bytes, media_type: str) -> ExtractedText:
    return extract_text(data, media_type)


def _numbered_docx() -> bytes:
    document = docx.Document()
    numbering = document.part.numbering_part.element
    numbering.insert(
        0,
        parse_xml(
            f'<w:abstractNum xmlns:w="{_W_NS}" w:abstractNumId="70">'
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
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_word_heading_numbers_are_kept() -> None:
    text = _extract(_numbered_docx(), _DOCX).text
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
