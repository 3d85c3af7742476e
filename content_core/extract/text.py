"""Plain text of any textual media type, decoded with encoding detection (the catch-all)."""

from __future__ import annotations

from content_core.binary import media_types as mt
from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import PRIORITY_CATCH_ALL, Format, Handler

__all__ = ["FORMATS", "PlainTextExtractor"]

# Non-`text/*` types whose bytes are text: the structured handlers (JSON, XML, ...) rank
# ahead, and this one takes over when they fail on malformed input.
_TEXTUAL_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/x-python",
        "application/sql",
        "application/x-tex",
        "application/x-subrip",
    }
)


class PlainTextExtractor:
    """Decodes any textual blob as it stands; the last resort for text formats."""

    name = "text"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `text/*`, `+xml`/`+json` types and known textual application types."""
        media_type = info.media_type
        return (
            media_type.startswith("text/")
            or media_type in _TEXTUAL_APPLICATION_TYPES
            or media_type.endswith(("+xml", "+json"))
        )

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the decoded text of `blob`."""
        text = decode_bytes(blob.data, declared=blob.info.charset)
        return build_text([text], handler=self.name, paged=False)


# The catch-all: any text no other handler reads (and plain text itself).
FORMATS = (
    Format(name="text", media_types=(mt.PLAIN,), kind="text",
           handlers=(Handler(PlainTextExtractor(), PRIORITY_CATCH_ALL),), extension=".txt",
           text_to_pdf=True),
)
