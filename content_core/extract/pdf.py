"""PDF text per page through pypdfium2 (PDFium): fast and in reading order.

Owner-password-only PDFs open with the empty user password, as in any viewer; a PDF that
needs a real password raises `EncryptedPdfError`.
"""

from __future__ import annotations

import logging
from typing import Any

from content_core.errors import CorruptPdfError, EncryptedPdfError, MissingDependencyError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text

logger = logging.getLogger(__name__)

__all__ = ["PDF_TYPES", "PdfiumExtractor"]

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
# PDFium's FPDF_GetLastError code for a wrong or missing password.
_PDFIUM_ERR_PASSWORD = 4


def _load_pdfium() -> Any:  # Any: the pypdfium2 module, imported lazily
    try:
        import pypdfium2
    except ImportError as exc:
        raise MissingDependencyError(
            "pypdfium2 is not installed (a core dependency: pip install pypdfium2)"
        ) from exc
    return pypdfium2


class PdfiumExtractor:
    """Page texts of a PDF from PDFium's text layer (no OCR: scanned pages come out empty)."""

    name = "pdfium"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept PDF media types."""
        return info.media_type in PDF_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page span per page (up to `options.max_pages`).

        Raises:
            EncryptedPdfError: the PDF needs a password.
            CorruptPdfError: PDFium cannot open the file.
        """
        pdfium = _load_pdfium()
        try:
            document = pdfium.PdfDocument(blob.data)
        except pdfium.PdfiumError as exc:
            if getattr(exc, "err_code", None) == _PDFIUM_ERR_PASSWORD or "password" in str(exc):
                raise EncryptedPdfError(
                    "PDF is encrypted and does not open with an empty password",
                    media_type=blob.info.media_type,
                    stage="extract",
                ) from exc
            raise CorruptPdfError(
                f"PDFium cannot open the PDF: {exc}", media_type=blob.info.media_type
            ) from exc
        try:
            count = len(document)
            if count > options.max_pages:
                logger.warning("PDF has %d pages; reading the first %d", count, options.max_pages)
            pages = [_page_text(document, index) for index in range(min(count, options.max_pages))]
        except pdfium.PdfiumError as exc:
            raise CorruptPdfError(
                f"PDFium failed while reading a page: {exc}", media_type=blob.info.media_type
            ) from exc
        finally:
            document.close()
        return build_text(pages, handler=self.name, paged=True)


def _page_text(document: Any, index: int) -> str:
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            return str(textpage.get_text_range())
        finally:
            textpage.close()
    finally:
        page.close()
