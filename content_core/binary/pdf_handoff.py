"""One opened PDF handed from `PdfGuard` to the PDFium text extractor in the same thread.

The guard opens a document and loads every page to check it; the extractor needs the same
document and pages next. Handing them over parses each document once and loads each page once
on its way through normalisation and extraction, instead of once per step.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_HANDED_PAGES", "OpenedPdf", "discard_opened_pdf", "hand_over", "take_over"]

# Pages the guard keeps loaded for the extractor. A longer document's later pages are closed
# after their check and loaded again by the extractor: this bounds what one document holds in
# memory between the two steps.
MAX_HANDED_PAGES = 256

_SLOT = threading.local()


@dataclass(slots=True)
class OpenedPdf:
    """A PDFium document opened (without a password) from `data`, its form environment set up
    when `forms`, and the pages already loaded, by index."""

    data: bytes
    # Any: pypdfium2's PdfDocument and PdfPage (the library ships no type information).
    document: Any
    forms: bool
    pages: dict[int, Any] = field(default_factory=dict)

    def close(self) -> None:
        """Close the document and every page still loaded."""
        self.pages.clear()
        self.document.close()


def hand_over(opened: OpenedPdf) -> None:
    """Keep `opened` for the next `take_over` of its bytes in this thread (closing the one
    kept before: one document at a time)."""
    discard_opened_pdf()
    _SLOT.pdf = opened


def take_over(data: bytes) -> OpenedPdf | None:
    """The document kept for `data` (the caller closes it), or None when there is none."""
    opened: OpenedPdf | None = getattr(_SLOT, "pdf", None)
    if opened is None or not (opened.data is data or opened.data == data):
        return None
    _SLOT.pdf = None
    return opened


def discard_opened_pdf() -> None:
    """Close the document kept in this thread, if any (nothing is going to take it over)."""
    opened: OpenedPdf | None = getattr(_SLOT, "pdf", None)
    _SLOT.pdf = None
    if opened is not None:
        opened.close()
