"""Markdown keeps its markup (chunkers use it for structure); raw HTML inside it is rendered.

HTML blocks become Markdown (`html.html_to_markdown`: scripts and styles dropped, tables as
tables); inline tags are removed and their text kept (an image keeps its alt text). markdown-it
finds the HTML, so tags shown in code spans and code blocks stay as written.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

from content_core.binary import media_types as mt
from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.extract.html import html_to_markdown
from content_core.formats import PRIORITY_TEXT_FORMAT, Format, Handler

__all__ = ["FORMATS", "MarkdownExtractor", "render_raw_html"]

_MARKDOWN_TYPES = frozenset({mt.MARKDOWN, "text/x-markdown"})
# Tags that separate words when they are dropped.
_SPACING_TAG = re.compile(r"</?(?:br|hr|p|div|li|td|th|tr)\b", re.IGNORECASE)


def render_raw_html(markdown: str) -> str:
    """Return `markdown` with its raw HTML blocks rendered as Markdown and inline tags removed
    (their text kept)."""
    if "<" not in markdown:
        return markdown
    lines = markdown.splitlines(keepends=True)
    tokens = MarkdownIt("commonmark").parse(markdown)
    edits: dict[int, tuple[int, str]] = {}
    for token in tokens:
        if token.map is None:
            continue
        start, end = token.map
        if token.type == "html_block":
            rendered = html_to_markdown(token.content)
            edits[start] = (end, rendered + "\n" if rendered else "")
        elif token.type == "inline" and any(c.type == "html_inline" for c in token.children or ()):
            edits[start] = (end, _strip_inline("".join(lines[start:end]), token.children or []))
    if not edits:
        return markdown
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in edits:
            end, text = edits[index]
            out.append(text)
            index = max(end, index + 1)
        else:
            out.append(lines[index])
            index += 1
    return "".join(out)


def _strip_inline(source: str, children: list[Any]) -> str:
    """Remove the `html_inline` tags of one block's source, found in order after the text
    before them (so a tag shown in a code span on the same line is left alone)."""
    out: list[str] = []
    cursor = 0
    for child in children:
        if child.type == "html_inline":
            found = source.find(child.content, cursor)
            if found < 0:
                continue
            out.append(source[cursor:found])
            replacement = html_to_markdown(child.content)
            if not replacement and _SPACING_TAG.match(child.content):
                replacement = " "
            out.append(replacement)
            cursor = found + len(child.content)
        elif child.type in ("text", "code_inline") and child.content:
            found = source.find(child.content, cursor)
            if found >= 0:
                out.append(source[cursor : found + len(child.content)])
                cursor = found + len(child.content)
    out.append(source[cursor:])
    return "".join(out)


class MarkdownExtractor:
    """Decodes Markdown and keeps its markup, which chunkers use for structure."""

    name = "markdown"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `text/markdown` and its older `text/x-markdown` alias."""
        return info.media_type in _MARKDOWN_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the decoded Markdown source, its raw HTML rendered."""
        text = decode_bytes(blob.data, declared=blob.info.charset)
        return build_text([render_raw_html(text)], handler=self.name, paged=False)


FORMATS = (
    Format(name="markdown", media_types=(mt.MARKDOWN,), kind="markdown",
           handlers=(Handler(MarkdownExtractor(), PRIORITY_TEXT_FORMAT),), extension=".md",
           text_to_pdf=True),
)
