"""OCR engines behind one protocol: Tesseract (through tesserocr, with Debian's language data)
and RapidOCR (ONNX Runtime, models inside its wheel), and the choice between them.

Both imports are lazy: the `ocr` extra is optional, and a missing engine surfaces as
`OcrUnavailableError` only when a page needs OCR.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from content_core.errors import OcrUnavailableError
from content_core.ocr.config import OcrConfig

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = [
    "OcrEngine",
    "OcrResult",
    "RapidOcrEngine",
    "TesseractEngine",
    "build_engine",
    "tessdata_dir",
]

# Where Debian's tesseract-ocr packages put the language data (5.x, then 4.x layouts).
_TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
)
# Tesseract language codes -> the RapidOCR (PP-OCRv6 multilingual) names the wheel's
# recogniser reads; a language not listed here is not offered by the RapidOCR engine.
_RAPID_LANGUAGES = {
    "eng": "en", "chi_sim": "ch", "chi_tra": "chinese_cht", "jpn": "japan", "deu": "de",
    "fra": "fr", "spa": "es", "ita": "it", "por": "pt", "nld": "nl", "dan": "da",
    "swe": "sv", "nor": "no", "fin": "fi", "pol": "pl", "ces": "cs", "tur": "tr",
}


@dataclass(frozen=True, slots=True)
class OcrResult:
    """What an engine read on one image: its text (lines joined by newlines) and the mean
    confidence of its lines or words, from 0 to 1 (0 when nothing was read)."""

    text: str
    confidence: float


class OcrEngine(Protocol):
    """An OCR engine: its identity (part of every cache key) and one call per image."""

    name: str
    version: str
    languages: tuple[str, ...]

    def recognise(self, image: PilImage) -> OcrResult:
        """Return the text on `image` (upright: orientation is fixed by the caller)."""
        ...


def tessdata_dir(config: OcrConfig) -> Path | None:
    """The folder holding Tesseract's `*.traineddata`, or None when none is installed."""
    candidates = [config.tessdata_dir, os.environ.get("TESSDATA_PREFIX"), *_TESSDATA_DIRS]
    for candidate in candidates:
        if candidate and any(Path(candidate).glob("*.traineddata")):
            return Path(candidate)
    return None


class TesseractEngine:
    """Tesseract through tesserocr's in-process API, one `PyTessBaseAPI` kept per engine."""

    name = "tesseract"

    def __init__(self, languages: tuple[str, ...], data_dir: Path, *, threads: int = 1) -> None:
        if threads == 1:
            # The worker pool runs one page per core; Tesseract's own OpenMP threads would
            # only contend with the other worker.
            os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        try:
            import tesserocr
        except ImportError as exc:
            raise OcrUnavailableError(
                "Tesseract OCR needs the tesserocr package", extra="ocr"
            ) from exc
        installed = {path.stem for path in data_dir.glob("*.traineddata")}
        missing = [language for language in languages if language not in installed]
        if missing:
            raise OcrUnavailableError(
                f"Tesseract has no language data for {', '.join(missing)} in {data_dir} "
                f"(Debian: apt-get install {' '.join(_tesseract_package(m) for m in missing)})"
            )
        self.languages = languages
        library = tesserocr.tesseract_version().split()[1]
        self.version = f"{library}/tesserocr-{tesserocr.__version__}"
        try:
            self._api: Any = tesserocr.PyTessBaseAPI(  # Any: an untyped Cython class
                path=str(data_dir), lang="+".join(languages), psm=tesserocr.PSM.AUTO
            )
        except RuntimeError as exc:
            raise OcrUnavailableError(f"Tesseract failed to start: {exc}") from exc

    def recognise(self, image: PilImage) -> OcrResult:
        """Return Tesseract's text and its mean word confidence (0..1)."""
        self._api.SetImage(image)
        text = str(self._api.GetUTF8Text()).strip()
        confidence = max(0, int(self._api.MeanTextConf())) / 100 if text else 0.0
        return OcrResult(text=text, confidence=confidence)


