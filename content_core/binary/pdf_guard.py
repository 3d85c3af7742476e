"""PdfGuard: decide whether a PDF can be processed (encryption, corruption, page limits).

The document is opened with PDFium, which rebuilds a broken cross-reference table as viewers
do, and every page is loaded: a page that comes out with no content at all has its content
streams inflated (through pypdf) to tell a blank page from a broken one. `check_open` leaves
the document open, its pages loaded, for the text extractor (`pdf_handles`): nothing is parsed
twice.
"""

from __future__ import annotations

import io
import logging
import zlib
from dataclasses import dataclass, field
from typing import Any

from content_core.binary.pdf_handles import MAX_KEPT_PAGES, OpenedPdf
from content_core.errors import (
    BinaryTooLargeError,
    CorruptPdfError,
    EncryptedPdfError,
    MissingDependencyError,
)

__all__ = ["PdfGuard", "PdfReport"]

_log = logging.getLogger(__name__)

_PDFIUM_ERR_PASSWORD = 4  # FPDF_ERR_PASSWORD
_PDFIUM_ERR_SECURITY = 5  # FPDF_ERR_SECURITY: a security handler PDFium does not support
_MEDIA_TYPE = "application/pdf"


@dataclass(frozen=True, slots=True)
class PdfReport:
    """What the guard learnt: pages, encryption, and decrypted bytes when a password was used.

    `owner_password_only` is True for PDFs that are encrypted but open with an empty user
    password (they carry only permission restrictions). `decrypted` holds an unencrypted copy
    when one of the configured passwords was needed; text tools should read that copy.
    """

    page_count: int
    encrypted: bool
    owner_password_only: bool
    decrypted: bytes | None = None
    source: bytes = field(default=b"", repr=False, compare=False)

    @property
    def repaired(self) -> bool:
        """True when the structure is broken for a strict reader (pypdf), so that only a
        reader that rebuilds it, as PDFium does, opens the file. Worked out on access:
        nothing on the pipeline's path needs it."""
        return _strictly_unreadable(self.source)


