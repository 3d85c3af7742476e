"""OCR for scanned PDF pages and images: pluggable engines, per-page decisions, orientation
and a cache (see README, "OCR")."""

from content_core.ocr.config import OCR_MODES, OcrConfig, OcrMode
from content_core.ocr.engines import (
    OcrEngine,
    OcrResult,
    RapidOcrEngine,
    TesseractEngine,
    build_engine,
)
from content_core.ocr.pages import OcrOutcome, OcrPage, ocr_image, ocr_pdf, read_upright

__all__ = [
    "OCR_MODES",
    "OcrConfig",
    "OcrEngine",
    "OcrMode",
    "OcrOutcome",
    "OcrPage",
    "OcrResult",
    "RapidOcrEngine",
    "TesseractEngine",
    "build_engine",
    "ocr_image",
    "ocr_pdf",
    "read_upright",
]
