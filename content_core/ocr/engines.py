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
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from content_core.errors import OcrUnavailableError
from content_core.ocr.config import OcrConfig

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = [
    "OcrEngine",
    "OcrLine",
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
class OcrLine:
    """Where `text[start:end]`, a line the engine read, lies on the image: pixels, origin at
    the top left (x0 < x1, y0 < y1); `edges` is the left edge of each character (inside a word
    spread evenly over the word's width)."""

    start: int
    end: int
    x0: float
    y0: float
    x1: float
    y1: float
    edges: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class OcrResult:
    """What an engine read on one image: its text (lines joined by newlines) and the mean
    confidence of its lines or words, from 0 to 1 (0 when nothing was read); `lines` places
    its lines on the image (empty when the engine gave no boxes)."""

    text: str
    confidence: float
    lines: tuple[OcrLine, ...] = ()


# A word is looked for this far past the end of the one before it (the engine's page text
# may hold a few characters its words do not, a paragraph break).
_MAX_SKIP_CHARS = 16


class _Word(NamedTuple):
    """A word (or a detected run of words) the engine read, and its box in pixels."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float


def placed_lines(text: str, lines: list[list[_Word]]) -> tuple[OcrLine, ...]:
    """The boxes of `lines` (each its words in order) found one after the other in `text`; a
    word not found near where the one before it ended is left out."""
    out: list[OcrLine] = []
    cursor = 0
    for words in lines:
        found: list[tuple[int, _Word]] = []
        for word in words:
            window = cursor + len(word.text) + _MAX_SKIP_CHARS
            at = text.find(word.text, cursor, window) if word.text else -1
            if at < 0:
                continue
            found.append((at, word))
            cursor = at + len(word.text)
        if not found:
            continue
        start = found[0][0]
        end = found[-1][0] + len(found[-1][1].text)
        edges: list[float] = []
        after = found[0][1].x0
        for at, word in found:
            # The white space between two words starts where the word before it ended.
            edges += [after] * (at - start - len(edges))
            step = (word.x1 - word.x0) / max(len(word.text), 1)
            edges += [word.x0 + step * k for k in range(len(word.text))]
            after = word.x1
        out.append(OcrLine(
            start, end, min(w.x0 for _, w in found), min(w.y0 for _, w in found),
            max(w.x1 for _, w in found), max(w.y1 for _, w in found),
            tuple(round(x, 1) for x in edges),
        ))  # fmt: skip
    return tuple(out)


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
        """Return Tesseract's text, its mean word confidence (0..1) and its lines' boxes."""
        self._api.SetImage(image)
        text = str(self._api.GetUTF8Text()).strip()
        confidence = max(0, int(self._api.MeanTextConf())) / 100 if text else 0.0
        return OcrResult(text=text, confidence=confidence,
                         lines=placed_lines(text, self._words()) if text else ())

    def _words(self) -> list[list[_Word]]:
        """The words of the last recognition with their boxes, line by line."""
        import tesserocr

        level, line_level = tesserocr.RIL.WORD, tesserocr.RIL.TEXTLINE
        lines: list[list[_Word]] = []
        iterator = self._api.GetIterator()
        if iterator is None:
            return lines
        for item in tesserocr.iterate_level(iterator, level):
            box = item.BoundingBox(level)
            word = item.GetUTF8Text(level)
            if box is None or not word:
                continue
            if not lines or item.IsAtBeginningOf(line_level):
                lines.append([])
            x0, y0, x1, y1 = (float(v) for v in box)
            lines[-1].append(_Word(str(word).strip(), x0, y0, x1, y1))
        return lines


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
        words = [
            _Word(str(text), float(box[:, 0].min()), float(box[:, 1].min()),
                  float(box[:, 0].max()), float(box[:, 1].max()))
            for box, text in zip(output.boxes, output.txts, strict=True)
        ]  # fmt: skip
        lines = _join_lines(words)
        text = "\n".join(" ".join(word.text for word in line) for line in lines)
        return OcrResult(
            text=text,
            confidence=float(sum(output.scores) / len(output.scores)),
            lines=placed_lines(text, lines),
        )


def _join_lines(words: list[_Word]) -> list[list[_Word]]:
    """Group detected boxes into lines, top to bottom, each left to right: a box whose
    vertical centre lies within the previous box's height continues that line."""
    items = sorted(words, key=lambda word: ((word.y0 + word.y1) / 2, word.x0))
    lines: list[list[_Word]] = []
    last_top = last_bottom = -1.0
    for word in items:
        top, bottom = word.y0, word.y1
        centre = (top + bottom) / 2
        if lines and last_top <= centre <= last_bottom:
            lines[-1].append(word)
        else:
            lines.append([word])
            last_top, last_bottom = top, bottom
    return [sorted(line, key=lambda word: word.x0) for line in lines]


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
