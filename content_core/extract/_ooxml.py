"""Let python-docx, openpyxl and python-pptx read the variants they refuse.

- Macro-enabled, template and slideshow packages: the libraries refuse a main part whose
  content type is not the plain document's, although the XML is the same.
- Strict OOXML (ISO/IEC 29500 Strict, Word's "Strict Open XML Document"): the same parts
  with `http://purl.oclc.org/ooxml/...` namespaces and relationship types, which none of the
  libraries know ("no relationship of type .../officeDocument").

For those the package is re-zipped in memory with the content type replaced and the strict
URIs rewritten to their transitional spelling (the zip guard has already bounded every part).
"""

from __future__ import annotations

import io
import re
import zipfile

__all__ = [
    "PRESENTATION_MAIN",
    "PRESENTATION_VARIANTS",
    "WORD_MAIN",
    "WORD_VARIANTS",
    "as_plain_package",
    "is_strict_package",
]

_CONTENT_TYPES = "[Content_Types].xml"
_PACKAGE_RELS = "_rels/.rels"
_STRICT_MARK = b"http://purl.oclc.org/ooxml/"
# `http://purl.oclc.org/ooxml/<area>/<name>` is `http://schemas.openxmlformats.org/<area>/2006/
# <name>` in transitional, and relationship types nest one level deeper. Bounded classes
# and a literal prefix keep the match linear.
_STRICT_URI = re.compile(
    rb"http://purl\.oclc\.org/ooxml/(officeDocument/relationships|[A-Za-z]{1,40})/([A-Za-z]{1,40})"
)
# The two names that are spelled differently, not only moved.
_RENAMED = {
    b"extendedProperties": b"extended-properties",
    b"customProperties": b"custom-properties",
}

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


def is_strict_package(archive: zipfile.ZipFile) -> bool:
    """True when the package's relationships use the ISO 29500 Strict namespaces."""
    try:
        with archive.open(_PACKAGE_RELS) as handle:
            return _STRICT_MARK in handle.read(256 * 1024)
    except KeyError:
        return False


def _transitional(match: re.Match[bytes]) -> bytes:
    area, name = match.group(1), match.group(2)
    name = _RENAMED.get(name, name)
    if area == b"officeDocument/relationships":
        return b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/" + name
    return b"http://schemas.openxmlformats.org/" + area + b"/2006/" + name


def as_plain_package(
    data: bytes,
    archive: zipfile.ZipFile,
    variants: tuple[str, ...] = (),
    plain: str = "",
) -> bytes:
    """Return `data`, or a rewritten copy: the main content type `plain` instead of one of
    `variants`, and transitional instead of Strict namespaces and relationship types."""
    strict = is_strict_package(archive)
    try:
        declared = archive.read(_CONTENT_TYPES).decode("utf-8", errors="replace")
    except KeyError:
        declared = ""
    variant = any(v in declared for v in variants)
    if not variant and not strict:
        return data
    for name in variants:
        declared = declared.replace(name, plain)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy:
        for member in archive.infolist():
            if member.filename == _CONTENT_TYPES:
                body = declared.encode("utf-8")
            else:
                body = archive.read(member)
                if strict and member.filename.endswith((".xml", ".rels")):
                    body = _STRICT_URI.sub(_transitional, body)
            copy.writestr(member.filename, body)
    return out.getvalue()
