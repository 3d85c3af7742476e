"""Boxes on the page for every chunk of a PDF (`chunks.boxes`): the text PDFium finds under a
chunk's boxes is the chunk's own text, for the sample PDFs of tests/corpus/pdf."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageChops, ImageDraw

from content_core.chunking import ChunkingConfig
from content_core.discovery import discover_pending
from content_core.extract import TextBox, extract_text, span_boxes
from content_core.pipeline import build_chunks, build_normalised_artifacts, build_raw_files
from content_core.pipeline.config import ProcessingConfig
from content_core.search import Searcher
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import CHUNKS, NORMALISED_ARTIFACTS, ContentStore, compact_store

pytestmark = pytest.mark.timeout(600)

PDFS = Path(__file__).resolve().parents[1] / "corpus" / "pdf"


_TAG = re.compile(r"<[^>]*>")


def _letters(text: str) -> str:
    """The letters and digits of `text`, in order: white space, punctuation, PDFium's
    hyphenation marks and the markup of a table rendered as HTML dropped (a Markdown
    table's is punctuation)."""
    return "".join(c for c in _TAG.sub(" ", text) if c.isalnum())


def _store(tmp_path: Path, config: ChunkingConfig) -> tuple[ContentStore, str]:
    """The sample PDFs through normalisation and chunking under `config`."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for pdf in PDFS.glob("*.pdf"):
        shutil.copy(pdf, folder / pdf.name)
    store = ContentStore(tmp_path / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder))
    [batch] = discover_pending(source, store, set(), time_budget_s=60, settle_s=0.0).discovered
    build_raw_files(store, batch)
    build_normalised_artifacts(store, batch, ProcessingConfig())
    build_chunks(store, batch, config)
    return store, batch


def _glyphs(page: Any) -> tuple[list[tuple[str, float, float]], str]:
    """Every character of the page's text layer with the centre of its tight box, and the
    letters of those drawn outside the page's crop box (in text order)."""
    textpage = page.get_textpage()
    _, bottom, _, top = page.get_cropbox()
    out, off = [], []
    for index in range(textpage.count_chars()):
        x0, y0, x1, y1 = textpage.get_charbox(index)
        char = textpage.get_text_range(index, 1)
        out.append((char, (x0 + x1) / 2, (y0 + y1) / 2))
        if (y0 + y1) / 2 < bottom or (y0 + y1) / 2 > top:
            off.append(char)
    return out, _letters("".join(off))


def _less_off_page(expected: str, found: str, off_page: str) -> bool:
    """Whether `expected` is `found` with letters drawn off the page put back: text set
    outside the crop box (page numbers drawn one over another below the page) is extracted
    but has no place on the page, so it has no box."""
    spare = Counter(off_page)
    at = 0
    for char in expected:
        if at < len(found) and found[at] == char:
            at += 1
        elif spare[char] > 0:
            spare[char] -= 1
        else:
            return False
    return at == len(found)


def _text_under(glyphs: dict[int, list[tuple[str, float, float]]],
                boxes: list[dict[str, float]]) -> str:
    """The characters whose tight box's centre lies inside one of `boxes`, box by box, each
    taken once, in the page's order within a box."""
    out = []
    taken: set[tuple[int, int]] = set()
    for box in boxes:
        number = int(box["page"])
        for index, (char, x, y) in enumerate(glyphs[number]):
            if (number, index) not in taken and box["x0"] <= x <= box["x1"] \
                    and box["y0"] <= y <= box["y1"]:
                taken.add((number, index))
                out.append(char)
    return "".join(out)


# The filled-in values of a PDF's form, appended to its page's text by the extractor: they
# are not in the page's text layer (widgets draw them), so no box holds them.
_FORM_FIELDS = "\n\nForm fields:\n"


def _page_text(artifact: dict[str, Any], start: int, end: int) -> str:
    """The artifact's text from `start` to `end` less any form fields appended to a page."""
    text = artifact["text"][start:end]
    at = text.find(_FORM_FIELDS)
    return text if at < 0 else text[:at]


def _has_rtl(text: str) -> bool:
    """Whether `text` holds Hebrew or Arabic letters (and their presentation forms)."""
    return any("\u0590" <= c <= "\u08ff" or "\ufb1d" <= c <= "\ufefc" for c in text)


def _same_letters(expected: str, found: str) -> bool:
    """The chunk's letters and the ones under its boxes agree: in order, or, for text read
    right to left, as a multiset (PDFium gives it in the order drawn, extraction in the order
    read)."""
    if _letters(expected) == _letters(found):
        return True
    return _has_rtl(expected) and Counter(_letters(expected)) == Counter(_letters(found))


@pytest.mark.parametrize(
    "config",
    [ChunkingConfig(), ChunkingConfig(chunk_size=96, chunk_overlap=24)],
    ids=["default", "small-chunks"],
)
def test_the_text_under_each_chunks_boxes_is_the_chunks_text(
    tmp_path: Path, config: ChunkingConfig
) -> None:
    """The text read back under a chunk's boxes is the chunk's text (letters and digits
    compared). Read back honestly: a character counts when the centre of its tight box lies
    inside one of the boxes (not when its box merely touches one, as PDFium's
    get_text_bounded takes them). No chunk is left out: chunks that split a table are
    checked like the rest; letters drawn outside the page's crop box have no box and are
    allowed missing (counted in the figure printed)."""
    store, batch = _store(tmp_path, config)
    artifacts = {r["artifact_id"]: r for r in store.read_rows(NORMALISED_ARTIFACTS, batch)
                 .to_pylist() if r["text"]}  # fmt: skip
    glyphs: dict[tuple[str, int], tuple[list[tuple[str, float, float]], str]] = {}
    checked = matched = off_page_chunks = 0
    misses: list[str] = []
    for chunk in store.read_rows(CHUNKS, batch).to_pylist():
        if chunk["content"] is None:
            continue
        artifact = artifacts[chunk["artifact_id"]]
        start, end = chunk["source_start"], chunk["source_end"]
        text = _page_text(artifact, start, end)
        # Pages read by OCR have no text layer to read back: test_ocr_boxes_hold_the_ink.
        ocr = {page["page"] for page in artifact["ocr_pages"] or ()}
        if not _letters(text) or ocr & set(range(chunk["page_start"], chunk["page_end"] + 1)):
            continue
        path = str(chunk["path"])
        pages = range(chunk["page_start"], chunk["page_end"] + 1)
        for number in {int(box["page"]) for box in chunk["boxes"]} | set(pages):
            if (path, number) not in glyphs:
                page = pdfium.PdfDocument(PDFS / path)[number - 1]
                page.set_rotation(0)  # boxes are in the unrotated frame
                glyphs[path, number] = _glyphs(page)
        checked += 1
        under = _text_under({n: glyphs[path, n][0] for n in
                             {int(b["page"]) for b in chunk["boxes"]}}, chunk["boxes"])  # fmt: skip
        off_page = "".join(glyphs[path, n][1] for n in pages)
        if _same_letters(text, under):
            matched += 1
        elif _less_off_page(_letters(text), _letters(under), off_page):
            matched += 1
            off_page_chunks += 1
        else:
            misses.append(f"{path} [{start}:{end}]: {_difference(text, under)}")
    assert checked >= 40, "the sample PDFs give chunks with text"
    share = matched / checked
    print(f"\n{config.chunk_size}-token chunks whose boxes hold their text: "
          f"{matched}/{checked} = {share:.1%}; with text drawn off the page: {off_page_chunks}")
    print("\n".join(misses))
    # Issue 31 asks for 98 %: measured 100 % at both sizes (43/43 default, 185/185 at 96
    # tokens; two chunks each with page numbers drawn below the page). Misses are printed.
    assert share >= 0.98, misses


def _difference(expected: str, found: str) -> str:
    """Where the letters of `expected` and `found` first part, a few either side."""
    want, got = _letters(expected), _letters(found)
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b),
              min(len(want), len(got)))  # fmt: skip
    return f"expected ...{want[max(at - 8, 0):at + 24]!r}, found ...{got[max(at - 8, 0):at + 24]!r}"


