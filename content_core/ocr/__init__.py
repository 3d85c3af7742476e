"""OCR for scanned PDF pages and images: pluggable engines, per-page decisions, orientation
and a cache; hard pages to a vision-language model (see docs/reference/ocr.md)."""

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports
from content_core.ocr.claims import PageClaimed as PageClaimed
from content_core.ocr.config import OCR_MODES as OCR_MODES
from content_core.ocr.config import VLM_PROMPT_VERSIONS as VLM_PROMPT_VERSIONS
from content_core.ocr.config import OcrConfig as OcrConfig
from content_core.ocr.config import OcrMode as OcrMode
from content_core.ocr.config import VlmConfig as VlmConfig
from content_core.ocr.engines import OcrEngine as OcrEngine
from content_core.ocr.engines import OcrResult as OcrResult
from content_core.ocr.engines import RapidOcrEngine as RapidOcrEngine
from content_core.ocr.engines import TesseractEngine as TesseractEngine
from content_core.ocr.engines import build_engine as build_engine
from content_core.ocr.engines import tessdata_dir as tessdata_dir
from content_core.ocr.orientation import rotation_candidates as rotation_candidates
from content_core.ocr.pages import OcrOutcome as OcrOutcome
from content_core.ocr.pages import OcrPage as OcrPage
from content_core.ocr.pages import ocr_image as ocr_image
from content_core.ocr.pages import ocr_pdf as ocr_pdf
from content_core.ocr.quality import PageQuality as PageQuality
from content_core.ocr.quality import text_quality as text_quality
from content_core.ocr.readings import read_upright as read_upright
from content_core.ocr.run import OcrRun as OcrRun
from content_core.ocr.run import is_picture as is_picture
from content_core.ocr.vlm_budget import VlmBudget as VlmBudget
from content_core.ocr.vlm_budget import new_budget_file as new_budget_file

if TYPE_CHECKING:
    # The vision route's HTTP client: loaded on first use (it imports httpx).
    from content_core.ocr.vlm import VlmClient as VlmClient
    from content_core.ocr.vlm import read_hard_pages as read_hard_pages

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
