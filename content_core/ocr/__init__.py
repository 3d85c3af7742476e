"""OCR for scanned PDF pages and images: pluggable engines, per-page decisions, orientation
and a cache (see docs/reference/ocr.md)."""

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.ocr.config import OCR_MODES as OCR_MODES
from content_core.ocr.config import OcrConfig as OcrConfig
from content_core.ocr.config import OcrMode as OcrMode
from content_core.ocr.engines import OcrEngine as OcrEngine
from content_core.ocr.engines import OcrResult as OcrResult
from content_core.ocr.engines import RapidOcrEngine as RapidOcrEngine
from content_core.ocr.engines import TesseractEngine as TesseractEngine
from content_core.ocr.engines import build_engine as build_engine
from content_core.ocr.engines import tessdata_dir as tessdata_dir
from content_core.ocr.orientation import rotation_candidates as rotation_candidates
from content_core.ocr.pages import OcrOutcome as OcrOutcome
from content_core.ocr.pages import OcrPage as OcrPage
from content_core.ocr.pages import PageClaimed as PageClaimed
from content_core.ocr.pages import ocr_image as ocr_image
from content_core.ocr.pages import ocr_pdf as ocr_pdf
from content_core.ocr.pages import read_upright as read_upright
from content_core.ocr.run import OcrRun as OcrRun
from content_core.ocr.run import is_picture as is_picture

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
