"""PdfGuard: decide whether a PDF can be processed (encryption, corruption, page limits).

pypdf reads the structure strictly; when it fails (no `startxref`, a broken cross-reference
table, a malformed XFA form), PDFium, which rebuilds the cross-reference table as viewers do,
gets the last word before the file is called corrupt. The limits apply to the repaired document.
"""

from __future__ import annotations

import io
import logging
import zlib
from dataclasses import dataclass

from content_core.errors import (
    BinaryTooLargeError,
    CorruptPdfError,
    EncryptedPdfError,
    MissingDependencyError,
)

__all__ = ["PdfGuard", "PdfReport"]

_log = logging.getLogger(__name__)

_PDFIUM_ERR_PASSWORD = 4  # FPDF_ERR_PASSWORD


@dataclass(frozen=True, slots=True)
class PdfReport:
    """What the guard learnt: pages, encryption, and decrypted bytes when a password was used.

    `owner_password_only` is True for PDFs that are encrypted but open with an empty user
    password (they carry only permission restrictions). `decrypted` holds an unencrypted copy
    when one of the configured passwords was needed; text tools should read that copy.
    `repaired` is True when only PDFium could open the file (it rebuilt the structure).
    """

    page_count: int
    encrypted: bool
    owner_password_only: bool
    decrypted: bytes | None = None
    repaired: bool = False


class PdfGuard:
    """Pre-flight check of a PDF before any text tool touches it.

    Rejects PDFs that need a password we do not have (`EncryptedPdfError`), PDFs that neither
    pypdf nor PDFium's repair can open or whose content streams do not decode
    (`CorruptPdfError`), and PDFs over the page limit (`BinaryTooLargeError`).
    """

    def __init__(self, *, max_pages: int = 5000, passwords: tuple[str, ...] = ()) -> None:
        self.max_pages = max_pages
        self.passwords = passwords

    def check(self, data: bytes, *, filename: str | None = None) -> PdfReport:
        """Return a `PdfReport` for `data`, or raise the error that explains why it is unusable.

        Raises:
            EncryptedPdfError: a user password is required and none configured opens it.
            CorruptPdfError: no header, or unreadable even for PDFium, or a content stream
                that does not inflate.
            BinaryTooLargeError: more pages than `max_pages`.
        """
        name = filename or "<pdf>"
        try:
            from pypdf import PdfReader, PdfWriter
            from pypdf.errors import PdfReadError, PdfStreamError, PyPdfError
        except ImportError as exc:  # pragma: no cover - pypdf is a core dependency
            raise MissingDependencyError("pypdf is required to check PDFs", extra="binary") from exc

        start = data.find(b"%PDF-", 0, 1024)
        if start < 0:
            raise CorruptPdfError(f"{name}: no %PDF header", media_type="application/pdf")
        # pypdf raises a wide range of exceptions on hostile input (its own, plus KeyError,
        # ValueError, TypeError, AttributeError, ... from half-parsed objects); all of them mean
        # the file is malformed.
        parse_errors = (
            PyPdfError,
            PdfReadError,
            PdfStreamError,
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            IndexError,
            AssertionError,
            RecursionError,
            OSError,
            NotImplementedError,
        )
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            encrypted = reader.is_encrypted
            owner_only = False
            decrypted: bytes | None = None
            if encrypted:
                owner_only, used_password = self._unlock(reader, name)
                if used_password:
                    writer = PdfWriter(clone_from=reader)
                    buffer = io.BytesIO()
                    writer.write(buffer)
                    decrypted = buffer.getvalue()
            page_count = len(reader.pages)
            if page_count <= self.max_pages:
                for index, page in enumerate(reader.pages):
                    _check_page_streams(page, name, index + 1)
        except (EncryptedPdfError, CorruptPdfError):
            raise
        except parse_errors as exc:
            # Missing trailers and broken cross-reference tables are common and recoverable.
            return self._repair(data, name, f"{type(exc).__name__}: {exc}")
        if page_count == 0:
            raise CorruptPdfError(f"{name}: the PDF has no pages", media_type="application/pdf")
        self._check_pages(page_count, name)
        self._check_content(decrypted or data, name, page_count)
        return PdfReport(
            page_count=page_count,
            encrypted=encrypted,
            owner_password_only=owner_only,
            decrypted=decrypted,
        )

    def _check_pages(self, page_count: int, name: str) -> None:
        if page_count > self.max_pages:
            raise BinaryTooLargeError(
                f"{name}: {page_count} pages, over max_pdf_pages={self.max_pages}",
                media_type="application/pdf",
                limit="max_pdf_pages",
                value=page_count,
                maximum=self.max_pages,
            )

    def _repair(self, data: bytes, name: str, strict_error: str) -> PdfReport:
        """Open a PDF that pypdf could not parse with PDFium, which rebuilds the structure;
        the guard's limits (encryption, pages) then apply to what PDFium sees."""
        try:
            import pypdfium2 as pdfium
        except ImportError as exc:  # pragma: no cover - pypdfium2 is a core dependency
            raise CorruptPdfError(
                f"{name}: unreadable PDF structure ({strict_error})", media_type="application/pdf"
            ) from exc
        passwords: tuple[str | None, ...] = (None, *self.passwords)
        for password in passwords:
            try:
                document = pdfium.PdfDocument(data, password=password)
            except pdfium.PdfiumError as exc:
                if getattr(exc, "err_code", None) == _PDFIUM_ERR_PASSWORD:
                    continue
                raise CorruptPdfError(
                    f"{name}: unreadable PDF structure ({strict_error}), and PDFium cannot "
                    f"repair it ({exc})",
                    media_type="application/pdf",
                ) from exc
            decrypted: bytes | None = None
            try:
                page_count = len(document)
                if password is not None and page_count:
                    # Text tools read PDFs without a password: hand them a decrypted copy.
                    buffer = io.BytesIO()
                    document.save(buffer, flags=pdfium.raw.FPDF_REMOVE_SECURITY)
                    decrypted = buffer.getvalue()
            finally:
                document.close()
            if page_count == 0:
                raise CorruptPdfError(
                    f"{name}: unreadable PDF structure ({strict_error}); PDFium repairs it but "
                    "finds no pages",
                    media_type="application/pdf",
                )
            self._check_pages(page_count, name)
            _log.debug("%s: pypdf failed (%s); PDFium repaired it", name, strict_error)
            return PdfReport(
                page_count=page_count,
                encrypted=password is not None,
                owner_password_only=False,
                decrypted=decrypted,
                repaired=True,
            )
        raise EncryptedPdfError(
            f"{name}: encrypted PDF and a user password is required", media_type="application/pdf"
        )

    def _unlock(self, reader: object, name: str) -> tuple[bool, bool]:
        """Return (opened with the empty user password, needed a configured password)."""
        from pypdf import PasswordType
        from pypdf.errors import PyPdfError

        decrypt = reader.decrypt  # type: ignore[attr-defined]
        try:
            if decrypt("") != PasswordType.NOT_DECRYPTED:
                return True, False
            for password in self.passwords:
                if decrypt(password) != PasswordType.NOT_DECRYPTED:
                    return False, True
        except (PyPdfError, NotImplementedError, ValueError, KeyError) as exc:
            raise EncryptedPdfError(
                f"{name}: encrypted PDF with an unsupported scheme ({exc})",
                media_type="application/pdf",
            ) from exc
        raise EncryptedPdfError(
            f"{name}: encrypted PDF and a user password is required", media_type="application/pdf"
        )

    def _check_content(self, data: bytes, name: str, page_count: int) -> None:
        """Open the document with pdfium, the text tool downstream: a PDF that pypdf
        repaired but pdfium cannot load is corrupt for every practical purpose. (Content
        streams are checked by `_check_page_streams`; pdfium would hide a broken one behind
        empty text.)"""
        try:
            import pypdfium2 as pdfium
        except ImportError:  # pragma: no cover - pypdfium2 is a core dependency
            _log.debug("pypdfium2 absent: %s not opened with pdfium", name)
            return
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            message = str(exc)
            if "password" in message.lower():
                raise EncryptedPdfError(
                    f"{name}: encrypted PDF ({message})", media_type="application/pdf"
                ) from exc
            raise CorruptPdfError(f"{name}: {message}", media_type="application/pdf") from exc
        try:
            if len(document) == 0:
                raise CorruptPdfError(f"{name}: pdfium sees no pages", media_type="application/pdf")
            if len(document) != page_count:
                _log.debug("%s: pypdf sees %d pages, pdfium %d", name, page_count, len(document))
        finally:
            document.close()


