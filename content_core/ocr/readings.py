"""OCR readings of page images: upright (the better of two rotations) and cached by the
image's hash, the engine, its version and the languages, in the same on-disk cache the agents
use (`ExtractionCache`), so that no page is read twice, also by two processes at once."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from content_core.ocr.claims import read_once
from content_core.ocr.config import OcrConfig
from content_core.ocr.engines import OcrEngine, OcrLine, OcrResult
from content_core.ocr.orientation import orient, rotated

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from content_core.cache import ExtractionCache

__all__ = ["cached_read", "read_upright"]

logger = logging.getLogger(__name__)

# v2: readings carry their lines' boxes.
_CACHE_FORMAT = "ocr-page-v2"


def read_upright(
    engine: OcrEngine, image: PilImage, *, min_confidence: float
) -> tuple[OcrResult, int]:
    """Read `image` at the likelier upright rotation, and at the opposite one when that
    reading's confidence is under `min_confidence`; return the better reading and its
    rotation. The lines' boxes are in `image`'s own frame."""
    candidates = orient(image)
    if candidates is None:
        return OcrResult(text="", confidence=0.0), 0
    first, second = candidates
    best = engine.recognise(rotated(image, first)), first
    if best[0].confidence < min_confidence:
        other = engine.recognise(rotated(image, second)), second
        best = other if other[0].confidence > best[0].confidence else best
    result, turn = best
    if turn % 360 and result.lines:
        lines = tuple(_unturned(line, turn, image.width, image.height) for line in result.lines)
        result = OcrResult(text=result.text, confidence=result.confidence, lines=lines)
    return result, turn


def _unturned(line: OcrLine, degrees: int, width: int, height: int) -> OcrLine:
    """`line`, read on the image turned counter-clockwise by `degrees`, in the frame of the
    image before it was turned (its glyph edges no longer run along x: dropped)."""

    def back(u: float, v: float) -> tuple[float, float]:
        if degrees % 360 == 90:
            return width - v, u
        if degrees % 360 == 180:
            return width - u, height - v
        return v, height - u

    (ax, ay), (bx, by) = back(line.x0, line.y0), back(line.x1, line.y1)
    return OcrLine(line.start, line.end, min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))


def cached_read(
    engine: OcrEngine,
    image: PilImage,
    config: OcrConfig,
    cache_dir: Path | None,
    deadline: float | None = None,
    defer_claimed: bool = False,
) -> tuple[OcrResult, int]:
    """The reading of `image`, from the cache when it holds one. On a miss the page's claim
    is taken first: a process (another batch's worker) already reading the same pixels is
    waited for, until `deadline` or at most `CLAIM_WAIT_S`, instead of read a second time;
    with `defer_claimed` that process is not waited for: `PageClaimed` is raised."""
    # Imported here: the agents package pulls in HTTP clients a worker without OCR never uses.
    from content_core.cache import ExtractionCache

    if cache_dir is None:
        return read_upright(engine, image, min_confidence=config.min_confidence)
    cache = ExtractionCache(cache_dir)
    key = _cache_key(engine, image, config)
    return read_once(
        cache,
        key,
        cached=lambda: _cached(cache, key),
        read=lambda: read_upright(engine, image, min_confidence=config.min_confidence),
        store=lambda reading: _store(cache, key, engine, *reading),
        deadline=deadline,
        defer_claimed=defer_claimed,
    )


def _cached(cache: ExtractionCache, key: str) -> tuple[OcrResult, int] | None:
    if (hit := cache.get(key)) is None:
        return None
    try:
        stored = json.loads(hit.output_json)
        lines = tuple(
            OcrLine(int(a), int(b), float(x0), float(y0), float(x1), float(y1),
                    tuple(float(x) for x in edges))
            for a, b, x0, y0, x1, y1, edges in stored["lines"]
        )  # fmt: skip
        result = OcrResult(
            text=str(stored["text"]), confidence=float(stored["confidence"]), lines=lines
        )
        return result, int(stored["rotation"])
    except (ValueError, KeyError, TypeError):
        logger.warning("ignoring unreadable OCR cache entry %s", key)
        return None


def _store(
    cache: ExtractionCache, key: str, engine: OcrEngine, result: OcrResult, rotation: int
) -> None:
    from content_core.cache import CachedOutput

    payload = {
        "text": result.text, "confidence": result.confidence, "rotation": rotation,
        "lines": [[line.start, line.end, line.x0, line.y0, line.x1, line.y1, line.edges]
                  for line in result.lines],
    }  # fmt: skip
    try:
        cache.put(key, CachedOutput(output_json=json.dumps(payload), model=engine.name))
    except OSError as exc:  # a full or read-only disk costs a re-read later, not the page
        logger.warning("cannot cache an OCR reading: %s", exc)


def _cache_key(engine: OcrEngine, image: PilImage, config: OcrConfig) -> str:
    pixels = hashlib.sha256(image.tobytes())
    pixels.update(f"{image.mode}:{image.size}".encode())
    payload = json.dumps(
        [
            _CACHE_FORMAT,
            pixels.hexdigest(),
            engine.name,
            engine.version,
            list(engine.languages),
            config.min_confidence,
        ]
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
