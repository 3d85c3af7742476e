"""HTML and XHTML to Markdown through BeautifulSoup (lxml parser) and markdownify.

Scripts, styles and other non-content elements are dropped before conversion; `data:` URI
images keep only their alt text, so a page with an inline base64 picture stays small; MathML
formulas become LaTeX (`_math`). The bytes are decoded as a browser would
(`_decode.decode_html`): BOM, the page's own `<meta>` charset, EBCDIC recognised by its first
bytes, then detection.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from markdownify import MarkdownConverter

from content_core.binary import media_types as mt
from content_core.extract._decode import decode_html, markup_charset
from content_core.extract._math import mathml_soup_latex
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import PRIORITY_TEXT_FORMAT, Format, Handler

__all__ = ["FORMATS", "HtmlExtractor", "html_to_markdown"]

_HTML_TYPES = frozenset({mt.HTML, mt.XHTML, "application/xhtml"})
_DROPPED_TAGS = (
    "head",
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "object",
    "embed",
    "svg",
)
# Inline foreign content: a `<title>` inside names the drawing or formula.
_FOREIGN_TAGS = ["svg", "math"]
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_MAX_SRC_CHARS = 2048
_LATEX_ATTRIBUTE = "data-content-latex"


class _Converter(MarkdownConverter):
    """markdownify with images reduced to alt text when their source is inline data."""

    def convert_img(self, el: Any, text: str, parent_tags: set[str]) -> str:
        alt = " ".join((el.attrs.get("alt") or "").split())
        src = el.attrs.get("src") or ""
        if src.startswith("data:") or len(src) > _MAX_SRC_CHARS:
            return f"![{alt}]" if alt else ""
        return f"![{alt}]({src})"

    def convert_math(self, el: Any, text: str, parent_tags: set[str]) -> str:
        # `_formulas_as_latex` left the formula's LaTeX, already fenced, in this attribute.
        return str(el.attrs.get(_LATEX_ATTRIBUTE, ""))


def html_to_markdown(html: str) -> str:
    """Return Markdown for `html`, with scripts, styles and embedded objects removed."""
    return _markdown(_soup(html))


def _soup(html: str) -> BeautifulSoup:
    with warnings.catch_warnings():
        # XHTML (an XML declaration first) is read with the HTML parser on purpose: the
        # converter needs HTML tag names, and lxml's HTML parser copes with both.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(html, "lxml")


def _title(soup: BeautifulSoup) -> str | None:
    """The text of the page's title element: the first `<title>` outside inline SVG and
    MathML, whose own `<title>` elements name a drawing, not the page (as browsers read it)."""
    for tag in soup.find_all("title"):
        if tag.find_parent(_FOREIGN_TAGS) is None:
            return str(tag.get_text())
    return None


def _markdown(soup: BeautifulSoup) -> str:
    """Markdown for a parsed page (which loses its non-content elements)."""
    for tag in soup(_DROPPED_TAGS):
        tag.decompose()
    _formulas_as_latex(soup)
    converter = _Converter(heading_style="ATX", bullets="-", escape_misc=False)
    markdown = str(converter.convert_soup(soup))
    return _BLANK_LINES.sub("\n\n", markdown).strip()


def _formulas_as_latex(soup: BeautifulSoup) -> None:
    """Replace the content of each MathML `<math>` by its LaTeX (`$...$`, or `$$...$$` for
    `display="block"`), so that the converter neither escapes it nor walks the formula."""
    for tag in soup.find_all("math"):
        if tag.decomposed:
            continue  # inside a formula already replaced
        latex = mathml_soup_latex(tag)
        tag.clear(decompose=True)
        tag.attrs = {_LATEX_ATTRIBUTE: latex}


def declared_charset(data: bytes) -> str | None:
    """Return the codec a `<meta>` tag or XML declaration at the start of `data` names, if any."""
    return markup_charset(data)


class HtmlExtractor:
    """HTML and XHTML documents rendered as Markdown."""

    name = "html"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept HTML and XHTML media types."""
        return info.media_type in _HTML_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the page as Markdown (headings, lists, links, tables), titled by its
        `<title>`."""
        soup = _soup(decode_html(blob.data, transport=blob.info.charset))
        title = _title(soup)  # before the head is dropped
        return build_text([_markdown(soup)], handler=self.name, paged=False, title=title)


FORMATS = (
    Format(name="html", media_types=(mt.HTML, mt.XHTML), kind="html",
           handlers=(Handler(HtmlExtractor(), PRIORITY_TEXT_FORMAT),), extension=".html"),
)