def test_ocr_boxes_hold_the_ink(tmp_path: Path) -> None:
    """On the pages of a scan read by OCR, every line box holds ink, and most ink lies in a
    line box (the text layer cannot be read back there: there is none). Rules, a logo and a
    signature are ink without text: "most" is more than half."""
    store, batch = _store(tmp_path, ChunkingConfig())
    [scan] = [r for r in store.read_rows(NORMALISED_ARTIFACTS, batch).to_pylist()
              if r["path"].startswith("MEDRPT") and r["text"]]  # fmt: skip
    assert scan["ocr_pages"] and scan["text_boxes"]
    document = pdfium.PdfDocument(PDFS / scan["path"])
    scale = 2.0
    for reading in scan["ocr_pages"]:
        number = reading["page"]
        page = document[number - 1]
        image = page.render(scale=scale, grayscale=True).to_pil()
        left, _, _, top = page.get_cropbox()
        ink = image.point(lambda v: 255 if v < 128 else 0)
        covered = Image.new("L", image.size, 0)
        draw = ImageDraw.Draw(covered)
        boxes = [b for b in scan["text_boxes"] if b["page"] == number]
        assert boxes, f"page {number} read by OCR has line boxes"
        for box in boxes:
            area = ((box["x0"] - left) * scale, (top - box["y1"]) * scale,
                    (box["x1"] - left) * scale, (top - box["y0"]) * scale)  # fmt: skip
            assert ink.crop(tuple(round(v) for v in area)).getbbox() is not None, box
            draw.rectangle(area, fill=255)
        inked = ImageChops.multiply(ink, covered)
        share = _count(inked) / max(_count(ink), 1)
        assert share > 0.5, f"page {number}: {share:.0%} of the ink lies in line boxes"


