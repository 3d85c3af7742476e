"""OcrConfig: which OCR engine reads scanned pages and images, in which languages, at what
resolution, and when a PDF page's own text layer is kept; VlmConfig: which hard pages a
vision-language model reads instead, and how many."""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = ["OCR_MODES", "VLM_PROMPT_VERSIONS", "OcrConfig", "OcrMode", "VlmConfig"]

OcrMode = Literal["auto", "off", "tesseract", "rapidocr"]
OCR_MODES: tuple[str, ...] = ("auto", "off", "tesseract", "rapidocr")
_LANGUAGE = re.compile(r"^[a-z]{3}(_[a-z]+)?$")
# The page prompts shipped in content_core/ocr/prompts/ (vlm-page-<version>.md).
VLM_PROMPT_VERSIONS: tuple[str, ...] = ("v1",)


class VlmConfig(BaseModel):
    """The vision route (environment: `CONTENT_VLM_URL`, `CONTENT_VLM_MODEL`,
    `CONTENT_VLM_API_KEY`, `CONTENT_VLM_MAX_PAGES`, `CONTENT_VLM_MAX_BATCH_PAGES`).

    With `url` (an OpenAI-compatible base URL ending in the API prefix, e.g.
    `http://localhost:8000/v1`) and `model` both set, the PDF pages whose quality score is under
    `min_quality` (scans, unreadable glyphs, text drawn as outlines, dense formulas) are
    rendered at `dpi` and converted to Markdown by the model, worst pages first, at most
    `max_pages_per_file` per file and `max_pages_per_batch` requests per batch. Unset: off.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = None
    model: str | None = None
    # A secret: left out of dumps, so fingerprints and logs never hold it.
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    max_pages_per_file: int = Field(default=10, ge=0)
    # Requests per batch (cache hits are free), shared by the batch's worker processes.
    max_pages_per_batch: int = Field(default=100, ge=0)
    min_quality: float = Field(default=0.5, ge=0.0, le=1.0)
    dpi: int = Field(default=150, ge=72, le=300)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    prompt_version: str = "v1"

    @field_validator("url", "model", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """An empty environment variable means unset."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("prompt_version")
    @classmethod
    def _known_prompt(cls, value: str) -> str:
        if value not in VLM_PROMPT_VERSIONS:
            raise ValueError(f"unknown VLM prompt version {value!r}; known: {VLM_PROMPT_VERSIONS}")
        return value

    @property
    def enabled(self) -> bool:
        """True when both the endpoint and the model are set."""
        return bool(self.url and self.model)


class OcrConfig(BaseModel):
    """OCR settings (environment: `CONTENT_OCR`, `CONTENT_OCR_LANGS`).

    `mode` "auto" picks Tesseract when it is installed with every language of `languages`
    (fastest and most accurate on the measured pages, docs/benchmarks/ocr.md), else RapidOCR,
    whose models come inside its wheel; "off" never runs OCR; an engine name runs only that engine.
    `languages` are Tesseract's codes ("eng", "deu", "chi_sim"), in order of preference.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: OcrMode = "auto"
    languages: tuple[str, ...] = ("eng",)
    dpi: int = Field(default=300, ge=72, le=600)
    # A page with at least this many readable characters keeps its text layer untouched,
    # without rendering anything.
    good_text_chars: int = Field(default=200, ge=1)
    # Share of a page's characters that may be unreadable (U+FFFD, private use, control
    # characters: a font without a Unicode map) before the text layer counts as garbage.
    max_garbage_share: float = Field(default=0.2, ge=0.0, le=1.0)
    # A page mostly covered by images (>= image_share) whose text layer covers less than
    # text_share of it is a scan with a stamp or a header in text: OCR it.
    image_share: float = Field(default=0.5, ge=0.0, le=1.0)
    text_share: float = Field(default=0.05, ge=0.0, le=1.0)
    # Below this mean confidence (0..1) at the orientation first tried, the page is tried
    # upside down as well and the better reading kept.
    min_confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    # Tesseract's language data folder; None looks in TESSDATA_PREFIX and Debian's paths.
    tessdata_dir: str | None = None
    # Hard pages to a vision-language model; off unless its URL and model are set.
    vlm: VlmConfig = VlmConfig()

    @field_validator("languages", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        """Accept "eng+deu" or "eng,deu" (the environment's form) as well as a sequence."""
        if isinstance(value, str):
            return tuple(part for part in re.split(r"[+,\s]+", value.strip()) if part)
        return value

    @field_validator("languages")
    @classmethod
    def _check(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("at least one OCR language is needed")
        for language in value:
            if not _LANGUAGE.match(language):
                raise ValueError(f"{language!r} is not a Tesseract language code like 'eng'")
        return value

    def fingerprint(self) -> str:
        """A short hash of every setting."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()[:16]
