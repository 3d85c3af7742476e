"""OCR of PDF pages and images: which pages need it and which go to a vision-language model.

A PDF page keeps its text layer unless it has none, its text is mostly unreadable glyphs, or
it is a picture (images over most of the page) with a sliver of text on it. Such a page is
rendered, turned upright (`orientation`) and read by the configured engine, cached
(`readings`). With the vision route on, the pages of low quality (`quality`) go to the
model first (`vlm`).
"""

from __future__ import annotations

import io
import logging
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from content_core.errors import OcrUnavailableError
from content_core.extract.base import ExtractedText, TextBox, build_text
from content_core.ocr.config import OcrConfig
from content_core.ocr.engines import OcrEngine, OcrLine, build_engine
from content_core.ocr.quality import PageQuality, drawn_text_quality, scan_quality, text_quality
from content_core.ocr.readings import cached_read

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from content_core.ocr.vlm_budget import VlmBudget

__all__ = ["OcrOutcome", "OcrPage", "ocr_image", "ocr_pdf"]

logger = logging.getLogger(__name__)

# Rendering stops at this many pixels per page (a poster-sized page at 300 DPI would not).
_MAX_PAGE_PIXELS = 40_000_000
# A scan coarser than this is still rendered at this resolution: engines read small text
# badly below it.
_MIN_DPI = 150.0


_OCR_ERRORS = (RuntimeError, ValueError, OSError, MemoryError)
# content_core.ocr.vlm.VLM_REASON_PREFIX, which is imported only when the vision route is on.
_VLM_REASON_PREFIX = "vlm "


