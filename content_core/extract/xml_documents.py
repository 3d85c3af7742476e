"""XML documents that are prose: JATS journal articles and USPTO patents, as Markdown text
(title, abstract, sections as headings, paragraphs, lists, tables, claims) instead of markup.

Recognised by the root element (and the DOCTYPE or JATS attributes for `<article>`); any other
XML is left to the generic pretty-printer. Formulas (MathML, `tex-math`) become LaTeX: `$...$`
inline, `$$...$$` in a `disp-formula`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from content_core.extract._math import fence_latex, mathml_element_latex
from content_core.extract._tables import join_blocks, markdown_table

__all__ = ["render_xml_document"]

_PATENT_ROOTS = frozenset({"us-patent-grant", "us-patent-application"})
_MAX_DEPTH = 64
_MATHML = "{http://www.w3.org/1998/Math/MathML}"
# `tex-math` may hold a whole LaTeX document around the formula.
_TEX_DOCUMENT = re.compile(r"\\begin\{document\}(.*?)\\end\{document\}", re.DOTALL)
# Elements of a JATS body that are not running text (or are rendered elsewhere).
_JATS_SKIPPED = frozenset({"label", "object-id", "graphic", "alternatives", "sec-meta"})


def _local(element: Any) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _text(element: Any) -> str:
    if next(element.iter(f"{_MATHML}math", "tex-math"), None) is None:
        return " ".join("".join(element.itertext()).split())
    parts: list[str] = []
    _with_formulas(element, parts, display=_local(element) == "disp-formula", depth=0)
    return " ".join("".join(parts).split())


def _with_formulas(element: Any, out: list[str], *, display: bool, depth: int) -> None:
    """Append the text below `element` to `out`, its formulas as LaTeX: MathML converted,
    `tex-math` as written, one of each `alternatives` (TeX first)."""
    if element.text:
        out.append(element.text)
    for child in element:
        name = _local(child)
        if name == "alternatives":
            chosen = next(_children(child, "tex-math"), None)
            if chosen is None:
                chosen = next((c for c in child if _local(c) == "math"), None)
            if chosen is not None:
                _formula(chosen, out, display)
        elif name in ("math", "tex-math"):
            _formula(child, out, display)
        elif depth < _MAX_DEPTH and name:
            inner = display or name == "disp-formula"
            _with_formulas(child, out, display=inner, depth=depth + 1)
        if child.tail:
            out.append(child.tail)


def _formula(element: Any, out: list[str], display: bool) -> None:
    if _local(element) == "math":
        out.append(" " + mathml_element_latex(element, display=display) + " ")
        return
    tex = "".join(element.itertext())
    document = _TEX_DOCUMENT.search(tex)
    if document:
        tex = document.group(1)
    tex = tex.strip().strip("$").strip()
    if tex.startswith("\\[") and tex.endswith("\\]"):
        tex = tex[2:-2]
    out.append(" " + fence_latex(tex, display) + " ")


def _children(element: Any, name: str) -> Iterator[Any]:
    return (child for child in element if _local(child) == name)


def _first(element: Any | None, *path: str) -> Any | None:
    for name in path:
        if element is None:
            return None
        element = next(_children(element, name), None)
    return element


def render_xml_document(root: Any) -> str | None:
    """Return the Markdown of a JATS article or a USPTO patent, or None for other XML."""
    name = _local(root)
    if name in _PATENT_ROOTS:
        return _patent(root)
    doctype = root.getroottree().docinfo.doctype or ""
    if name == "article" and (
        "JATS" in doctype
        or "NLM" in doctype
        or root.get("dtd-version") is not None
        or _first(root, "front") is not None
    ):
        return _jats(root)
    return None


def _person(name: Any) -> str:
    """Given names before the surname, whatever order the XML holds them in."""
    given = " ".join(_text(part) for part in _children(name, "given-names"))
    surname = " ".join(_text(part) for part in _children(name, "surname"))
    return f"{given} {surname}".strip()


def _table(element: Any) -> str:
    rows = [
        [_text(cell) for cell in row if _local(cell) in ("th", "td")]
        for row in element.iter()
        if _local(row) == "tr"
    ]
    return markdown_table(rows)


# JATS ---------------------------------------------------------------------------------------


def _jats(root: Any) -> str:
    blocks: list[str] = []
    meta = _first(root, "front", "article-meta")
    title = _first(meta, "title-group", "article-title")
    if title is not None and _text(title):
        blocks.append("# " + _text(title))
    if meta is not None:
        authors = [
            _person(name)
            for group in _children(meta, "contrib-group")
            for contrib in _children(group, "contrib")
            for name in contrib.iter()
            if _local(name) == "name"
        ]
        if any(authors):
            blocks.append(", ".join(a for a in authors if a))
        for abstract in _children(meta, "abstract"):
            blocks.append("## Abstract")
            blocks.extend(_jats_blocks(abstract, 3))
    body = _first(root, "body")
    if body is not None:
        blocks.extend(_jats_blocks(body, 2))
    back = _first(root, "back")
    if back is not None:
        blocks.extend(_jats_blocks(back, 2))
    return join_blocks(blocks)


def _jats_blocks(container: Any, level: int, depth: int = 0) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        return
    for child in container:
        name = _local(child)
        if name in ("sec", "ack", "app", "boxed-text", "ref-list", "fn-group"):
            title = _first(child, "title")
            label = _first(child, "label")
            heading = " ".join(_text(e) for e in (label, title) if e is not None).strip()
            if not heading and name == "ack":
                heading = "Acknowledgements"
            if not heading and name == "ref-list":
                heading = "References"
            if heading:
                yield "#" * min(level, 6) + " " + heading
            yield from _jats_blocks(child, level + 1, depth + 1)
        elif name == "p":
            text = _text(child)
            if text:
                yield text
        elif name == "list":
            items = [_text(item) for item in _children(child, "list-item")]
            yield "\n".join(f"- {item}" for item in items if item)
        elif name in ("table-wrap", "fig"):
            caption = " ".join(
                _text(part) for part in child if _local(part) in ("label", "caption")
            )
            if caption:
                yield caption
            table = _table(child)
            if table:
                yield table
            for foot in _children(child, "table-wrap-foot"):
                text = _text(foot)
                if text:
                    yield text
        elif name == "ref":
            text = _text(child)
            if text:
                yield "- " + text
        elif name in ("disp-quote", "statement", "def-list", "disp-formula"):
            text = _text(child)
            if text:
                yield text
        elif name in _JATS_SKIPPED or name == "title":
            continue
        else:
            yield from _jats_blocks(child, level, depth + 1)


# USPTO patents ------------------------------------------------------------------------------


def _patent(root: Any) -> str:
    blocks: list[str] = []
    biblio = next((c for c in root if _local(c).startswith("us-bibliographic-data")), None)
    title = _first(biblio, "invention-title")
    if title is not None and _text(title):
        blocks.append("# " + _text(title))
    number = _first(biblio, "publication-reference", "document-id")
    if number is not None:
        parts = [_text(p) for p in number if _local(p) in ("country", "doc-number", "kind")]
        if any(parts):
            blocks.append(" ".join(p for p in parts if p))
    for abstract in _children(root, "abstract"):
        blocks.append("## Abstract")
        blocks.extend(_text(p) for p in abstract.iter() if _local(p) == "p" and _text(p))
    description = _first(root, "description")
    if description is not None:
        blocks.append("## Description")
        blocks.extend(_patent_description(description))
    claims = _first(root, "claims")
    if claims is not None:
        blocks.append("## Claims")
        for claim in _children(claims, "claim"):
            text = _text(claim)
            if text:
                blocks.append(text)
    return join_blocks(blocks)


def _patent_description(container: Any, depth: int = 0) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        return
    for child in container:
        name = _local(child)
        if name == "heading":
            text = _text(child)
            if text:
                level = 3 if child.get("level", "1") == "1" else 4
                yield "#" * level + " " + text
        elif name == "p":
            table = _table(child)
            text = _text(child)
            if table:
                yield table
            elif text:
                yield text
        elif name in ("tables", "table"):
            table = _table(child)
            if table:
                yield table
        elif name == "ul" or name == "ol":
            items = [_text(li) for li in child if _local(li) == "li"]
            yield "\n".join(f"- {item}" for item in items if item)
        elif name:
            yield from _patent_description(child, depth + 1)
