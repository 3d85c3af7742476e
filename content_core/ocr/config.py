"""OcrConfig: which OCR engine reads scanned pages and images, in which languages, at what
resolution, and when a PDF page's own text layer is kept."""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["OCR_MODES", "OcrConfig", "OcrMode"]

OcrMode = Literal["auto", "off", "tesseract", "rapidocr"]
OCR_MODES: tuple[str, ...] = ("auto", "off", "tesseract", "rapidocr")
_LANGUAGE = re.compile(r"^[a-z]{3}(_[a-z]+)?$")


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
