"""PDF text per page through pypdf: slower than PDFium, tried when PDFium fails."""

from __future__ import annotations

import io
import logging

import pypdf

from content_core.binary import media_types as mt
from content_core.errors import CorruptPdfError, EncryptedPdfError
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text

logger = logging.getLogger(__name__)

__all__ = ["PDF_TYPES", "PypdfExtractor"]

# The sniffed type and the alias older senders declare.
PDF_TYPES = frozenset({mt.PDF, "application/x-pdf"})



class PypdfExtractor:
    """Page texts from pypdf's pure-Python parser (more lenient with some broken files)."""

    name = "pypdf"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept PDF media types."""
        return info.media_type in PDF_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page span per page (up to `options.max_pdf_pages`).

        Raises:
            EncryptedPdfError: the PDF needs a password.
            CorruptPdfError: pypdf cannot parse the file.
        """
        media_type = blob.info.media_type
        try:
            reader = pypdf.PdfReader(io.BytesIO(blob.data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise EncryptedPdfError(
                    "PDF is encrypted and does not open with an empty password",
                    media_type=media_type,
                    stage="extract",
                )
            count = len(reader.pages)
            read = min(count, options.max_pdf_pages)
            pages = [reader.pages[i].extract_text() or "" for i in range(read)]
        except pypdf.errors.FileNotDecryptedError as exc:
            raise EncryptedPdfError(
                "PDF is encrypted", media_type=media_type, stage="extract"
            ) from exc
        except (pypdf.errors.PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
            raise CorruptPdfError(
                f"pypdf cannot read the PDF: {exc}", media_type=media_type
            ) from exc
        return build_text(pages, handler=self.name, paged=True)
