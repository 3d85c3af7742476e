"""Walking an OPC package (DOCX, XLSX, PPTX) by its relationships, straight from the zip."""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from typing import Any

from content_core.errors import ExtractionError
from content_core.xmlsafe import check_xml_declarations, parse_checked

__all__ = ["package_rels", "read_part", "worksheet_parts"]

_S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_RELS_TYPE = "application/vnd.openxmlformats-package.relationships+xml"


def read_part(archive: zipfile.ZipFile, name: str, *, media_type: str) -> Any | None:
    """Return the parsed root of part `name`, or None when it is missing or not well-formed.

    Raises:
        UnsafeInputError: the part declares dangerous entities.
    """
    from lxml import etree

    if name not in archive.NameToInfo:
        return None
    data = archive.read(name)
    try:
        check_xml_declarations(data, media_type=media_type)
        return parse_checked(data)
    except (ExtractionError, ValueError, etree.XMLSyntaxError):
        return None


def package_rels(archive: zipfile.ZipFile, part: str) -> Iterator[tuple[str, str, str]]:
    """Yield (id, type, target part name) for the internal relationships of `part`."""
    folder, base = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", base + ".rels")
    root = read_part(archive, rels, media_type=_RELS_TYPE)
    if root is None:
        return
    for rel in root.iter(_REL):
        if rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target", "")
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
        yield rel.get("Id", ""), rel.get("Type", ""), posixpath.normpath(path)


def worksheet_parts(archive: zipfile.ZipFile, *, media_type: str) -> list[tuple[str, str]]:
    """Return (sheet name, part name) for each sheet of a SpreadsheetML package, in order."""
    workbook = "xl/workbook.xml"
    for _, kind, target in package_rels(archive, "_rels/.rels"):
        if kind.endswith("/officeDocument"):
            workbook = target
    root = read_part(archive, workbook, media_type=media_type)
    if root is None:
        return []
    parts = {rel_id: target for rel_id, _, target in package_rels(archive, workbook)}
    return [
        (sheet.get("name", ""), parts[sheet.get(_R_ID, "")])
        for sheet in root.iter(f"{_S}sheet")
        if sheet.get(_R_ID, "") in parts
    ]
