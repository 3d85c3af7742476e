"""Text extraction: one handler per format behind `ExtractorRegistry`, and `extract_text`.

```python
from content_core.extract import extract_text
result = extract_text(data, "application/pdf", filename="report.pdf")
result.text, result.pages  # one PageSpan per PDF page
```

Each format module declares its `FORMATS` (see `content_core.formats`); the registry is derived
from them. Built-in handlers, in dispatch order (priority, then registration):

| handler  | media types                  | library             | pages      |
| -------- | ---------------------------- | ------------------- | ---------- |
| pdfium   | PDF (+ AcroForm values)      | pypdfium2           | PDF pages  |
| docx     | DOCX / DOTX / DOCM (+Strict) | python-docx + lxml  | -          |
| xlsx     | XLSX / XLTX / XLSM (+Strict) | openpyxl            | worksheets |
| pptx     | PPTX / PPSX / POTX / PPTM (+Strict) | python-pptx  | slides     |
| odf      | ODT / ODS / ODP / ODG        | lxml                | slides, sheets |
| epub     | EPUB                         | lxml + html handler | -          |
| doc      | Word 6.0/95, Word 97-2003    | olefile             | -          |
| wordperfect | WordPerfect 4.x, 5.x, 6.x-X9 | -                | -          |
| xls      | Excel 97-2003                | xlrd                | worksheets |
| ppt      | PowerPoint 97-2003           | olefile             | slides     |
| wordml   | Word 2003 XML, Word flat XML | expat check + lxml  | -          |
| spreadsheetml | Excel 2003 XML          | expat check + lxml  | worksheets |
| svg      | SVG (title, desc, text)      | expat check + lxml  | -          |
| rtf      | RTF                          | striprtf            | -          |
| pypdf    | PDF, when PDFium fails       | pypdf               | PDF pages  |
| html     | HTML / XHTML to Markdown     | bs4 + markdownify   | -          |
| csv      | CSV / TSV as a table         | csv                 | -          |
| json     | JSON / NDJSON, pretty        | json                | -          |
| xml      | XML / RSS / Atom, pretty     | expat check + lxml  | -          |
| markdown | Markdown (decoded as is)     | -                   | -          |
| text     | any other text, last resort  | charset-normalizer  | -          |

Zip-based packages pass `_zipguard` first (then `_ooxml` rewrites Strict and variant
packages for the Office libraries); XML passes `content_core.xmlsafe`; every result passes
`build_text`/`clean_text` (no NUL, no lone surrogates). Limits live in `ExtractOptions`, the
same model as `BinaryConfig`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.binary.pdf_handles import OpenedPdf
from content_core.extract.base import Blob as Blob
from content_core.extract.base import ExtractedText as ExtractedText
from content_core.extract.base import ExtractOptions as ExtractOptions
from content_core.extract.base import Extractor as Extractor
from content_core.extract.base import PageFurniture as PageFurniture
from content_core.extract.base import PageSpan as PageSpan
from content_core.extract.base import SniffInfo as SniffInfo
from content_core.extract.base import TextBox as TextBox
from content_core.extract.base import build_text as build_text
from content_core.extract.base import clean_text as clean_text
from content_core.extract.box_render import render_boxes as render_boxes
from content_core.extract.boxes import PageBox as PageBox
from content_core.extract.boxes import span_boxes as span_boxes
from content_core.extract.boxes import stored_text_boxes as stored_text_boxes
from content_core.extract.registry import ExtractorRegistry as ExtractorRegistry
from content_core.formats import default_formats


@functools.cache
def default_registry() -> ExtractorRegistry:
    """Return the shared registry: every extractor of `default_formats()` (built-in formats
    and installed plug-ins), in their declared priorities."""
    return ExtractorRegistry.from_formats(default_formats())


def extract_text(
    data: bytes,
    media_type: str,
    *,
    filename: str | None = None,
    options: ExtractOptions | None = None,
    registry: ExtractorRegistry | None = None,
    opened_pdf: OpenedPdf | None = None,
) -> ExtractedText:
    """Return the text of `data`, whose sniffed type is `media_type` (a charset parameter is
    used as a decoding hint).

    The text never holds NUL characters or lone surrogates; a PDF gives one `PageSpan` per page.
    `opened_pdf`, the PDF of `data` as `PdfGuard.check_open` left it open, spares PDFium a second
    parse of it; the caller closes it (it may be used only in part).

    Raises:
        UnsupportedFormatError: no handler accepts the media type.
        UnsafeInputError: a guard refused the input as an attack (overlapping zip entries,
            entity expansion, external entities).
        LimitExceededError: the input is over a configured limit (size, ratio, members, depth).
        EncryptedFileError: the input needs a password.
        MissingDependencyError: the handler for this format needs an uninstalled extra.
        ExtractionError: every accepting handler failed; `attempts` records each one.
    """
    chosen = registry if registry is not None else default_registry()
    return chosen.extract(
        data, media_type, filename=filename, options=options, opened_pdf=opened_pdf
    )


if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