def _count(image: Image.Image) -> int:
    return int(image.histogram()[255])


def test_a_chunk_starting_inside_a_line_is_boxed_from_its_first_glyph() -> None:
    data = (PDFS / "fake-memo.pdf").read_bytes()
    extracted = extract_text(data, "application/pdf")
    line = max(extracted.text_boxes, key=lambda box: box.end - box.start)
    assert len(line.edges) == line.end - line.start
    middle = line.start + (line.end - line.start) // 2
    [whole] = span_boxes(extracted.text_boxes, line.start, line.end)
    [half] = span_boxes(extracted.text_boxes, middle, line.end)
    assert (half.page, half.y0, half.x1, half.y1) == (whole.page, whole.y0, whole.x1, whole.y1)
    assert half.x0 == line.edges[middle - line.start] > whole.x0
    document = pdfium.PdfDocument(data)
    glyphs, _ = _glyphs(document[half.page - 1])
    under = _text_under({half.page: glyphs}, [half._asdict()])
    assert _letters(under) == _letters(extracted.text[middle : line.end])


@pytest.mark.parametrize(
    ("boxes", "merged"),
    [
        # Two full lines of one column, one under the other: one block.
        ([(0, 10, 72, 700, 300, 712), (11, 20, 72, 686, 290, 698)], [(72, 686, 300, 712)]),
        # A short last line of a paragraph stays a box of its own.
        ([(0, 10, 72, 700, 300, 712), (11, 14, 72, 686, 110, 698)],
         [(72, 700, 300, 712), (72, 686, 110, 698)]),
        # Lines of two columns side by side never merge.
        ([(0, 10, 72, 700, 290, 712), (11, 20, 310, 700, 530, 712)],
         [(72, 700, 290, 712), (310, 700, 530, 712)]),
        # A wide gap between lines (a new paragraph far below) keeps them apart.
        ([(0, 10, 72, 700, 300, 712), (11, 20, 72, 650, 300, 662)],
         [(72, 700, 300, 712), (72, 650, 300, 662)]),
    ],
    ids=["column-block", "short-last-line", "two-columns", "far-apart"],
)
def test_touching_lines_of_one_column_merge_into_a_block(
    boxes: list[tuple[int, ...]], merged: list[tuple[int, ...]]
) -> None:
    lines = [TextBox(s, e, 1, x0, y0, x1, y1) for s, e, x0, y0, x1, y1 in boxes]
    found = span_boxes(lines, 0, 20)
    assert [(b.x0, b.y0, b.x1, b.y1) for b in found] == merged


def test_a_span_without_lines_has_no_boxes() -> None:
    assert span_boxes([], 0, 10) == []
    assert span_boxes([TextBox(0, 5, 1, 0, 0, 10, 10)], 6, 9) == []


def test_search_hits_carry_their_chunks_boxes(tmp_path: Path) -> None:
    store, batch = _store(tmp_path, ChunkingConfig())
    hits = Searcher(store.root).search("dense passage retriever", 3, "bm25")
    assert hits and hits[0].path == "multi-column-2p.pdf"
    boxes = {c["chunk_id"]: c["boxes"] for c in store.read_rows(CHUNKS, batch).to_pylist()}
    for hit in hits:
        assert [box._asdict() for box in hit.boxes] == boxes[hit.chunk_id]
    assert all(hit.boxes for hit in hits if hit.media_type == "application/pdf")
    # Compacted, the batch's chunks file is gone: its rows are read back from the packed file.
    compact_store(store, min_files=1)
    assert not store.table_path(CHUNKS, batch).exists()
    packed = Searcher(store.root).search("dense passage retriever", 3, "bm25")
    assert [hit.boxes for hit in packed] == [hit.boxes for hit in hits]
