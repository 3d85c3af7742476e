"""DOCX to Markdown-flavoured text: headings, lists, tables, headers/footers, notes, comments.

python-docx opens the package and resolves its parts (after the zip guard has checked it);
the body is then walked in document order on the XML itself, so that text inside hyperlinks,
content controls, tracked insertions and text boxes is kept and equations (OMML) become LaTeX
(`$...$`, `$$...$$` for a display equation), while deleted text, field codes and the
duplicate `mc:Fallback` renderings are not.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any

import docx

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError
from content_core.extract._charts import CHART_REL, render_chart_part
from content_core.extract._docprops import ooxml_title
from content_core.extract._numbering import Numbering
from content_core.extract._omml import OMATH, OMATH_PARA, omml_latex
from content_core.extract._ooxml import WORD_MAIN, WORD_VARIANTS, as_plain_package
from content_core.extract._tables import SpanCell, join_blocks, spanned_table
from content_core.extract._zipguard import open_checked_zip
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats
from content_core.xmlsafe import safe_lxml_parser

__all__ = ["FORMATS", "DocxExtractor", "render_word_xml"]

_DOCX_TYPES = frozenset(
    {
        mt.DOCX,
        mt.DOCM,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template",
        "application/vnd.ms-word.template.macroenabled.12",
    }
)

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_DOC_PROPERTIES = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr"
_P, _TBL, _TR, _TC, _SDT = f"{_W}p", f"{_W}tbl", f"{_W}tr", f"{_W}tc", f"{_W}sdt"
_TEXT_TAGS = frozenset({f"{_W}t", f"{_M}t"})
_BREAK_TAGS = frozenset({f"{_W}br", f"{_W}cr"})
_SKIP_TAGS = frozenset(
    {
        f"{_W}delText",
        f"{_W}instrText",
        f"{_W}delInstrText",
        f"{_W}rPr",
        f"{_W}pPr",
        f"{_MC}Fallback",
        f"{_W}del",
    }
)
_CHART = "{http://schemas.openxmlformats.org/drawingml/2006/chart}chart"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_NOTE_TAGS = frozenset({f"{_W}footnote", f"{_W}endnote"})
_MAX_BASED_ON = 16
_PART_ORDER = ("header", "footnotes", "endnotes", "comments", "footer")
# What may follow an image without a space: nothing, white space, closing punctuation.
_AFTER_IMAGE = frozenset({" ", "\t", "\n", ".", ",", ";", ":", "!", "?", ")"})


class _Image(str):
    """The Markdown of an inline image among the text pieces of a paragraph."""

    __slots__ = ()


def _inline_text(element: Any, out: list[str]) -> None:
    """Append the visible text below `element` (a paragraph or run container) to `out`."""
    for child in element:
        tag = child.tag
        if tag in _TEXT_TAGS:
            text = child.text or ""
            if not text:
                continue
            if out and isinstance(out[-1], _Image) and text[0] not in _AFTER_IMAGE:
                out.append(" ")  # the image stands apart from the words after it
            out.append(text)
        elif tag == f"{_W}tab":
            out.append("\t")
        elif tag in _BREAK_TAGS:
            out.append("\n")
        elif tag == f"{_W}noBreakHyphen":
            out.append("-")
        elif tag in _SKIP_TAGS or not isinstance(tag, str):
            continue
        elif tag == OMATH or tag == OMATH_PARA:
            out.append(omml_latex(child))
        elif tag == _DOC_PROPERTIES:
            # The alt text is `descr` (Word 2007 put the inserted file's path there); Word
            # 2010+ may add a `title`; `name` ("Picture 1") says nothing.
            description = " ".join((child.get("descr") or child.get("title") or "").split())
            if description:
                if out and out[-1][-1:] not in ("", " ", "\t", "\n"):
                    out.append(" ")  # and from the words before it
                out.append(_Image(f"![{description}]"))
        elif tag == f"{_W}txbxContent":
            out.append("\n" + "\n".join(_paragraph_texts(child)) + "\n")
        else:
            _inline_text(child, out)


def _paragraph_texts(container: Any) -> Iterator[str]:
    for paragraph in container.iter(_P):
        parts: list[str] = []
        _inline_text(paragraph, parts)
        text = "".join(parts).strip()
        if text:
            yield text


class _Renderer:
    """Walks WordprocessingML block content and renders Markdown lines."""

    def __init__(
        self,
        style_names: dict[str, str],
        list_styles: frozenset[str],
        numbering: Numbering | None = None,
        charts: dict[str, str] | None = None,
    ) -> None:
        self._style_names = style_names
        self._list_styles = list_styles
        self._numbering = numbering
        self._charts = charts or {}

    def blocks(self, container: Any) -> Iterator[str]:
        for child in container:
            tag = child.tag
            if tag == _P:
                line = self._paragraph(child)
                if line:
                    yield line
                for chart in child.iter(_CHART):
                    table = self._charts.get(chart.get(_R_ID, ""), "")
                    if table:
                        yield table
            elif tag == _TBL:
                table = self._table(child)
                if table:
                    yield table
            elif tag == _SDT:
                content = child.find(f"{_W}sdtContent")
                if content is not None:
                    yield from self.blocks(content)
            elif tag in (f"{_W}customXml", f"{_W}ins", f"{_W}smartTag"):
                yield from self.blocks(child)
            elif tag in _NOTE_TAGS and child.get(f"{_W}type") in (None, "normal"):
                # Separator "notes" hold only the rule drawn above the notes area.
                yield from self.blocks(child)

    def _paragraph(self, paragraph: Any) -> str:
        parts: list[str] = []
        _inline_text(paragraph, parts)
        text = "".join(parts).strip()
        props = paragraph.find(f"{_W}pPr")
        style = props.find(f"{_W}pStyle") if props is not None else None
        style_id = style.get(f"{_W}val", "") if style is not None else "Normal"
        # Every numbered paragraph advances its list, an empty one too (Word shows its number).
        label = self._numbering.label(props, style_id) if self._numbering is not None else ""
        if not text:
            return ""
        level = _heading_level(self._style_names.get(style_id, "")) or _outline_level(props)
        if level:
            heading = f"{label} {text}" if label else text
            return "#" * level + " " + heading.replace("\n", " ")
        if props is None:
            return text
        if label:
            text = f"{label} {text}"
        numbering = props.find(f"{_W}numPr")
        if numbering is None and style_id in self._list_styles:
            return "- " + text
        if numbering is not None:
            level_el = numbering.find(f"{_W}ilvl")
            depth = int(level_el.get(f"{_W}val", "0")) if level_el is not None else 0
            return "  " * min(max(depth, 0), 8) + "- " + text
        return text

    def _table(self, table: Any) -> str:
        """Markdown, or HTML when cells are merged (gridSpan across, vMerge down)."""
        rows: list[list[list[Any]]] = []
        above: dict[int, list[Any]] = {}
        for row in table.iter(_TR):
            if _nearest_table(row) is not table:
                continue
            cells: list[list[Any]] = []
            column = 0
            for cell in _row_cells(row):
                span = cell.find(f"{_W}tcPr/{_W}gridSpan")
                width = min(max(int(span.get(f"{_W}val", "1")), 1), 64) if span is not None else 1
                merge = cell.find(f"{_W}tcPr/{_W}vMerge")
                if merge is not None and merge.get(f"{_W}val") != "restart" and column in above:
                    above[column][1] += 1
                else:
                    above[column] = [" ".join(_paragraph_texts(cell)), 1, width]
                    cells.append(above[column])
                column += width
            rows.append(cells)
        spanned = [[SpanCell(text, down, across) for text, down, across in row] for row in rows]
        header = max((cell.rows for cell in spanned[0]), default=1) if spanned else 1
        return spanned_table(spanned, header)


def _nearest_table(element: Any) -> Any:
    parent = element.getparent()
    while parent is not None and parent.tag != _TBL:
        parent = parent.getparent()
    return parent


def _row_cells(row: Any) -> Iterator[Any]:
    for child in row:
        if child.tag == _TC:
            yield child
        elif child.tag == _SDT:
            content = child.find(f"{_W}sdtContent")
            if content is not None:
                yield from (c for c in content if c.tag == _TC)


def _heading_level(style_name: str) -> int:
    if style_name == "title":
        return 1
    if style_name == "subtitle":
        return 2
    if style_name.startswith("heading "):
        suffix = style_name.removeprefix("heading ").strip()
        if suffix.isdigit():
            return min(max(int(suffix), 1), 6)
    return 0


def _styles(styles: Any) -> tuple[dict[str, str], frozenset[str]]:
    """Return style id -> lower-case name, and the ids of styles that carry list numbering,
    from the `w:styles` element (or any element holding `w:style` definitions).

    A style that is a heading without the name (its own outline level, or a heading style it
    is based on, as custom and localised heading styles are) is named "heading N".
    """
    names: dict[str, str] = {}
    lists: set[str] = set()
    outline: dict[str, int] = {}
    based_on: dict[str, str] = {}
    for style in styles.iter(f"{_W}style"):
        style_id = style.get(f"{_W}styleId", "")
        name = style.find(f"{_W}name")
        if name is not None:
            names[style_id] = name.get(f"{_W}val", "").lower()
        if style.find(f"{_W}pPr/{_W}numPr") is not None:
            lists.add(style_id)
        level = _outline_level(style.find(f"{_W}pPr"))
        if level:
            outline[style_id] = level
        base = style.find(f"{_W}basedOn")
        if base is not None:
            based_on[style_id] = base.get(f"{_W}val", "")
    for style_id in list(names):
        if _heading_level(names[style_id]):
            continue
        current = style_id
        for _ in range(_MAX_BASED_ON):
            level = outline.get(current) or _heading_level(names.get(current, ""))
            if level:
                names[style_id] = f"heading {level}"
                break
            if current not in based_on:
                break
            current = based_on[current]
    return names, frozenset(lists)


def _outline_level(props: Any | None) -> int:
    """The heading level a `w:pPr` gives by its `w:outlineLvl` (0 is level 1; 9 is body)."""
    element = props.find(f"{_W}outlineLvl") if props is not None else None
    if element is None:
        return 0
    try:
        value = int(element.get(f"{_W}val", "9"))
    except ValueError:
        return 0
    return value + 1 if 0 <= value < 6 else 0


def _related_parts(document: Any, kinds: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """Yield (kind, parsed root) for the document's header/footer/notes/comments parts."""
    from lxml import etree

    parser = safe_lxml_parser()
    wanted = tuple(kinds)
    seen: set[str] = set()
    by_kind: dict[str, list[Any]] = {kind: [] for kind in wanted}
    for rel in document.part.rels.values():
        if rel.is_external:
            continue
        kind = rel.reltype.rsplit("/", 1)[-1]
        if kind not in by_kind:
            continue
        part = rel.target_part
        if str(part.partname) in seen:
            continue
        seen.add(str(part.partname))
        element = getattr(part, "element", None)
        by_kind[kind].append(
            element if element is not None else etree.fromstring(part.blob, parser)
        )
    for kind in wanted:
        for root in by_kind[kind]:
            yield kind, root