class OcrPage(BaseModel):
    """One page that was read by OCR: its number (1-based), the engine's mean confidence
    (0..1), the rotation applied to make it upright (degrees counter-clockwise) and why it
    was read ("no_text", "garbage", "image" for a picture with a sliver of text). A page the
    vision-language model read has the reason "vlm <model>: <why>" (why: one of those, or
    "glyphs", "formulas", "vector_text"), confidence 0 and rotation 0."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    page: int = Field(ge=1)
    confidence: float
    rotation: int
    reason: str


@dataclass(frozen=True, slots=True)
class OcrOutcome:
    """The text after OCR (the input's where nothing was read), which engine read which
    pages, notes for the row, and the error to record when a needed engine is missing."""

    extracted: ExtractedText
    engine: str | None = None
    pages: tuple[OcrPage, ...] = ()
    notes: tuple[str, ...] = ()
    unavailable: OcrUnavailableError | None = None

    @property
    def confidence(self) -> float | None:
        """The mean confidence of the pages OCR read, or None when it read none (a model
        reports no confidence: the pages it read carry 0 and are left out)."""
        pages = [page for page in self.pages if not _by_vlm(page)]
        if not pages:
            return None
        return sum(page.confidence for page in pages) / len(pages)


def ocr_pdf(
    data: bytes,
    extracted: ExtractedText,
    config: OcrConfig,
    *,
    cache_dir: Path | None,
    deadline: float | None = None,
    defer_claimed: bool = False,
    vlm_budget: VlmBudget | None = None,
) -> OcrOutcome:
    """OCR the pages of the PDF `data` whose text layer in `extracted` is missing or
    unusable; keep the others as they are. With the vision route on (`config.vlm`), the
    pages whose quality score is low go to the model first (within its caps and
    `vlm_budget`), and OCR reads those of the unusable ones the model did not.

    No page is started after `deadline` (a `time.monotonic()` value): the pages left are
    named in a note, and a rerun reads them after the cached ones. A page another process is
    reading is waited for, or with `defer_claimed` raises `PageClaimed`.

    A page that needs OCR while `config.mode` names an engine that cannot run makes the
    outcome `unavailable`; with "auto", or when OCR is off, a note names the pages.
    """
    import pypdfium2 as pdfium

    texts = [extracted.text[span.start : span.end] for span in extracted.pages]
    # Each page's line boxes, offsets into its text: the text layer's until OCR reads it.
    boxes = [extracted.page_boxes(span.page) for span in extracted.pages]
    needed = {
        number: reason
        for number, text in enumerate(texts, start=1)
        if (reason := _text_layer_problem(text, config)) != "ok"
    }
    hard: dict[int, PageQuality] = {}
    if config.vlm.enabled:
        hard = {number: quality for number, text in enumerate(texts, start=1)
                if number not in needed
                and (quality := text_quality(text)).score < config.vlm.min_quality}
    if not needed and not hard:
        return OcrOutcome(extracted=extracted)
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:  # its text came from another parser (pypdf)
        return OcrOutcome(extracted=extracted, notes=(f"OCR: PDFium cannot open the PDF ({exc})",))
    read: list[OcrPage] = []
    notes: list[str] = []
    engine: OcrEngine | None = None
    try:
        todo = _pages_to_read(pdfium, document, needed, config, hard)
        if hard or (todo and config.vlm.enabled):
            from content_core.ocr.vlm import read_hard_pages, vlm_reason

            hard.update({number: scan_quality(reason) for number, reason in todo.items()})
            reading = read_hard_pages(pdfium, document, hard, config.vlm, cache_dir=cache_dir,
                                      budget=vlm_budget, deadline=deadline,
                                      defer_claimed=defer_claimed)
            notes.extend(reading.notes)
            model = str(config.vlm.model)
            for number, markdown in reading.texts.items():
                texts[number - 1] = markdown
                boxes[number - 1] = []
                todo.pop(number, None)
                read.append(OcrPage(page=number, confidence=0.0, rotation=0,
                                    reason=vlm_reason(model, hard[number].reason)))
        if todo:
            try:
                engine = build_engine(config)
            except OcrUnavailableError as exc:
                return _with_vlm(_unavailable(extracted, sorted(todo), exc, config), texts,
                                 boxes, read, notes, config)
            if engine is None:
                return _with_vlm(_unavailable(extracted, sorted(todo), None, config), texts,
                                 boxes, read, notes, config)
            read.extend(_read_pages(pdfium, document, engine, todo, texts, boxes, notes, config,
                                    cache_dir, deadline, defer_claimed))
    finally:
        document.close()
    read.sort(key=lambda page: page.page)
    rebuilt = (build_text(texts, handler=extracted.handler, paged=True, boxes=boxes)
               if read else extracted)  # fmt: skip
    return OcrOutcome(extracted=rebuilt, engine=_engines(engine, read, config),
                      pages=tuple(read), notes=tuple(notes))


def _pages_to_read(
    pdfium: Any, document: Any, needed: dict[int, str], config: OcrConfig,
    hard: dict[int, PageQuality],
) -> dict[int, str]:
    """The pages of `needed` to read by OCR (a page with a few characters only when it is a
    picture); with the vision route on, a page with a few characters that draws its text as
    outlines goes into `hard`."""
    todo: dict[int, str] = {}
    for number, reason in needed.items():
        if reason != "few_chars":
            todo[number] = reason
            continue
        try:
            page = document[number - 1]
            try:
                if _is_picture(pdfium, page, config):
                    todo[number] = "image"
                elif config.vlm.enabled:
                    quality = drawn_text_quality(pdfium, page)
                    if quality.score < config.vlm.min_quality:
                        hard[number] = quality
            finally:
                page.close()
        except pdfium.PdfiumError as exc:  # its few characters stay as they are
            logger.warning("page %d: cannot inspect its images: %s", number, exc)
    return todo


def _read_pages(
    pdfium: Any,
    document: Any,
    engine: OcrEngine,
    todo: dict[int, str],
    texts: list[str],
    boxes: list[list[TextBox]],
    notes: list[str],
    config: OcrConfig,
    cache_dir: Path | None,
    deadline: float | None,
    defer_claimed: bool,
) -> list[OcrPage]:
    """Read the pages of `todo` with `engine` into `texts` and their lines' boxes (in PDF
    points) into `boxes`; notes for those left unread."""
    read: list[OcrPage] = []
    for number, reason in todo.items():
        if deadline is not None and time.monotonic() > deadline:
            left = [str(n) for n in todo if n >= number]
            notes.append(f"pages {', '.join(left)} not read by OCR: past the time budget "
                         "(3/4 of the file's time limit); a rerun goes on from the cache")
            break
        try:
            page = document[number - 1]
            try:
                image = _render(page, _page_dpi(pdfium, page, config))
                # The render's pixels from the crop box's top left; a page drawn turned by
                # /Rotate is left without boxes (they would be in the turned frame).
                crop_left, _, crop_right, crop_top = (float(v) for v in page.get_cropbox())
                upright = not page.get_rotation() and crop_right > crop_left
            finally:
                page.close()
            result, rotation = cached_read(engine, image, config, cache_dir, deadline,
                                            defer_claimed)
        # PdfiumError is a RuntimeError: a page that cannot be rendered is noted like one
        # the engine failed on, and the other pages are still read.
        except _OCR_ERRORS as exc:
            notes.append(f"page {number}: OCR failed ({type(exc).__name__}: {exc})")
            continue
        texts[number - 1] = result.text
        scale = image.width / (crop_right - crop_left) if upright else 0.0
        boxes[number - 1] = [_in_points(line, number, crop_left, crop_top, scale)
                             for line in result.lines] if upright else []  # fmt: skip
        read.append(OcrPage(page=number, confidence=round(result.confidence, 4),
                            rotation=rotation, reason=reason))
    return read


def _in_points(line: OcrLine, page: int, left: float, top: float, scale: float) -> TextBox:
    """`line`, in pixels of the page rendered at `scale` from (left, top), in PDF points."""
    return TextBox(
        line.start, line.end, page, left + line.x0 / scale, top - line.y1 / scale,
        left + line.x1 / scale, top - line.y0 / scale,
        tuple(round(left + x / scale, 2) for x in line.edges),
    )  # fmt: skip


def _engines(engine: OcrEngine | None, read: list[OcrPage], config: OcrConfig) -> str | None:
    """The names of what read pages: the OCR engine, "vlm:<model>", or both joined by "+"."""
    names = []
    if engine is not None and any(not _by_vlm(page) for page in read):
        names.append(engine.name)
    if any(_by_vlm(page) for page in read):
        names.append(f"vlm:{config.vlm.model}")
    return "+".join(names) or None


def _by_vlm(page: OcrPage) -> bool:
    return page.reason.startswith(_VLM_REASON_PREFIX)


def _with_vlm(
    outcome: OcrOutcome, texts: list[str], boxes: list[list[TextBox]], read: list[OcrPage],
    notes: list[str], config: OcrConfig,
) -> OcrOutcome:
    """`outcome` (OCR could not run) with the pages the VLM read all the same."""
    if not read:
        return OcrOutcome(extracted=outcome.extracted, notes=(*notes, *outcome.notes),
                          unavailable=outcome.unavailable)
    rebuilt = build_text(texts, handler=outcome.extracted.handler, paged=True, boxes=boxes)
    read.sort(key=lambda page: page.page)
    return OcrOutcome(extracted=rebuilt, engine=_engines(None, read, config), pages=tuple(read),
                      notes=(*notes, *outcome.notes), unavailable=outcome.unavailable)


def ocr_image(
    data: bytes,
    config: OcrConfig,
    *,
    cache_dir: Path | None,
    deadline: float | None = None,
    defer_claimed: bool = False,
) -> OcrOutcome:
    """OCR one still image (any format Pillow opens); the text has no page spans. Another
    process reading the same pixels is waited for until `deadline` at most, or with
    `defer_claimed` raises `PageClaimed`.

    An engine named in `config.mode` that cannot run comes back as `unavailable`; with
    "auto", or when OCR is off, a note says that the image was not read.
    """
    from PIL import Image

    empty = ExtractedText(text="", handler="ocr")
    try:
        engine = build_engine(config)
    except OcrUnavailableError as exc:
        return _unavailable(empty, [], exc, config)
    if engine is None:
        return _unavailable(empty, [], None, config)
    try:
        with Image.open(io.BytesIO(data)) as opened:
            image = opened.convert("L")
    # The normaliser decoded these bytes already; a decoder that now refuses costs the text.
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        return OcrOutcome(extracted=empty,
                          notes=(f"OCR: cannot decode the image ({type(exc).__name__}: {exc})",))
    width = image.width
    if image.width * image.height > _MAX_PAGE_PIXELS:
        image.thumbnail((int((_MAX_PAGE_PIXELS * image.width / image.height) ** 0.5),
                         int((_MAX_PAGE_PIXELS * image.height / image.width) ** 0.5)))
    try:
        result, rotation = cached_read(engine, image, config, cache_dir, deadline,
                                        defer_claimed)
    except _OCR_ERRORS as exc:
        return OcrOutcome(extracted=empty, notes=(f"OCR failed ({type(exc).__name__}: {exc})",))
    page = OcrPage(page=1, confidence=round(result.confidence, 4), rotation=rotation,
                   reason="image")
    # Boxes in the pixels of the image as stored (it may have been read smaller).
    scale = width / image.width
    boxes = tuple(
        TextBox(line.start, line.end, 1, line.x0 * scale, line.y0 * scale, line.x1 * scale,
                line.y1 * scale, tuple(round(x * scale, 1) for x in line.edges))
        for line in result.lines
    )  # fmt: skip
    extracted = ExtractedText(text=result.text, handler=f"ocr:{engine.name}", text_boxes=boxes)
    return OcrOutcome(extracted=extracted, engine=engine.name, pages=(page,))


def _unavailable(
    extracted: ExtractedText,
    pages: list[int],
    error: OcrUnavailableError | None,
    config: OcrConfig,
) -> OcrOutcome:
    if len(pages) == 1:
        where = f"page {pages[0]} needs"
    else:
        where = f"pages {', '.join(map(str, pages))} need" if pages else "the image needs"
    if error is None:
        note = f"{where} OCR; OCR is off (CONTENT_OCR=off)"
        return OcrOutcome(extracted=extracted, notes=(note,))
    if config.mode != "auto":
        return OcrOutcome(extracted=extracted, unavailable=error)
    return OcrOutcome(extracted=extracted, notes=(f"{where} OCR; {error.message}",))


def _text_layer_problem(text: str, config: OcrConfig) -> str:
    """"ok", "no_text", "garbage" or "few_chars" (to be checked against the page's images)."""
    chars = "".join(text.split())
    if not chars:
        return "no_text"
    # Each distinct character is classified once (a page has a few dozen of them).
    bad = sum(
        count
        for c, count in Counter(chars).items()
        if c == "\ufffd" or unicodedata.category(c) in ("Co", "Cn", "Cc")
    )
    if bad / len(chars) > config.max_garbage_share:
        return "garbage"
    return "ok" if len(chars) - bad >= config.good_text_chars else "few_chars"


def _is_picture(pdfium: Any, page: Any, config: OcrConfig) -> bool:
    """Images cover most of the page and text objects only a sliver of it."""
    width, height = (float(side) for side in page.get_size())
    area = max(width * height, 1.0)

    def covered(kind: int) -> float:
        total = 0.0
        for obj in page.get_objects(filter=[kind]):
            left, bottom, right, top = obj.get_bounds()
            total += max(0.0, min(right, width) - max(left, 0.0)) * max(
                0.0, min(top, height) - max(bottom, 0.0)
            )
        return min(total / area, 1.0)

    return (covered(pdfium.raw.FPDF_PAGEOBJ_IMAGE) >= config.image_share
            and covered(pdfium.raw.FPDF_PAGEOBJ_TEXT) < config.text_share)


def _page_dpi(pdfium: Any, page: Any, config: OcrConfig) -> float:
    """`config.dpi`, or the resolution of a scan filling the page when that is lower:
    rendering a 200 DPI scan at 300 DPI only adds pixels for the engine to read."""
    width, height = (float(side) for side in page.get_size())
    best_area, best_dpi = 0.0, float(config.dpi)
    for obj in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE]):
        left, bottom, right, top = obj.get_bounds()
        area = (right - left) * (top - bottom)
        if area > best_area and area >= config.image_share * width * height:
            try:
                pixels = max(obj.get_px_size())
            except pdfium.PdfiumError:
                continue
            best_area = area
            best_dpi = pixels * 72 / max(right - left, top - bottom, 1.0)
    return max(_MIN_DPI, min(best_dpi, float(config.dpi)))


def _render(page: Any, dpi: float) -> PilImage:
    width, height = page.get_size()
    scale = dpi / 72
    if width * height * scale * scale > _MAX_PAGE_PIXELS:
        scale = (_MAX_PAGE_PIXELS / max(width * height, 1.0)) ** 0.5
    image: PilImage = page.render(scale=scale, grayscale=True).to_pil()
    return image
