"""OpenDocument text, spreadsheets and presentations (ODT/ODS/ODP) from `content.xml`.

The XML is read directly (no odfpy): after the zip guard, `content.xml` is parsed with
entities, DTDs and the network off, and walked into Markdown. Repeated rows and cells
(`number-rows-repeated`, which spreadsheets set to a million for the empty tail) are
expanded only when they hold text, and then at most `_MAX_REPEAT` times.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from content_core.binary import media_types as mt
from content_core.errors import EncryptedFileError, ExtractionError
from content_core.extract._cells import CellBudget, sheet_markdown
from content_core.extract._docprops import odf_title
from content_core.extract._math import fence_latex, mathml_body_latex
from content_core.extract._tables import join_blocks, markdown_table
from content_core.extract._zipguard import open_checked_zip
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import Handler, office_formats
from content_core.xmlsafe import check_xml_declarations, parse_checked

__all__ = ["FORMATS", "OdfExtractor"]

_ODF_TYPES = frozenset(
    {
        mt.ODT,
        mt.ODS,
        mt.ODP,
        "application/vnd.oasis.opendocument.text-template",
        "application/vnd.oasis.opendocument.spreadsheet-template",
        "application/vnd.oasis.opendocument.presentation-template",
        "application/vnd.oasis.opendocument.graphics",
    }
)
_LABELS = {mt.ODT: "ODT", mt.ODS: "ODS", mt.ODP: "ODP"}
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_CHART = "{urn:oasis:names:tc:opendocument:xmlns:chart:1.0}"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_MAX_OBJECTS = 256
_SKIPPED = frozenset(
    {
        f"{_OFFICE}annotation",
        f"{_OFFICE}annotation-end",
        f"{_TEXT}tracked-changes",
        f"{_TEXT}note-citation",
        f"{_TEXT}sequence-decls",
        f"{_TABLE}table-columns",
        f"{_TABLE}table-column",
        f"{_PRESENTATION}notes",
        f"{_OFFICE}forms",
    }
)
_ROW_CONTAINERS = frozenset(
    {f"{_TABLE}table-header-rows", f"{_TABLE}table-rows", f"{_TABLE}table-row-group"}
)
_CELLS = frozenset({f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"})
_MAX_REPEAT = 64
_NO_FORMULAS: Mapping[str, str] = {}
_MAX_SPACES = 64


def _repeat(element: Any, attribute: str) -> int:
    try:
        return max(int(element.get(attribute, "1")), 1)
    except ValueError:
        return 1


class _Formula(str):
    """The LaTeX of a formula object among the text pieces of a paragraph."""

    __slots__ = ()


def _inline(element: Any, out: list[str], formulas: Mapping[str, str]) -> None:
    if element.text:
        out.append(element.text)
    for child in element:
        tag = child.tag
        if tag == f"{_DRAW}object" and formulas:
            latex = formulas.get(_object_folder(child.get(_XLINK_HREF, "")), "")
            if latex:
                out.append(_Formula(latex))
        elif tag == f"{_TEXT}s":
            out.append(" " * min(_repeat(child, f"{_TEXT}c"), _MAX_SPACES))
        elif tag == f"{_TEXT}tab":
            out.append("\t")
        elif tag == f"{_TEXT}line-break":
            out.append("\n")
        elif tag == f"{_TEXT}note":
            body = child.find(f"{_TEXT}note-body")
            if body is not None:
                out.append(" (" + " ".join(_paragraphs(body, formulas)) + ")")
        elif tag in _SKIPPED or not isinstance(tag, str):
            pass
        else:
            _inline(child, out, formulas)
        if child.tail:
            out.append(child.tail)


def _joined(parts: list[str]) -> str:
    """The paragraph's text; a formula alone in its paragraph is a display formula."""
    formulas = [part for part in parts if isinstance(part, _Formula)]
    if len(formulas) == 1 and not "".join(p for p in parts if p is not formulas[0]).strip():
        return fence_latex(formulas[0], True)
    return "".join(fence_latex(p, False) if isinstance(p, _Formula) else p for p in parts).strip()


def _paragraphs(container: Any, formulas: Mapping[str, str] = _NO_FORMULAS) -> Iterator[str]:
    for child in container.iter(f"{_TEXT}p", f"{_TEXT}h"):
        parts: list[str] = []
        _inline(child, parts, formulas)
        text = _joined(parts)
        if text:
            yield text


