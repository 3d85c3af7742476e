"""PDF text per page through pypdfium2 (PDFium): fast and in reading order.

Owner-password-only PDFs open with the empty user password, as in any viewer; a PDF that
needs a real password raises `EncryptedPdfError`.
"""

from __future__ import annotations

import logging
from typing import Any

import pypdfium2 as pdfium

from content_core.binary import media_types as mt
from content_core.errors import CorruptPdfError, EncryptedPdfError
from content_core.extract._bidi import PlacedChar, has_rtl, logical_text
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.extract.pdf_fallback import PDF_TYPES, PypdfExtractor, xmp_title
from content_core.extract.pdf_layout import PageLayout, read_layout, read_outline
from content_core.extract.pdf_reading import read_pages
from content_core.extract.pdf_structure import structure_pages
from content_core.formats import PRIORITY_FALLBACK, Format, Handler, NormaliseStep, Signature

logger = logging.getLogger(__name__)

__all__ = ["FORMATS", "PDF_TYPES", "PdfiumExtractor"]

# PDFium's FPDF_GetLastError code for a wrong or missing password.
_PDFIUM_ERR_PASSWORD = 4



class PdfiumExtractor:
    """Page texts of a PDF from PDFium's text layer (no OCR: scanned pages come out empty)."""

    name = "pdfium"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept PDF media types."""
        return info.media_type in PDF_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return one page span per page (up to `options.max_pdf_pages`).

        Reads `blob.opened_pdf`, the guard's open document of these bytes with its pages
        loaded, when there is one (and leaves it to its owner to close); else parses the bytes.

        Raises:
            EncryptedPdfError: the PDF needs a password.
            CorruptPdfError: PDFium cannot open the file.
        """
        pdf = blob.opened_pdf
        opened = pdf if pdf is not None and not pdf.closed else None
        try:
            document = opened.document if opened is not None else pdfium.PdfDocument(blob.data)
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
            # Filled-in AcroForm values are not part of the page text; PDFium reads them only
            # once the form environment exists, which must happen before pages load.
            if opened is not None:
                has_forms = opened.forms
            else:
                has_forms = pdfium.raw.FPDF_GetFormType(document) != pdfium.raw.FORMTYPE_NONE
                if has_forms:
                    document.init_forms()
            loaded = opened.pages if opened is not None else {}
            count = len(document)
            if count > options.max_pdf_pages:
                logger.warning(
                    "PDF has %d pages; reading the first %d", count, options.max_pdf_pages
                )
            read = [
                _page_text(pdfium, document, index, loaded.pop(index, None), forms=has_forms)
                for index in range(min(count, options.max_pdf_pages))
            ]
            # Furniture is known across pages (repeated heads); headings and tables need the
            # whole document (body size, bookmarks) and run on the body's lines in order.
            reading = read_pages([layout for layout, _ in read])
            texts = structure_pages(reading.pages, read_outline(document))
            pages = [page.text + fields for page, (_, fields) in zip(texts, read, strict=True)]
            # The document information dictionary's /Title; PDFium does not read XMP.
            title = document.get_metadata_value("Title")
        except pdfium.PdfiumError as exc:
            raise CorruptPdfError(
                f"PDFium failed while reading a page: {exc}", media_type=blob.info.media_type
            ) from exc
        finally:
            if opened is None:
                document.close()
        return build_text(
            pages, handler=self.name, paged=True, title=title or xmp_title(blob.data),
            furniture=reading.furniture, boxes=[page.boxes for page in texts],
        )  # fmt: skip


def _page_text(
    pdfium: Any, document: Any, index: int, loaded: Any, *, forms: bool
) -> tuple[PageLayout, str]:
    """Return the page's layout and its filled-in form fields (as text to append). `loaded`
    is the page when it is loaded already (it is closed here), else None."""
    page = loaded if loaded is not None else document[index]
    try:
        if page.get_rotation():
            # PDFium orders the lines of a /Rotate 90 page bottom-up; reading order comes out
            # right in the unrotated frame (the change stays in memory, nothing is saved).
            page.set_rotation(0)
        textpage = page.get_textpage()
        try:
            text = str(textpage.get_text_range())
            if has_rtl(text):
                # PDFium keeps Arabic and Hebrew close to visual order: put them in reading order.
                drawn = read_layout(pdfium.raw, page, textpage, text, index).lines
                logical = logical_text(_placed_chars(pdfium.raw, textpage))
                layout = PageLayout(index, logical, rtl_lines=drawn)
            else:
                layout = read_layout(pdfium.raw, page, textpage, text, index)
        finally:
            textpage.close()
        suffix = ""
        if forms:
            fields = _form_fields(pdfium.raw, document, page)
            if fields:
                suffix = "\n\nForm fields:\n" + "\n".join(f"- {n}: {v}" for n, v in fields)
        return layout, suffix
    finally:
        page.close()


