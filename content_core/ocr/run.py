"""OcrRun: OCR for the artifacts of one raw file, as processing calls it (its settings, its
cache folder, its deadline), and which artifacts are pictures to read."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from content_core.binary import media_types as mt
from content_core.binary.artifact import BinaryArtifact
from content_core.extract.base import ExtractedText, build_text
from content_core.formats import NormaliseStep, default_formats
from content_core.ocr.config import OcrConfig
from content_core.ocr.pages import OcrOutcome, ocr_image, ocr_pdf
from content_core.ocr.vlm_budget import VlmBudget

__all__ = ["OcrRun", "is_picture"]


@functools.cache
def _picture_types() -> frozenset[str]:
    formats = default_formats()
    return frozenset(
        media_type
        for media_type in formats.media_types(NormaliseStep.CONVERT_IMAGE)
        if not formats.yields_text(media_type)
    )


def is_picture(artifact: BinaryArtifact) -> bool:
    """Return True for an image artifact whose pixels may hold text (not a rendition: the
    text goes on the row of the image it renders)."""
    return not artifact.rendition and artifact.media_type in _picture_types()


@dataclass(frozen=True, slots=True)
class OcrRun:
    """OCR settings for one raw file: readings are cached in `cache_dir`, and no page is
    started after `deadline` (a `time.monotonic()` value). A page another process is reading
    is waited for, or with `defer_claimed` raises `PageClaimed`. `vlm_budget` is the batch's
    count of requests to the vision-language model (None: only the per-file cap applies)."""

    config: OcrConfig
    cache_dir: Path
    deadline: float | None = None
    defer_claimed: bool = False
    vlm_budget: VlmBudget | None = None

    def read_pdf(self, data: bytes, extracted: ExtractedText) -> OcrOutcome:
        """`extracted` with the pages of the PDF `data` that need OCR read by it."""
        return ocr_pdf(data, extracted, self.config, cache_dir=self.cache_dir,
                       deadline=self.deadline, defer_claimed=self.defer_claimed,
                       vlm_budget=self.vlm_budget)

    def read_picture(
        self, artifact: BinaryArtifact, renditions: Sequence[BinaryArtifact]
    ) -> OcrOutcome:
        """The text of an image, read from its PNG or (several frames) PDF rendition when it
        has one, else from its own bytes."""
        readable = [r for r in renditions if r.media_type in (mt.PNG, mt.PDF)]
        source = readable[0] if readable else artifact
        if source.media_type == mt.PDF:
            blank = build_text([""] * (source.page_count or 1), handler="ocr", paged=True)
            return self.read_pdf(source.bytes, blank)
        return ocr_image(source.bytes, self.config, cache_dir=self.cache_dir,
                         deadline=self.deadline, defer_claimed=self.defer_claimed)
