"""OCR for scanned PDF pages and images: pluggable engines, per-page decisions, orientation
and a cache (see docs/reference/ocr.md)."""

from content_core.ocr.config import OCR_MODES, OcrConfig, OcrMode
from content_core.ocr.engines import (
    OcrEngine,
    OcrResult,
    RapidOcrEngine,
    TesseractEngine,
    build_engine,
    tessdata_dir,
)
from content_core.ocr.orientation import rotation_candidates
from content_core.ocr.pages import (
    OcrOutcome,
    OcrPage,
    PageClaimed,
    ocr_image,
    ocr_pdf,
    read_upright,
)
from content_core.ocr.run import OcrRun, is_picture

__all__ = [
    "OCR_MODES",
    "OcrConfig",
    "OcrEngine",
    "OcrMode",
    "OcrOutcome",
    "OcrPage",
    "OcrResult",
    "OcrRun",
    "PageClaimed",
    "RapidOcrEngine",
    "TesseractEngine",
    "build_engine",
    "is_picture",
    "ocr_image",
    "ocr_pdf",
    "read_upright",
    "rotation_candidates",
    "tessdata_dir",
]