def _object_folder(href: str) -> str:
    return href.removeprefix("./").rstrip("/")


class _Walker:
    def __init__(self, budget: CellBudget, objects: dict[str, Any] | None = None) -> None:
        self.budget = budget
        self._objects = objects or {}
        # Formula objects hold MathML; their LaTeX goes where the object is anchored.
        self.formulas = {
            folder: latex
            for folder, root in self._objects.items()
            if isinstance(root.tag, str) and root.tag.rsplit("}", 1)[-1] == "math"
            for latex in [mathml_body_latex(root)]
            if latex
        }

    def blocks(self, container: Any, depth: int = 0) -> Iterator[str]:
        for child in container:
            tag = child.tag
            if tag in _SKIPPED or not isinstance(tag, str):
                continue
            if tag in (f"{_TEXT}p", f"{_TEXT}h"):
                parts: list[str] = []
                _inline(child, parts, self.formulas)
                text = _joined(parts)
                if text and tag == f"{_TEXT}h":
                    level = min(_repeat(child, f"{_TEXT}outline-level"), 6)
                    text = "#" * level + " " + text.replace("\n", " ")
                if text:
                    yield text
                # Charts are anchored in paragraphs (a frame holding the object).
                yield from self.charts(child)
            elif tag == f"{_DRAW}frame" and child.get(f"{_PRESENTATION}class") == "title":
                # A slide's title placeholder: a heading under the slide's own, as for PPTX.
                title = " ".join(" ".join(_paragraphs(child, self.formulas)).split())
                if title:
                    yield "### " + title
            elif tag == f"{_TEXT}list":
                yield from self._list(child, depth)
            elif tag == f"{_TABLE}table":
                table = markdown_table(list(self.rows(child)))
                if table:
                    yield table
            elif tag == f"{_DRAW}object":
                formula = self.formulas.get(_object_folder(child.get(_XLINK_HREF, "")), "")
                if formula:
                    yield fence_latex(formula, True)
                yield from self.charts(child)
            else:
                yield from self.blocks(child, depth)

    def charts(self, element: Any) -> Iterator[str]:
        """The embedded charts at or below `element`, each as a table of its series."""
        for embedded in element.iter(f"{_DRAW}object"):
            chart = self._chart(embedded.get(_XLINK_HREF, ""))
            if chart:
                yield chart

    def _chart(self, href: str) -> str:
        """An embedded chart object as a table of its series (its own data table)."""
        root = self._objects.get(_object_folder(href))
        chart = root.find(f"{_OFFICE}body/{_OFFICE}chart") if root is not None else None
        if chart is None:
            return ""
        blocks = [
            "Chart: " + text
            for title in chart.iter(f"{_CHART}title")
            for text in [" ".join(_paragraphs(title))]
            if text
        ][:1]
        for table in chart.iter(f"{_TABLE}table"):
            rendered = markdown_table(list(self.rows(table)))
            if rendered:
                blocks.append(rendered)
        return "\n\n".join(blocks)

    def _list(self, element: Any, depth: int) -> Iterator[str]:
        indent = "  " * min(depth, 8)
        for item in element:
            if item.tag not in (f"{_TEXT}list-item", f"{_TEXT}list-header"):
                continue
            for number, block in enumerate(self.blocks(item, depth + 1)):
                if number == 0 and not block.startswith(" "):
                    yield indent + "- " + block
                else:
                    yield block

    def rows(self, table: Any) -> Iterator[list[str]]:
        for child in table:
            if child.tag in _ROW_CONTAINERS:
                yield from self.rows(child)
            elif child.tag == f"{_TABLE}table-row":
                cells: list[str] = []
                for cell in child:
                    if cell.tag not in _CELLS:
                        continue
                    text = " ".join(_paragraphs(cell, self.formulas))
                    count = _repeat(cell, f"{_TABLE}number-columns-repeated")
                    cells.extend([text] * min(count, _MAX_REPEAT))
                repeat = _repeat(child, f"{_TABLE}number-rows-repeated")
                times = min(repeat, _MAX_REPEAT) if any(cells) else 1
                for _ in range(times):
                    if not self.budget.take(len(cells)):
                        return
                    yield cells


