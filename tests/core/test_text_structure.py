"""Structure from text formats: raw HTML inside Markdown rendered, XML articles and patents as
their text, WebVTT as speaker-attributed lines."""

from __future__ import annotations

from content_core.extract import extract_text


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
