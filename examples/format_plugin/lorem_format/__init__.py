"""A content-pipeline format plug-in: `*.lorem` files, whose first line is `LOREM`.

The text of such a file is everything after that first line. The whole format is the
`FORMAT` value below, named by the entry point in pyproject.toml.
"""

from __future__ import annotations

from content_core.extract import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Format, Handler

__all__ = ["FORMAT", "LOREM_MEDIA_TYPE", "LoremExtractor"]

LOREM_MEDIA_TYPE = "text/x-lorem"
_MAGIC_LINE = b"LOREM"


def is_lorem(data: bytes) -> bool:
    """Return True when the first line of `data` is exactly `LOREM`."""
    first_line = data.split(b"\n", 1)[0]
    return first_line.rstrip(b"\r") == _MAGIC_LINE


class LoremExtractor:
    """The text after the `LOREM` line."""

    name = "lorem"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept the lorem media type."""
        return info.media_type == LOREM_MEDIA_TYPE

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the decoded text that follows the first line."""
        _, _, body = blob.data.partition(b"\n")
        return build_text([body.decode("utf-8", errors="replace")], handler=self.name, paged=False)


FORMAT = Format(
    name="lorem",
    media_types=(LOREM_MEDIA_TYPE,),
    kind="lorem",
    handlers=(Handler(LoremExtractor()),),
    sniff=is_lorem,
    extension=".lorem",
)
