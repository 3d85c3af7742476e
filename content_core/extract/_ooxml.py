"""Let python-docx and python-pptx read the macro-enabled, template and slideshow variants.

Both libraries refuse a package whose main part has any content type but the plain
document's, although the XML is the same. For those variants the package is re-zipped in
memory with `[Content_Types].xml` naming the plain type (the zip guard has already checked it).
"""

from __future__ import annotations

import io
import zipfile

__all__ = [
    "PRESENTATION_MAIN",
    "PRESENTATION_VARIANTS",
    "WORD_MAIN",
    "WORD_VARIANTS",
    "as_plain_package",
]

_CONTENT_TYPES = "[Content_Types].xml"

WORD_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
WORD_VARIANTS = (
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)
PRESENTATION_MAIN = (
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
)
PRESENTATION_VARIANTS = (
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml",
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml",
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
)


def as_plain_package(
    data: bytes, archive: zipfile.ZipFile, variants: tuple[str, ...], plain: str
) -> bytes:
    """Return `data`, or a copy whose main content type is `plain` if it used a variant."""
    try:
        declared = archive.read(_CONTENT_TYPES).decode("utf-8", errors="replace")
    except KeyError:
        return data
    if not any(variant in declared for variant in variants):
        return data
    for variant in variants:
        declared = declared.replace(variant, plain)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy:
        for member in archive.infolist():
            if member.filename == _CONTENT_TYPES:
                copy.writestr(member.filename, declared.encode("utf-8"))
            else:
                copy.writestr(member.filename, archive.read(member))
    return out.getvalue()
