"""Opened PDFs as values: `OpenedPdf`, a document `PdfGuard` opened and checked, and
`PdfHandles`, the ones kept open for one raw file between normalisation and extraction.

The guard opens a document and loads every page to check it; the PDFium extractor needs the same
document and pages next. Passing the opened document to it (`extract_text(..., opened_pdf=...)`)
parses each document once and loads each page once on their way through both steps. Whoever
holds a handle closes it; `PdfHandles` closes every handle nobody took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

__all__ = ["MAX_KEPT_DOCUMENTS", "MAX_KEPT_PAGES", "OpenedPdf", "PdfHandles"]

# What one raw file keeps open between its check and its extraction: at most this many
# documents and this many loaded pages over all of them. A document past the limits is closed
# after its check and parsed again by the extractor; these bound the memory a file full of
# PDFs (an archive, an email) holds between the two steps.
MAX_KEPT_DOCUMENTS = 8
MAX_KEPT_PAGES = 256


@dataclass(slots=True, eq=False)
class OpenedPdf:
    """A PDFium document opened (without a password) from `data`, its form environment set up
    when `forms`, and the pages already loaded, by index (a reader takes them out as it reads
    them, and closes them)."""

    data: bytes
    # Any: pypdfium2's PdfDocument and PdfPage (the library ships no type information).
    document: Any
    forms: bool
    pages: dict[int, Any] = field(default_factory=dict)
    closed: bool = False

    def close(self) -> None:
        """Close the document and every page still loaded; closing again does nothing."""
        if self.closed:
            return
        self.closed = True
        self.pages.clear()
        self.document.close()  # closes the pages still loaded with it

    def __enter__(self) -> OpenedPdf:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class PdfHandles:
    """The PDFs one raw file keeps open for its extraction, by artifact id (the SHA-256 of the
    bytes); used as a context manager, it closes on exit every handle nobody took.

    The normaliser `keep`s what the guard opened while room is left (`pages_to_keep`); the
    records `take` each artifact's handle and close it when the artifact is done.
    """

    def __init__(
        self, *, max_documents: int = MAX_KEPT_DOCUMENTS, max_pages: int = MAX_KEPT_PAGES
    ) -> None:
        self.max_documents = max_documents
        self.max_pages = max_pages
        self._held: dict[str, OpenedPdf] = {}

    def pages_to_keep(self) -> int | None:
        """How many loaded pages the next document may keep; None when no further document
        may be kept open."""
        if len(self._held) >= self.max_documents:
            return None
        return max(0, self.max_pages - sum(len(held.pages) for held in self._held.values()))

    def keep(self, artifact_id: str, opened: OpenedPdf) -> None:
        """Hold `opened` for the artifact `artifact_id` (closing one held for it before)."""
        previous = self._held.pop(artifact_id, None)
        if previous is not None and previous is not opened:
            previous.close()
        self._held[artifact_id] = opened

    def take(self, artifact_id: str) -> OpenedPdf | None:
        """The handle held for `artifact_id`, now the caller's to close; None when none is."""
        return self._held.pop(artifact_id, None)

    def close(self) -> None:
        """Close every handle still held."""
        held, self._held = self._held, {}
        for opened in held.values():
            opened.close()

    def __len__(self) -> int:
        return len(self._held)

    def __enter__(self) -> PdfHandles:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
