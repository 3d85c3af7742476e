"""The extractor contract: sniff info in, `ExtractedText` out, plus the shared text helpers.

Every handler module builds its result through `build_text`, which removes the characters
DuckDB and JSON consumers reject (NUL, lone surrogates) and computes page spans.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from content_core.binary.config import BinaryConfig
from content_core.binary.pdf_handles import OpenedPdf

__all__ = [
    "PAGE_SEPARATOR",
    "Blob",
    "ExtractOptions",
    "ExtractedText",
    "Extractor",
    "FurnitureKind",
    "PageFurniture",
    "PageSpan",
    "SniffInfo",
    "TextBox",
    "build_text",
    "clean_text",
]

# Pages are joined with a blank line: Markdown-friendly, and no control character that a
# downstream splitter could mistake for a document boundary.
PAGE_SEPARATOR = "\n\n"

# NUL and the C0 controls other than tab/newline/carriage return/form feed, lone
# surrogates (a str may hold them, UTF-8 and DuckDB cannot) and the noncharacters U+FFFE/FFFF
# (PDFium marks a hyphen it removed at a line break with U+FFFE; dropping it rejoins the word).
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_NEWLINES = re.compile("\r\n?")
# A title is a line, not a document: a longer one (a hostile file's) is cut, since every
# chunk of the document carries it into the search index.
_MAX_TITLE_CHARS = 1_000


class PageSpan(BaseModel):
    """Where page `page` (1-based) lies in the extracted text: `text[start:end]`."""

    model_config = ConfigDict(frozen=True)

    page: int = Field(ge=1)
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> PageSpan:
        if self.end < self.start:
            raise ValueError(f"page span end {self.end} before start {self.start}")
        return self


FurnitureKind = Literal["header", "footer", "page_number", "margin", "watermark"]
"""What a line of page furniture is: a running header or footer, a page number, a strip in the
margin (a download stamp, an arXiv identifier set sideways), a watermark across the page."""


class PageFurniture(BaseModel):
    """A line taken out of page `page`'s text (1-based) because it is page furniture."""

    model_config = ConfigDict(frozen=True)

    page: int = Field(ge=1)
    kind: FurnitureKind
    text: str


class TextBox(NamedTuple):
    """Where one line (or one block: a table, a heading) of the text lies on its page.

    `text[start:end]` is the line; `page` is 1-based; `x0 < x1` and `y0 < y1` bound it in PDF
    points in the page's unrotated frame with the origin at the bottom left, as PDF draws
    (pixels of the image, origin at the top left, for an OCR'd image: y grows downwards).
    `edges` holds the left edge of each character of the line (`end - start` values) when the
    glyphs' places are known, so that a span starting or ending inside the line can be boxed
    exactly; it is empty for blocks and lines without glyph boxes.
    """

    start: int
    end: int
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    edges: tuple[float, ...] = ()


class ExtractedText(BaseModel):
    """The text of one blob, with a span per page where the format has pages.

    A "page" is a PDF page, a slide (PPTX, PPT, ODP) or a worksheet (XLSX, XLS, ODS), in
    document order; pages are joined by `PAGE_SEPARATOR`. `pages` is empty for formats
    without pages (plain text, DOCX, HTML, ...). `handler` names the extractor that answered.
    `title` is the title the document declares in its own metadata (HTML `<title>`, the
    `dc:title` of DOCX and ODF, the PDF's `/Title`), on one line; None when it declares none.
    `furniture` holds the lines taken out of the pages' text as page furniture (running heads,
    page numbers, margin stamps, watermarks: PDF only), so that nothing is lost.
    `text_boxes` places the lines of page text on their pages (PDF text layer; see `TextBox`),
    in text order; empty for formats without pages or where the places are unknown.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    pages: tuple[PageSpan, ...] = ()
    handler: str
    title: str | None = None
    furniture: tuple[PageFurniture, ...] = ()
    text_boxes: tuple[TextBox, ...] = ()

    def page_boxes(self, page: int) -> list[TextBox]:
        """The boxes of page `page` with offsets into that page's own text (its span's)."""
        span = next((s for s in self.pages if s.page == page), None)
        if span is None:
            return []
        return [
            box._replace(start=box.start - span.start, end=box.end - span.start)
            for box in self.text_boxes
            if box.page == page
        ]


# One set of limits: extraction reads the limits normalisation runs under (the old separate
# model disagreed on pages and the unzip budget, and never reached extraction in the pipeline).
ExtractOptions = BinaryConfig
"""The limits and switches every extractor receives: `BinaryConfig` under its extraction name."""


class SniffInfo(BaseModel):
    """What a handler may look at to decide whether it accepts a blob."""

    model_config = ConfigDict(frozen=True)

    media_type: str
    """Lower-case MIME type without parameters, e.g. `text/csv`."""
    charset: str | None = None
    """The `charset` parameter of the declared type, if any (a hint, never trusted alone)."""
    filename: str | None = None

    @classmethod
    def parse(cls, media_type: str, *, filename: str | None = None) -> SniffInfo:
        """Split `type/subtype; charset=x` into the bare type and its charset hint."""
        head, _, params = media_type.partition(";")
        charset = None
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip('"').lower()
        return cls(media_type=head.strip().lower(), charset=charset, filename=filename)


@dataclass(frozen=True, slots=True)
class Blob:
    """The immutable input of one extraction: the bytes and what sniffing said about them.

    `opened_pdf` is these bytes' PDF as `PdfGuard.check_open` left it open, when the caller has
    it: the PDFium extractor reads it instead of parsing the bytes again (its pages as it reads
    them); it stays its owner's to close. Every other handler reads `data`.
    """

    data: bytes
    info: SniffInfo
    opened_pdf: OpenedPdf | None = None

    def __post_init__(self) -> None:
        pdf = self.opened_pdf
        if pdf is not None and pdf.data is not self.data and pdf.data != self.data:
            raise ValueError("opened_pdf was opened from other bytes than the blob's")


@runtime_checkable
class Extractor(Protocol):
    """One format handler: a cheap `accepts` on the sniff result and the real `extract`."""

    name: str

    def accepts(self, info: SniffInfo) -> bool:
        """Return True when this handler can try the blob described by `info`."""
        ...

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the text of `blob`; raise a `ContentError` subclass when it cannot."""
        ...


