"""RTF to plain text through striprtf (tables come out with `|` between cells)."""

from __future__ import annotations

import re
from collections.abc import Callable

from striprtf import striprtf

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Format, Handler, NormaliseStep, Signature

__all__ = ["FORMATS", "RtfExtractor"]

_RTF_TYPES = frozenset({mt.RTF, "text/rtf"})
_CODEPAGE = re.compile(rb"\\ansicpg(\d{3,5})")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")



def _codepage(data: bytes) -> str:
    """Return the codec of the document's `\\ansicpgN` (cp1252 when absent or unknown)."""
    match = _CODEPAGE.search(data[:4096])
    if match:
        name = f"cp{int(match.group(1))}"
        try:
            "".encode(name)
        except LookupError:
            return "cp1252"
        return name
    return "cp1252"

# striprtf ships no annotations: its one function, typed here.
_rtf_to_text: Callable[..., str] = striprtf.rtf_to_text


class RtfExtractor:
    """Rich Text Format documents as plain text."""

    name = "rtf"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept `application/rtf` and `text/rtf`."""
        return info.media_type in _RTF_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the document text without control words, in its declared code page.

        Raises:
            ExtractionError: striprtf cannot parse the file.
        """
        source = blob.data.decode("latin-1")  # RTF is 7-bit; \\'xx escapes carry the rest
        try:
            text = _rtf_to_text(source, encoding=_codepage(blob.data), errors="replace")
        except (ValueError, IndexError, KeyError, UnicodeError) as exc:
            raise ExtractionError(
                f"striprtf cannot parse the RTF: {exc}", media_type=blob.info.media_type
            ) from exc
        return build_text([_BLANK_LINES.sub("\n\n", text)], handler=self.name, paged=False)


FORMATS = (
    Format(name="rtf", media_types=(mt.RTF,), kind="rtf",
           normalise=NormaliseStep.RENDER_OFFICE, handlers=(Handler(RtfExtractor()),),
           extension=".rtf",
           signatures=(Signature(b"{\\rtf"),)),
)
