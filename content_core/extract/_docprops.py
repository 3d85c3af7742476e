"""A package's own title: the Dublin Core `dc:title` of an OOXML package's core properties
(`docProps/core.xml`) and of an OpenDocument package's `meta.xml`."""

from __future__ import annotations

import zipfile

from content_core.extract._opc import package_rels, read_part

__all__ = ["odf_title", "ooxml_title"]

_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
# The package relationship to the core properties part; Strict packages use the same type.
_CORE_PROPERTIES = "/metadata/core-properties"
_CORE_PART = "docProps/core.xml"


def _dc_title(archive: zipfile.ZipFile, part: str, *, media_type: str) -> str | None:
    root = read_part(archive, part, media_type=media_type)
    element = next(root.iter(_DC_TITLE), None) if root is not None else None
    return "".join(element.itertext()) if element is not None else None


def ooxml_title(archive: zipfile.ZipFile, *, media_type: str) -> str | None:
    """The `dc:title` of the package's core properties part; None when the package has no
    such part, the part is not well-formed or it holds no title.

    Raises:
        UnsafeInputError: the part declares dangerous entities.
    """
    part = next(
        (
            target
            for _, kind, target in package_rels(archive, "_rels/.rels")
            if kind.endswith(_CORE_PROPERTIES)
        ),
        _CORE_PART,
    )
    return _dc_title(archive, part, media_type=media_type)


def odf_title(archive: zipfile.ZipFile, *, media_type: str) -> str | None:
    """The `dc:title` of the package's `meta.xml`; None when it has none (as `ooxml_title`).

    Raises:
        UnsafeInputError: `meta.xml` declares dangerous entities.
    """
    return _dc_title(archive, "meta.xml", media_type=media_type)