def clean_text(text: str) -> str:
    """Return `text` with newlines normalised to `\\n` and NUL, stray controls and lone
    surrogates removed (surrogates become U+FFFD)."""
    if "\r" in text:
        text = _NEWLINES.sub("\n", text)
    if _BAD_CHARS.search(text) is None:
        return text
    return _BAD_CHARS.sub(_replacement, text)


def _clean_title(title: str | None) -> str | None:
    """Return `title` cleaned as text is, on one line (white space runs become one space) and
    cut at 1,000 characters; None when nothing is left."""
    if title is None:
        return None
    line = " ".join(clean_text(title).split())[:_MAX_TITLE_CHARS].rstrip()
    return line or None


def _replacement(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group() <= "\udfff" else ""


def build_text(
    parts: Sequence[str],
    *,
    handler: str,
    paged: bool,
    title: str | None = None,
    furniture: Sequence[PageFurniture] = (),
    boxes: Sequence[Sequence[TextBox]] = (),
) -> ExtractedText:
    """Clean `parts`, join them with `PAGE_SEPARATOR` and record one span per part if `paged`;
    `title` (the document's declared title) is put on one line and cut (`_clean_title`);
    `furniture` is kept with its text cleaned as the pages' is. `boxes` (paged only) holds
    each part's line boxes with offsets into the part as given; they come out with offsets
    into the joined text, moved as cleaning moves the characters.

    Parts are stripped of surrounding blank lines; an empty page still gets its (empty) span
    so that page numbers keep matching the document.
    """
    cleaned = [clean_text(part).strip("\n") for part in parts]
    title = _clean_title(title)
    if not paged:
        return ExtractedText(
            text=PAGE_SEPARATOR.join(p for p in cleaned if p), handler=handler, title=title
        )
    spans: list[PageSpan] = []
    pieces: list[str] = []
    placed: list[TextBox] = []
    offset = 0
    for number, part in enumerate(cleaned, start=1):
        if number > 1:
            pieces.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        pieces.append(part)
        spans.append(PageSpan(page=number, start=offset, end=offset + len(part)))
        if number <= len(boxes) and boxes[number - 1]:
            placed += _moved_boxes(parts[number - 1], len(part), boxes[number - 1], offset)
        offset += len(part)
    kept = tuple(item.model_copy(update={"text": clean_text(item.text)}) for item in furniture)
    return ExtractedText(
        text="".join(pieces), pages=tuple(spans), handler=handler, title=title, furniture=kept,
        text_boxes=tuple(placed),
    )  # fmt: skip


# What `clean_text` deletes: the CR of a CRLF and the bad characters other than surrogates
# (those become U+FFFD, one for one).
_DELETED = re.compile("\r(?=\n)|[\x00-\x08\x0b\x0e-\x1f\x7f\ufffe\uffff]")


def _moved_boxes(
    raw: str, length: int, boxes: Sequence[TextBox], offset: int
) -> list[TextBox]:
    """`boxes` with offsets into `raw` moved to offsets into `clean_text(raw).strip("\n")`
    (`length` long) placed at `offset`; a box whose text was all removed is dropped."""
    deleted = [m.start() for m in _DELETED.finditer(raw)]
    cleaned = clean_text(raw)
    lead = len(cleaned) - len(cleaned.lstrip("\n"))
    if not deleted and not lead:  # the common case: nothing moves
        return [
            box._replace(start=box.start + offset, end=min(box.end, length) + offset)
            for box in boxes
            if box.start < min(box.end, length)
        ]

    def moved(index: int) -> int:
        return min(max(index - bisect_left(deleted, index) - lead, 0), length) + offset

    out: list[TextBox] = []
    for box in boxes:
        start, end = moved(box.start), moved(box.end)
        if end <= start:
            continue
        edges = box.edges
        if edges and deleted:
            edges = tuple(
                x for i, x in enumerate(edges, start=box.start)
                if deleted[min(bisect_left(deleted, i), len(deleted) - 1)] != i
            )  # fmt: skip
        if edges and len(edges) != end - start:
            edges = ()
        out.append(box._replace(start=start, end=end, edges=edges))
    return out