def _charts(document: Any, media_type: str) -> dict[str, str]:
    """Each chart part of the body, as Markdown, by relationship id."""
    charts: dict[str, str] = {}
    for rel_id, rel in document.part.rels.items():
        if not rel.is_external and rel.reltype.endswith(CHART_REL):
            charts[rel_id] = render_chart_part(rel.target_part.blob, media_type=media_type)
    return charts


def _numbering_root(document: Any) -> Any | None:
    from docx.opc.constants import RELATIONSHIP_TYPE

    try:
        # Not `numbering_part`, which adds an empty part to a document that has none.
        return document.part.part_related_by(RELATIONSHIP_TYPE.NUMBERING).element
    except (KeyError, AttributeError):
        return None


def render_word_xml(root: Any, blocks: Iterable[Any]) -> str:
    """Render WordprocessingML block elements (`w:p`, `w:tbl`, ...) as Markdown, with the
    heading and list styles defined under `root`. Used for single-file Word XML, whose parts
    live in one tree instead of a package."""
    numbering = next(root.iter(f"{_W}numbering"), None)
    renderer = _Renderer(*_styles(root), Numbering(numbering, root))
    return join_blocks(list(renderer.blocks(blocks)))


class DocxExtractor:
    """Word 2007+ documents through python-docx, rendered as Markdown."""

    name = "docx"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept the WordprocessingML document and template types."""
        return info.media_type in _DOCX_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the document text: headers, body, notes, comments, footers.

        Raises:
            LimitExceededError, UnsafeInputError, EncryptedFileError: the package fails the
                zip checks (a limit, overlapping entries, a password).
            ExtractionError: the package is not a readable Word document.
            MissingDependencyError: python-docx is not installed.
        """
        archive = open_checked_zip(blob.data, options, media_type=blob.info.media_type)
        data = as_plain_package(blob.data, archive, WORD_VARIANTS, WORD_MAIN)
        try:
            document = docx.Document(io.BytesIO(data))
        except (KeyError, ValueError, OSError) as exc:
            raise ExtractionError(
                f"not a readable Word document: {exc}", media_type=blob.info.media_type
            ) from exc
        styles = document.styles.element
        numbering = Numbering(_numbering_root(document), styles)
        charts = _charts(document, blob.info.media_type)
        renderer = _Renderer(*_styles(styles), numbering, charts)
        body = list(renderer.blocks(document.element.body))
        kinds = _PART_ORDER if options.include_comments else ("header", "footer")
        before: list[str] = []
        after: list[str] = []
        seen_headers: set[str] = set()
        for kind, root in _related_parts(document, kinds):
            if kind == "comments":
                comments = [
                    f"- ({author}): {text}" if author else f"- {text}"
                    for comment in root.iter(f"{_W}comment")
                    for author in [" ".join(comment.get(f"{_W}author", "").split())]
                    for text in [" ".join(_paragraph_texts(comment))]
                    if text
                ]
                if comments:
                    after.append("## Comments\n\n" + "\n".join(comments))
                continue
            text = join_blocks(list(renderer.blocks(root)))
            if not text or text in seen_headers:
                continue
            seen_headers.add(text)
            (before if kind == "header" else after).append(text)
        return build_text(
            [join_blocks(before + body + after)],
            handler=self.name,
            paged=False,
            title=ooxml_title(archive, media_type=blob.info.media_type),
        )


FORMATS = office_formats(Handler(DocxExtractor()), "docx", (".docx", mt.DOCX), (".docm", mt.DOCM))
