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
from content_core.ocr.engines import OcrEngine, OcrResult
from content_core.ocr.orientation import orient, rotated

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from content_core.cache import ExtractionCache

__all__ = ["cached_read", "read_upright"]

logger = logging.getLogger(__name__)

_CACHE_FORMAT = "ocr-page-v1"


def read_upright(
    engine: OcrEngine, image: PilImage, *, min_confidence: float
) -> tuple[OcrResult, int]:
    """Read `image` at the likelier upright rotation, and at the opposite one when that
    reading's confidence is under `min_confidence`; return the better reading and its
    rotation."""
    candidates = orient(image)
    if candidates is None:
        return OcrResult(text="", confidence=0.0), 0
    first, second = candidates
    best = engine.recognise(rotated(image, first)), first
    if best[0].confidence >= min_confidence:
        return best
    other = engine.recognise(rotated(image, second)), second
    return other if other[0].confidence > best[0].confidence else best


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
        return OcrResult(text=str(stored["text"]), confidence=float(stored["confidence"])), (
            int(stored["rotation"])
        )
    except (ValueError, KeyError, TypeError):
        logger.warning("ignoring unreadable OCR cache entry %s", key)
        return None


def _store(
    cache: ExtractionCache, key: str, engine: OcrEngine, result: OcrResult, rotation: int
) -> None:
    from content_core.cache import CachedOutput

    payload = {"text": result.text, "confidence": result.confidence, "rotation": rotation}
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