class PdfGuard:
    """Pre-flight check of a PDF before any text tool touches it.

    Rejects PDFs that need a password we do not have (`EncryptedPdfError`), PDFs that PDFium
    cannot open even after repairing them or whose content streams do not decode
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
        report, _ = self._check(data, filename, keep_pages=None)
        return report

    def check_open(
        self, data: bytes, *, filename: str | None = None, keep_pages: int = MAX_KEPT_PAGES
    ) -> tuple[PdfReport, OpenedPdf | None]:
        """Return what `check` returns, and the document left open with its first `keep_pages`
        pages loaded, for the PDFium extraction of these bytes (`extract_text(...,
        opened_pdf=...)`); the caller closes it. The document is None when it needed a
        password: text tools read the decrypted copy instead.

        Raises:
            EncryptedPdfError: a user password is required and none configured opens it.
            CorruptPdfError: no header, or unreadable even for PDFium, or a content stream
                that does not inflate.
            BinaryTooLargeError: more pages than `max_pages`.
        """
        return self._check(data, filename, keep_pages=max(0, keep_pages))

    def _check(
        self, data: bytes, filename: str | None, *, keep_pages: int | None
    ) -> tuple[PdfReport, OpenedPdf | None]:
        """The report, and the opened document with up to `keep_pages` pages loaded (None
        when `keep_pages` is None or a password was needed; it is closed then)."""
        name = filename or "<pdf>"
        try:
            import pypdfium2 as pdfium
        except ImportError as exc:  # pragma: no cover - pypdfium2 is a core dependency
            raise MissingDependencyError(
                "pypdfium2 is required to check PDFs", extra="binary"
            ) from exc
        if data.find(b"%PDF-", 0, 1024) < 0:
            raise CorruptPdfError(f"{name}: no %PDF header", media_type=_MEDIA_TYPE)
        document, password = self._open(pdfium, data, name)
        opened = OpenedPdf(data, document, forms=False)
        # Pages to keep loaded, or None to close the document after the check (as when it
        # needed a password: text tools read the decrypted copy).
        keep = keep_pages if password is None else None
        try:
            page_count = len(document)
            if page_count == 0:
                raise CorruptPdfError(
                    f"{name}: the PDF has no pages (PDFium finds none)", media_type=_MEDIA_TYPE
                )
            self._check_pages(page_count, name)
            encrypted = pdfium.raw.FPDF_GetSecurityHandlerRevision(document.raw) != -1
            decrypted: bytes | None = None
            if password is not None:
                # Text tools read PDFs without a password: hand them a decrypted copy.
                buffer = io.BytesIO()
                document.save(buffer, flags=pdfium.raw.FPDF_REMOVE_SECURITY)
                decrypted = buffer.getvalue()
            # Filled-in form values need the form environment before pages load (as the
            # extractor, which takes these pages over, reads them).
            opened.forms = pdfium.raw.FPDF_GetFormType(document) != pdfium.raw.FORMTYPE_NONE
            if opened.forms and keep is not None:
                document.init_forms()
            suspect = self._load_pages(pdfium, opened, keep=keep or 0)
            if suspect:
                _check_streams(decrypted or data, name, suspect)
        except BaseException:
            opened.close()
            raise
        if keep is None:
            opened.close()
        report = PdfReport(
            page_count=page_count,
            encrypted=encrypted,
            owner_password_only=encrypted and password is None,
            decrypted=decrypted,
            source=data,
        )
        return report, None if keep is None else opened

    def _check_pages(self, page_count: int, name: str) -> None:
        if page_count > self.max_pages:
            raise BinaryTooLargeError(
                f"{name}: {page_count} pages, over max_pdf_pages={self.max_pages}",
                media_type=_MEDIA_TYPE,
                limit="max_pdf_pages",
                value=page_count,
                maximum=self.max_pages,
            )

    # Any: the pypdfium2 module and its PdfDocument (the library ships no type information).
    def _open(self, pdfium: Any, data: bytes, name: str) -> tuple[Any, str | None]:
        """The document opened with no password or else the first configured one that
        works, and that password."""
        for password in (None, *self.passwords):
            try:
                return pdfium.PdfDocument(data, password=password), password
            except pdfium.PdfiumError as exc:
                code = getattr(exc, "err_code", None)
                if code == _PDFIUM_ERR_PASSWORD:
                    continue
                if code == _PDFIUM_ERR_SECURITY:
                    raise EncryptedPdfError(
                        f"{name}: encrypted PDF with an unsupported scheme ({exc})",
                        media_type=_MEDIA_TYPE,
                    ) from exc
                strict = _strict_error(data)
                reason = f"unreadable PDF structure ({strict})" if strict else "unreadable PDF"
                raise CorruptPdfError(
                    f"{name}: {reason}, and PDFium cannot repair it ({exc})",
                    media_type=_MEDIA_TYPE,
                ) from exc
        raise EncryptedPdfError(
            f"{name}: encrypted PDF and a user password is required", media_type=_MEDIA_TYPE
        )

    @staticmethod
    def _load_pages(pdfium: Any, opened: OpenedPdf, *, keep: int) -> list[int]:
        """Load every page (keeping the first `keep` of them loaded for the extractor); return
        the pages with no content objects at all, or that do not load."""
        suspect: list[int] = []
        for index in range(len(opened.document)):
            try:
                page = opened.document[index]
            except pdfium.PdfiumError:
                suspect.append(index)
                continue
            if pdfium.raw.FPDFPage_CountObjects(page.raw) <= 0:
                suspect.append(index)
            if index < keep:
                opened.pages[index] = page
            else:
                page.close()
        return suspect


# pypdf raises a wide range of exceptions on hostile input (its own, plus KeyError,
# ValueError, TypeError, AttributeError, ... from half-parsed objects); all of them mean the
# file is malformed for a strict reader.
def _pypdf_errors() -> tuple[type[BaseException], ...]:
    from pypdf.errors import PyPdfError

    return (
        PyPdfError,
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


def _strict_error(data: bytes) -> str | None:
    """Why pypdf cannot read the structure of `data`, or None when it can."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            reader.decrypt("")
        len(reader.pages)
    except _pypdf_errors() as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _strictly_unreadable(data: bytes) -> bool:
    return bool(data) and _strict_error(data) is not None


def _check_streams(data: bytes, name: str, indexes: list[int]) -> None:
    """Raise `CorruptPdfError` when a content stream of one of the pages `indexes` (which
    PDFium found empty) does not inflate; a page pypdf cannot reach is left to PDFium."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            reader.decrypt("")
        pages = reader.pages
        for index in indexes:
            if index < len(pages):
                _check_page_streams(pages[index], name, index + 1)
    except CorruptPdfError:
        raise
    except _pypdf_errors() as exc:
        _log.debug("%s: pypdf cannot read the pages PDFium found empty (%s)", name, exc)


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