def _check_page_streams(page: object, name: str, number: int) -> None:
    """Raise `CorruptPdfError` when a Flate content stream of the page inflates to nothing.

    pypdf and pdfium both turn a broken content stream into silently empty text, so the raw
    stream is inflated here; a stream that yields some bytes before an error is tolerated (many
    writers leave a bad checksum that viewers accept).
    """
    from pypdf.generic import ArrayObject

    contents = page.get("/Contents")  # type: ignore[attr-defined]
    if contents is None:
        return
    contents = contents.get_object()
    streams = list(contents) if isinstance(contents, ArrayObject) else [contents]
    for ref in streams:
        stream = ref.get_object()
        filters = stream.get("/Filter")
        if filters is None:
            continue
        names = [str(f) for f in filters] if isinstance(filters, ArrayObject) else [str(filters)]
        if names[:1] != ["/FlateDecode"]:
            continue
        # `_data` is the still-encoded (but already decrypted) stream body.
        raw = getattr(stream, "_data", b"")
        if not raw:
            continue
        inflater = zlib.decompressobj()
        try:
            produced = inflater.decompress(raw, 1 << 16)
        except zlib.error as exc:
            produced = b""
            error: zlib.error | None = exc
        else:
            error = None
        if error is not None and not produced:
            raise CorruptPdfError(
                f"{name}: content stream of page {number} cannot be inflated ({error})",
                media_type="application/pdf",
            ) from error
