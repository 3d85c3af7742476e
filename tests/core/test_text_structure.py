"""Structure from text formats: raw HTML inside Markdown rendered, XML articles and patents as
their text, WebVTT as speaker-attributed lines."""

from __future__ import annotations

from pathlib import Path

from content_core.extract import extract_text

# Written for these tests in the shapes of the JATS 1.2 and USPTO grant v4.5 DTDs.
_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "structure"


def test_raw_html_in_markdown_is_rendered_not_passed_through() -> None:
    source = (
        "# Title QH0\n\n"
        "Some <b>bold</b> text<br>next line, and `<code>` shown as code.\n\n"
        '<div align="center">\n<img src="logo.png" alt="Logo QH1">\n'
        "<p>Centred <i>words</i> QH2</p>\n<script>alert(1)</script>\n</div>\n\n"
        "| A | B |\n|---|---|\n| x<br>y | <span>z QH3</span> |\n\n"
        "```html\n<p>kept in a code block</p>\n```\n\n"
        "<!-- a comment -->\nEnd QH4.\n"
    )
    text = extract_text(source.encode(), "text/markdown").text
    assert text == (
        "# Title QH0\n\n"
        "Some bold text next line, and `<code>` shown as code.\n\n"
        "![Logo QH1](logo.png)\n\nCentred *words* QH2\n\n"
        "| A | B |\n|---|---|\n| x y | z QH3 |\n\n"
        "```html\n<p>kept in a code block</p>\n```\n\n"
        "End QH4."
    )


def test_a_jats_article_comes_out_as_its_text() -> None:
    text = extract_text((_FIXTURES / "jats_article.xml").read_bytes(), "application/xml").text
    assert text == (
        "# Soil carbon in alpine meadows QJ1\n\n"
        "Marie Curie, Emmy Noether\n\n"
        "## Abstract\n\nWe measured carbon QJ2 at 1 sites.\n\n"
        "## Introduction QJ3\n\nMeadows store carbon QJ4.\n\n"
        "### Scope QJ5\n\nOnly alpine sites.\n\n"
        "## 2 Results\n\nTable 1 Carbon by site QJ6\n\n"
        "| Site | Carbon |\n|---|---|\n| North | 4.2 |\n\n"
        "## References\n\n- Darwin C. On soils QJ7. 1881."
    )


def test_a_uspto_patent_comes_out_as_its_text() -> None:
    text = extract_text((_FIXTURES / "uspto_patent_grant.xml").read_bytes(), "application/xml").text
    assert text == (
        "# Self-watering plant pot QU1\n\nUS 01234567 B2\n\n"
        "## Abstract\n\nA pot with a reservoir QU2.\n\n"
        "## Description\n\n### BACKGROUND QU3\n\nPlants dry out QU4.\n\n"
        "## Claims\n\n"
        "1. A pot comprising: a reservoir QU5; and a wick.\n\n"
        "2. The pot of claim 1, wherein the wick is cotton QU6."
    )


def test_other_xml_is_still_pretty_printed() -> None:
    text = extract_text(b"<catalog><item id='1'>Tea QX1</item></catalog>", "application/xml").text
    assert text == '<catalog>\n  <item id="1">Tea QX1</item>\n</catalog>'


_VTT = (
    "WEBVTT - meeting QV0\n\n"
    "NOTE recorded on a Tuesday\n\n"
    "STYLE\n::cue { color: yellow }\n\n"
    "intro-1\n00:00:01.000 --> 00:00:04.000 align:start\n"
    "<v Ada Lovelace>Welcome to the review QV1.</v>\n\n"
    "00:00:04.500 --> 00:00:06.000\n<v Ada Lovelace>Let us begin QV2.\n\n"
    "3\n00:00:06.000 --> 00:00:09.000\n"
    "<v.loud Grace Hopper>The <i>numbers</i> are in &amp; look good QV3.</v>\n\n"
    "00:00:09.000 --> 00:00:10.000\nApplause QV4\n"
)


def test_webvtt_is_sniffed_and_comes_out_as_speaker_lines() -> None:
    from content_core.binary import sniff_media_type

    data = _VTT.encode()
    assert sniff_media_type(data, filename="meeting.vtt") == "text/vtt"
    assert sniff_media_type(b"\xef\xbb\xbf" + data) == "text/vtt"
    result = extract_text(data, "text/vtt")
    assert result.handler == "webvtt"
    assert result.text == (
        "Ada Lovelace: Welcome to the review QV1. Let us begin QV2.\n"
        "Grace Hopper: The numbers are in & look good QV3.\n"
        "Applause QV4"
    )
