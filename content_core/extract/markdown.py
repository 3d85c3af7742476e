"""Markdown passes through unchanged apart from decoding: it already is the target format."""

from __future__ import annotations

from content_core.binary import media_types as mt
from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import PRIORITY_TEXT_FORMAT, Format, Handler

__all__ = ["FORMATS", "MarkdownExtractor"]

_MARKDOWN_TYPES = frozenset({mt.MARKDOWN, "text/x-markdown"})


class MarkdownExtractor:
    """Decodes Markdown and keeps its markup, which chunkers use for structure."""

    name = "markdown"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `text/markdown` and its older `text/x-markdown` alias."""
        return info.media_type in _MARKDOWN_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the decoded Markdown source."""
        text = decode_bytes(blob.data, declared=blob.info.charset)
        return build_text([text], handler=self.name, paged=False)


FORMATS = (
    Format(name="markdown", media_types=(mt.MARKDOWN,), kind="markdown",
           handlers=(Handler(MarkdownExtractor(), PRIORITY_TEXT_FORMAT),), extension=".md",
           text_to_pdf=True),
)