class RapidOcrEngine:
    """RapidOCR (PP-OCRv6 on ONNX Runtime) with the models its wheel carries: no download."""

    name = "rapidocr"

    def __init__(self, languages: tuple[str, ...], *, threads: int = 1) -> None:
        missing = [language for language in languages if language not in _RAPID_LANGUAGES]
        if missing:
            raise OcrUnavailableError(
                f"RapidOCR's bundled models do not read {', '.join(missing)}; install "
                "Tesseract with that language (docs/reference/ocr.md)"
            )
        try:
            from rapidocr import RapidOCR
        except ImportError as exc:
            raise OcrUnavailableError(
                "RapidOCR needs the rapidocr and onnxruntime packages", extra="ocr"
            ) from exc
        self.languages = languages
        runtime = metadata.version("onnxruntime")
        self.version = f"{metadata.version('rapidocr')}/onnxruntime-{runtime}"
        # Line-level angle classification is off: the page's orientation is fixed before
        # recognition, and a flipped line's low confidence is what tells an upside-down page.
        self._ocr: Any = RapidOCR(params={  # Any: RapidOCR is untyped
            "Global.log_level": "critical",
            "Global.use_cls": False,
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        })

    def recognise(self, image: PilImage) -> OcrResult:
        """Return the detected lines in reading order and their mean recognition score."""
        import numpy as np

        output = self._ocr(np.asarray(image.convert("RGB")))
        if not output.txts:
            return OcrResult(text="", confidence=0.0)
        boxes = [[float(v) for v in box[:, 1]] + [float(box[:, 0].min())] for box in output.boxes]
        return OcrResult(
            text=_join_lines(boxes, list(output.txts)),
            confidence=float(sum(output.scores) / len(output.scores)),
        )


def _join_lines(boxes: list[list[float]], texts: list[str]) -> str:
    """Join detected boxes (y of 4 corners, then left x) into lines: a box whose vertical
    centre lies within the previous box's height continues that line."""
    items = sorted(
        zip(boxes, texts, strict=True),
        key=lambda item: ((min(item[0][:4]) + max(item[0][:4])) / 2, item[0][4]),
    )
    lines: list[list[tuple[float, str]]] = []
    last_top = last_bottom = -1.0
    for box, text in items:
        top, bottom = min(box[:4]), max(box[:4])
        centre = (top + bottom) / 2
        if lines and last_top <= centre <= last_bottom:
            lines[-1].append((box[4], text))
        else:
            lines.append([(box[4], text)])
            last_top, last_bottom = top, bottom
    return "\n".join(" ".join(text for _, text in sorted(line)) for line in lines)


def _tesseract_package(language: str) -> str:
    return "tesseract-ocr-" + language.replace("_", "-")


def build_engine(config: OcrConfig) -> OcrEngine | None:
    """The engine `config` asks for (None when OCR is off), built once per process.

    Raises:
        OcrUnavailableError: no engine that `config` allows can read its languages here.
    """
    if config.mode == "off":
        return None
    return _engine(config.mode, config.languages, config.tessdata_dir)


@functools.cache
def _engine(mode: str, languages: tuple[str, ...], data_dir: str | None) -> OcrEngine:
    config = OcrConfig(mode="auto", languages=languages, tessdata_dir=data_dir)
    reasons: list[str] = []
    if mode in ("auto", "tesseract"):
        found = tessdata_dir(config)
        try:
            if found is None:
                raise OcrUnavailableError(
                    "Tesseract's language data is not installed (Debian: apt-get install "
                    "tesseract-ocr tesseract-ocr-eng)"
                )
            return TesseractEngine(languages, found)
        except OcrUnavailableError as exc:
            if mode == "tesseract":
                raise
            reasons.append(exc.message)
    try:
        return RapidOcrEngine(languages)
    except OcrUnavailableError as exc:
        if mode == "rapidocr":
            raise
        reasons.append(exc.message)
    raise OcrUnavailableError("no OCR engine can run: " + "; ".join(reasons))