def _objects(archive: Any, media_type: str) -> dict[str, Any]:
    """The parsed `content.xml` of each embedded object (charts), by object folder."""
    from lxml import etree

    objects: dict[str, Any] = {}
    for name in archive.namelist():
        folder, _, leaf = name.rpartition("/")
        if leaf != "content.xml" or not folder or len(objects) >= _MAX_OBJECTS:
            continue
        data = archive.read(name)
        check_xml_declarations(data, media_type=media_type)
        try:
            objects[folder] = parse_checked(data)
        except (etree.XMLSyntaxError, ValueError):
            continue  # a broken object costs its own content, not the document's
    return objects


class OdfExtractor:
    """OpenDocument formats; presentations give one page per slide, spreadsheets per sheet."""

    name = "odf"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept ODT, ODS, ODP, ODG and their templates."""
        return info.media_type in _ODF_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return Markdown text; paged for presentations (slides) and spreadsheets (sheets).

        Raises:
            EncryptedFileError: the document is password-protected.
            LimitExceededError: the package is over a size, member or ratio limit.
            UnsafeInputError: the package's zip entries overlap, or its XML declares dangerous
                entities (nested or huge expansion, external entities).
            ExtractionError: `content.xml` is missing or not well-formed.
        """
        media_type = blob.info.media_type
        archive = open_checked_zip(blob.data, options, media_type=media_type)
        try:
            manifest = archive.read("META-INF/manifest.xml")
        except KeyError:
            manifest = b""
        if b"encryption-data" in manifest:
            raise EncryptedFileError(
                f"password-protected OpenDocument file ({_LABELS.get(media_type, 'ODF')})",
                file_format=_LABELS.get(media_type, "ODF"),
                media_type=media_type,
                stage="extract",
            )
        from lxml import etree

        try:
            content = archive.read("content.xml")
        except KeyError as exc:
            raise ExtractionError("no content.xml in the package", media_type=media_type) from exc
        # A DOCTYPE or small internal entities are unusual but harmless; the shared XML guard
        # refuses only the dangerous declarations (nested or huge expansion, external entities).
        check_xml_declarations(content, media_type=media_type)
        try:
            root = parse_checked(content)
        except (etree.XMLSyntaxError, ValueError) as exc:
            raise ExtractionError(f"content.xml malformed: {exc}", media_type=media_type) from exc
        body = root.find(f"{_OFFICE}body")
        if body is None:
            raise ExtractionError("content.xml has no office:body", media_type=media_type)
        walker = _Walker(CellBudget(options.max_table_cells), _objects(archive, media_type))
        title = odf_title(archive, media_type=media_type)
        presentation = body.find(f"{_OFFICE}presentation")
        if presentation is not None:
            return self._slides(presentation, walker, options, title)
        spreadsheet = body.find(f"{_OFFICE}spreadsheet")
        if spreadsheet is not None:
            sheets = [
                join_blocks([self._sheet(table, walker), *walker.charts(table)])
                for table in spreadsheet.iter(f"{_TABLE}table")
            ]
            return build_text(sheets, handler=self.name, paged=True, title=title)
        text = join_blocks(list(walker.blocks(body)))
        return build_text([text], handler=self.name, paged=False, title=title)

    @staticmethod
    def _sheet(table: Any, walker: _Walker) -> str:
        return sheet_markdown(table.get(f"{_TABLE}name"), walker.rows(table), walker.budget)

    def _slides(
        self, presentation: Any, walker: _Walker, options: ExtractOptions, title: str | None
    ) -> ExtractedText:
        pages: list[str] = []
        for number, page in enumerate(presentation.iter(f"{_DRAW}page"), start=1):
            if number > options.max_pdf_pages:
                break
            blocks = [f"## Slide {number}", *walker.blocks(page)]
            notes = page.find(f"{_PRESENTATION}notes")
            if options.include_comments and notes is not None:
                text = "\n".join(_paragraphs(notes))
                if text:
                    blocks.append("Notes:\n" + text)
            pages.append(join_blocks(blocks))
        return build_text(pages, handler=self.name, paged=True, title=title)


_HANDLER = Handler(OdfExtractor())
FORMATS = (
    *office_formats(_HANDLER, "odt", (".odt", mt.ODT)),
    *office_formats(_HANDLER, "ods", (".ods", mt.ODS)),
    *office_formats(_HANDLER, "odp", (".odp", mt.ODP)),
)
