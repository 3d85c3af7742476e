"""Media-type strings used across content_core: one constant per format, no charset suffix.

The values match column 2 of the corpus manifest (minus any `; charset=` part), so that the
sniffer, the normaliser and the text extractors agree on spelling. Which family a type belongs
to (image, archive, text, ...) is declared by its format (`content_core.formats`), not here.
"""

from __future__ import annotations

__all__ = [
    "AVIF",
    "BMP",
    "CSV",
    "DOC",
    "DOCM",
    "DOCX",
    "EML",
    "EMPTY",
    "EPUB",
    "GIF",
    "GZIP",
    "HEIC",
    "HEIF",
    "HTML",
    "JPEG",
    "JSON",
    "MARKDOWN",
    "MSG",
    "NDJSON",
    "OCTET_STREAM",
    "ODP",
    "ODS",
    "ODT",
    "OLE2",
    "PDF",
    "PLAIN",
    "PNG",
    "PPT",
    "PPTM",
    "PPTX",
    "RSS",
    "RTF",
    "SEVEN_ZIP",
    "SPREADSHEETML_2003",
    "SVG",
    "TAR",
    "TIFF",
    "TSV",
    "WEBP",
    "WORDML_2003",
    "WORDPERFECT",
    "XHTML",
    "XLS",
    "XLSM",
    "XLSX",
    "XML",
    "ZIP",
    "base_media_type",
]

PDF = "application/pdf"

PLAIN = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
XHTML = "application/xhtml+xml"
CSV = "text/csv"
TSV = "text/tab-separated-values"
JSON = "application/json"
NDJSON = "application/x-ndjson"
XML = "application/xml"
RSS = "application/rss+xml"
RTF = "application/rtf"

EML = "message/rfc822"
MSG = "application/vnd.ms-outlook"

ZIP = "application/zip"
TAR = "application/x-tar"
GZIP = "application/gzip"
SEVEN_ZIP = "application/x-7z-compressed"

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
# Macro-enabled packages: the same XML as above plus a VBA project (never run here).
DOCM = "application/vnd.ms-word.document.macroenabled.12"
XLSM = "application/vnd.ms-excel.sheet.macroenabled.12"
PPTM = "application/vnd.ms-powerpoint.presentation.macroenabled.12"
# Office 2003 single-file XML (told by their `<?mso-application progid=...?>` instruction);
# the names are the ones Apache Tika uses, as no type is registered.
WORDML_2003 = "application/vnd.ms-wordml"
SPREADSHEETML_2003 = "application/vnd.ms-spreadsheetml"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
EPUB = "application/epub+zip"
DOC = "application/msword"
XLS = "application/vnd.ms-excel"
PPT = "application/vnd.ms-powerpoint"
WORDPERFECT = "application/vnd.wordperfect"
# An OLE2 compound file whose streams match none of DOC/XLS/PPT/MSG.
OLE2 = "application/x-ole-storage"

PNG = "image/png"
JPEG = "image/jpeg"
GIF = "image/gif"
WEBP = "image/webp"
TIFF = "image/tiff"
BMP = "image/bmp"
HEIC = "image/heic"
HEIF = "image/heif"
AVIF = "image/avif"
SVG = "image/svg+xml"

OCTET_STREAM = "application/octet-stream"
EMPTY = "application/x-empty"  # 0 bytes: nothing to sniff, nothing to extract

def base_media_type(value: str) -> str:
    """Return `value` lower-cased without parameters: "Text/CSV; charset=utf-8" -> "text/csv"."""
    return value.split(";", 1)[0].strip().lower()