def _placed_chars(raw: Any, textpage: Any) -> list[PlacedChar]:
    """Every character of the text page with its loose (advance) box and font size."""
    import ctypes

    chars: list[PlacedChar] = []
    rect = raw.FS_RECTF()
    left = right = 0.0
    for index in range(raw.FPDFText_CountChars(textpage.raw)):
        code = raw.FPDFText_GetUnicode(textpage.raw, index)
        if not code or code > 0x10FFFF:
            continue
        if raw.FPDFText_GetLooseCharBox(textpage.raw, index, ctypes.byref(rect)):
            left, right = float(rect.left), float(rect.right)
        # else: no box (a character PDFium made up); it shares the previous one's place.
        size = float(raw.FPDFText_GetFontSize(textpage.raw, index))
        chars.append(PlacedChar(chr(code), left, right, size))
    return chars


_VALUE_FIELD_TYPES = (
    "FPDF_FORMFIELD_TEXTFIELD",
    "FPDF_FORMFIELD_COMBOBOX",
    "FPDF_FORMFIELD_LISTBOX",
)
_CHOICE_FIELD_TYPES = ("FPDF_FORMFIELD_CHECKBOX", "FPDF_FORMFIELD_RADIOBUTTON")
_MAX_FIELD_CHARS = 4096


def _form_fields(raw: Any, document: Any, page: Any) -> list[tuple[str, str]]:
    """Return (name, value) for the page's widgets that carry a value (checked boxes: on)."""
    env = document.formenv.raw
    value_types = {getattr(raw, name) for name in _VALUE_FIELD_TYPES}
    choice_types = {getattr(raw, name) for name in _CHOICE_FIELD_TYPES}
    fields: list[tuple[str, str]] = []
    for index in range(raw.FPDFPage_GetAnnotCount(page.raw)):
        annot = raw.FPDFPage_GetAnnot(page.raw, index)
        if not annot:
            continue
        try:
            if raw.FPDFAnnot_GetSubtype(annot) != raw.FPDF_ANNOT_WIDGET:
                continue
            kind = raw.FPDFAnnot_GetFormFieldType(env, annot)
            if kind not in value_types and kind not in choice_types:
                continue
            value = _wide_string(raw, raw.FPDFAnnot_GetFormFieldValue, env, annot)
            if not value or (kind in choice_types and value == "Off"):
                continue
            entry = (_wide_string(raw, raw.FPDFAnnot_GetFormFieldName, env, annot), value)
            if entry not in fields:
                fields.append(entry)
        finally:
            raw.FPDFPage_CloseAnnot(annot)
    return fields


def _wide_string(raw: Any, getter: Any, env: Any, annot: Any) -> str:
    """Call a PDFium getter that fills a UTF-16LE buffer (two calls: size, then data)."""
    import ctypes

    size = int(getter(env, annot, None, 0))
    if size <= 2:
        return ""
    size = min(size, 2 * _MAX_FIELD_CHARS + 2)
    buffer = ctypes.create_string_buffer(size)
    getter(env, annot, ctypes.cast(buffer, ctypes.POINTER(raw.FPDF_WCHAR)), size)
    return buffer.raw[: size - 2].decode("utf-16-le", errors="replace").strip()


# PDFium first; pypdf reads some files PDFium refuses.
FORMATS = (
    Format(name="pdf", media_types=(mt.PDF,), kind="pdf", normalise=NormaliseStep.GUARD_PDF,
           handlers=(Handler(PdfiumExtractor()), Handler(PypdfExtractor(), PRIORITY_FALLBACK)),
           signatures=(Signature(b"%PDF-"),), extension=".pdf"),
)
