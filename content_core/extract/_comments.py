"""Review comments with their authors: XLSX cell comments (legacy notes and threaded
comments) and PPTX slide comments (legacy and modern), as Markdown list lines."""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

from content_core.errors import ExtractionError
from content_core.extract._opc import package_rels, read_part, worksheet_parts
from content_core.xmlsafe import check_xml_declarations, parse_checked

__all__ = ["comment_block", "sheet_comments", "slide_comments"]

_MAX_COMMENTS = 10_000
# Excel writes this before the text of a threaded comment's legacy copy.
_THREADED_STUB = "[Threaded comment]"


def comment_block(lines: Iterable[str]) -> str:
    """Return "Comments:" and one `- ` line per comment, or "" when there is none."""
    items = [f"- {' '.join(line.split())}" for line in lines if line.strip()]
    return "Comments:\n" + "\n".join(items) if items else ""


def _text(element: Any) -> str:
    runs = "".join(t.text or "" for t in element.iter("{*}t")).strip()
    if runs:
        return runs
    body = element.find("{*}text")  # a threaded comment's plain text
    return (body.text or "").strip() if body is not None else ""


def _attributed(author: str, text: str, where: str = "") -> str:
    place = f"{where} " if where else ""
    return f"{place}({author}): {text}" if author else f"{place}{text}".strip()


def sheet_comments(archive: zipfile.ZipFile, *, media_type: str) -> dict[str, list[str]]:
    """Return each worksheet's comments as "B2 (Author): text", by sheet name.

    Threaded comments (Excel 365) are read with their people's display names; a sheet without
    them gets its legacy notes, whose authors the comments part lists.
    """
    people = _people(archive, media_type)
    out: dict[str, list[str]] = {}
    for name, part in worksheet_parts(archive, media_type=media_type):
        threaded: list[str] = []
        legacy: list[str] = []
        for _, kind, target in package_rels(archive, part):
            root = None
            if kind.endswith(("/threadedComment", "/comments")):
                root = read_part(archive, target, media_type=media_type)
            if root is None:
                continue
            if kind.endswith("/threadedComment"):
                threaded += [
                    _attributed(people.get(c.get("personId", ""), ""), _text(c), c.get("ref", ""))
                    for c in _limited(root.iter("{*}threadedComment"))
                ]
            else:
                legacy += _legacy_cell_comments(root)
        comments = threaded or legacy
        if comments:
            out[name] = comments
    return out


def _legacy_cell_comments(root: Any) -> list[str]:
    authors = [(a.text or "").strip() for a in root.iter("{*}author")]
    comments: list[str] = []
    for comment in _limited(root.iter("{*}comment")):
        text = _text(comment)
        if text.startswith(_THREADED_STUB):
            continue
        try:
            author = authors[int(comment.get("authorId", ""))]
        except (ValueError, IndexError):
            author = ""
        comments.append(_attributed(author, text, comment.get("ref", "")))
    return comments


def _people(archive: zipfile.ZipFile, media_type: str) -> dict[str, str]:
    people: dict[str, str] = {}
    for _, kind, target in package_rels(archive, "xl/workbook.xml"):
        if kind.endswith("/person"):
            root = read_part(archive, target, media_type=media_type)
            for person in root.iter("{*}person") if root is not None else ():
                people[person.get("id", "")] = person.get("displayName", "")
    return people


def slide_comments(slide_part: Any, presentation_part: Any, *, media_type: str) -> list[str]:
    """Return a slide's comments as "(Author): text", from python-pptx parts (legacy
    `p:cmLst` and modern PowerPoint comments alike)."""
    authors = {
        author.get("id", ""): author.get("name", "")
        for kind in ("/commentAuthors", "/authors")
        for root in _related(presentation_part, kind, media_type)
        for author in root.iter("{*}cmAuthor", "{*}author")
    }
    comments: list[str] = []
    for root in _related(slide_part, "/comments", media_type):
        for comment in _limited(root.iter("{*}cm")):
            body = comment.find("{*}text")
            text = (body.text or "").strip() if body is not None else _text(comment)
            comments.append(_attributed(authors.get(comment.get("authorId", ""), ""), text))
    return comments


def _related(part: Any, kind: str, media_type: str) -> Iterator[Any]:
    from lxml import etree

    for rel in part.rels.values():
        if rel.is_external or not rel.reltype.endswith(kind):
            continue
        data = rel.target_part.blob
        try:
            check_xml_declarations(data, media_type=media_type)
            yield parse_checked(data)
        except (ExtractionError, ValueError, etree.XMLSyntaxError):
            continue


def _limited(elements: Iterator[Any]) -> Iterator[Any]:
    for count, element in enumerate(elements):
        if count >= _MAX_COMMENTS:
            return
        yield element
