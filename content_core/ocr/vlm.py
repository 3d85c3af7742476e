"""The vision route: hard PDF pages rendered and converted to Markdown by a vision-language
model behind an OpenAI-compatible chat-completions endpoint (vLLM, Ollama, a hosted model).

Pages are chosen by their quality score (`quality`), worst first, up to a cap per file and a
cap on requests per batch (`VlmBudget`, shared by the batch's worker processes). Replies are
cached by the page image's hash, the model and the prompt, in the OCR cache. A failing
endpoint never fails the file: the page keeps its text layer (or goes to OCR) with a note.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import BaseModel, ValidationError

from content_core._http_retry import backoff_s, retry_after_s
from content_core.errors import LLMError, LLMOutputError, LLMUnavailableError
from content_core.ocr.claims import read_once
from content_core.ocr.config import VlmConfig
from content_core.ocr.quality import PageQuality
from content_core.ocr.vlm_budget import VlmBudget

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from content_core.cache import ExtractionCache

__all__ = [
    "VLM_REASON_PREFIX",
    "VlmClient",
    "VlmReading",
    "page_prompt",
    "read_hard_pages",
    "vlm_reason",
]

logger = logging.getLogger(__name__)

# An `OcrPage.reason` of a page the model read starts with this: "vlm <model>: <why>".
VLM_REASON_PREFIX = "vlm "
_CACHE_FORMAT = "vlm-page-v1"
_PROMPTS = Path(__file__).with_name("prompts")
# Rendering stops at this many pixels (a poster-sized page): models scale images down anyway.
_MAX_PAGE_PIXELS = 12_000_000
_MAX_BACKOFF_S = 30.0
# A reply that opens and closes a single code fence: the Markdown inside it.
_FENCED = re.compile(r"\A```[a-zA-Z]*\n(.*)\n```\Z", re.DOTALL)


def vlm_reason(model: str, why: str) -> str:
    """The `OcrPage.reason` of a page `model` read because of `why`."""
    return f"{VLM_REASON_PREFIX}{model}: {why}"


@functools.cache
def page_prompt(version: str) -> str:
    """The page prompt of `version` (content_core/ocr/prompts/vlm-page-<version>.md)."""
    return (_PROMPTS / f"vlm-page-{version}.md").read_text(encoding="utf-8").strip()


class _Message(BaseModel):
    content: str


class _Choice(BaseModel):
    message: _Message


class _Reply(BaseModel):
    choices: list[_Choice]


class VlmClient:
    """One chat-completions endpoint reading page images: `markdown(png)` sends one request
    with the fixed prompt and the image as a `data:` URL. Timeouts, transport errors, 429 and
    5xx are retried `config.max_retries` times (exponential backoff with jitter, or the
    server's `Retry-After`)."""

    def __init__(self, config: VlmConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        if not config.enabled:
            raise ValueError("the VLM needs a URL and a model (CONTENT_VLM_URL, CONTENT_VLM_MODEL)")
        assert config.url is not None and config.model is not None  # enabled says so
        self.config = config
        self.model = config.model
        self.url = config.url.rstrip("/") + "/chat/completions"
        key = config.api_key.get_secret_value() if config.api_key is not None else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(timeout=config.timeout_s, headers=headers, transport=transport)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def markdown(self, png: bytes, *, deadline: float | None = None) -> str:
        """The page image `png` as Markdown; no request outlasts `deadline` (a
        `time.monotonic()` value), so the worker's time limit never kills the file for it.

        Raises:
            LLMUnavailableError: timeouts, 429 or 5xx after the retries.
            LLMOutputError: a refused request (4xx) or a reply without text.
        """
        image = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": page_prompt(self.config.prompt_version)},
                        {"type": "image_url", "image_url": {"url": image}},
                    ],
                }
            ],
        }
        response = self._post(body, deadline)
        try:
            reply = _Reply.model_validate_json(response.content)
        except ValidationError as exc:
            raise LLMOutputError(
                f"{self.url}: malformed reply ({exc.error_count()} errors)", stage="vlm"
            ) from exc
        if not reply.choices:
            raise LLMOutputError(f"{self.url}: a reply without choices", stage="vlm")
        text = reply.choices[0].message.content.strip()
        if (fenced := _FENCED.match(text)) is not None:
            text = fenced.group(1).strip()
        return text

    def _post(self, body: dict[str, Any], deadline: float | None) -> httpx.Response:
        attempt = 0
        while True:
            wait: float | None = None
            timeout = self.config.timeout_s
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    raise LLMUnavailableError(f"{self.url}: no time left for the page", stage="vlm")
            try:
                response = self._client.post(self.url, json=body, timeout=timeout)
            except httpx.HTTPError as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code < 400:
                    return response
                if response.status_code != 429 and response.status_code < 500:
                    raise LLMOutputError(
                        f"{self.url} refused the page: HTTP "
                        f"{response.status_code} {response.text[:200]}",
                        stage="vlm",
                    )
                failure = f"HTTP {response.status_code}"
                wait = retry_after_s(response)
            if attempt >= self.config.max_retries:
                raise LLMUnavailableError(
                    f"{self.url}: {failure} after {attempt + 1} attempts", stage="vlm"
                )
            if wait is None:
                wait = backoff_s(attempt, 0.5, _MAX_BACKOFF_S)
            wait = min(wait, _MAX_BACKOFF_S)
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise LLMUnavailableError(
                    f"{self.url}: {failure}; no time left to retry", stage="vlm"
                )
            time.sleep(wait)
            attempt += 1


@dataclass(frozen=True, slots=True)
class VlmReading:
    """What the model read: Markdown per page number, and notes for the row."""

    texts: Mapping[int, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def read_hard_pages(
    pdfium: Any,
    document: Any,
    hard: Mapping[int, PageQuality],
    config: VlmConfig,
    *,
    cache_dir: Path | None,
    budget: VlmBudget | None = None,
    deadline: float | None = None,
    defer_claimed: bool = False,
) -> VlmReading:
    """Send the pages of `hard` (page number -> quality) to the model, worst first, at most
    `config.max_pages_per_file` of them and, for pages not in the cache, while `budget` lasts;
    no page is started after `deadline`. A page that cannot be rendered, or that the endpoint
    fails on, is left out with a note. A page another process is sending is waited for, or
    with `defer_claimed` raises `PageClaimed`.
    """
    order = sorted(hard, key=lambda n: (hard[n].score, n))
    chosen, over = order[: config.max_pages_per_file], order[config.max_pages_per_file :]
    notes: list[str] = []
    if over:
        notes.append(
            f"{_pages(over)} not sent to the VLM: over its cap of "
            f"{config.max_pages_per_file} pages per file (CONTENT_VLM_MAX_PAGES)"
        )
    texts: dict[int, str] = {}
    client = VlmClient(config)
    try:
        for position, number in enumerate(chosen):
            if deadline is not None and time.monotonic() > deadline:
                notes.append(
                    f"{_pages(chosen[position:])} not sent to the VLM: past the time "
                    "budget (3/4 of the file's time limit)"
                )
                break
            try:
                image = _render(document[number - 1], config.dpi)
            except pdfium.PdfiumError as exc:
                notes.append(f"page {number}: cannot be rendered for the VLM ({exc})")
                continue
            try:
                text = _cached_markdown(client, image, cache_dir, budget, deadline, defer_claimed)
            except LLMError as exc:
                notes.append(
                    f"page {number}: the VLM failed ({exc.message}); its text layer "
                    "or OCR reading is kept"
                )
                continue
            if text is None:
                notes.append(
                    f"{_pages(chosen[position:])} not sent to the VLM: the batch's "
                    f"cap of {config.max_pages_per_batch} requests "
                    "(CONTENT_VLM_MAX_BATCH_PAGES) is spent"
                )
                break
            texts[number] = text
    finally:
        client.close()
    return VlmReading(texts=texts, notes=tuple(notes))


def _pages(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"page {numbers[0]}"
    return "pages " + ", ".join(map(str, sorted(numbers)))


def _render(page: Any, dpi: float) -> PilImage:
    try:
        width, height = page.get_size()
        scale = dpi / 72
        if width * height * scale * scale > _MAX_PAGE_PIXELS:
            scale = (_MAX_PAGE_PIXELS / max(width * height, 1.0)) ** 0.5
        image: PilImage = page.render(scale=scale).to_pil()
    finally:
        page.close()
    return image


def _png(image: PilImage) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _cached_markdown(
    client: VlmClient,
    image: PilImage,
    cache_dir: Path | None,
    budget: VlmBudget | None,
    deadline: float | None,
    defer_claimed: bool,
) -> str | None:
    """The page's Markdown, from the cache when it holds it; None when the budget is spent."""
    # Imported here like the OCR layer does: the cache module is not needed without a VLM.
    from content_core.cache import ExtractionCache

    if cache_dir is None:
        return _ask(client, image, budget, deadline)
    cache = ExtractionCache(cache_dir)
    key = _cache_key(client, image)

    def store(text: str | None) -> None:
        if text is not None:  # a page the budget left out is not a reading
            _store(cache, key, client, text)

    return read_once(
        cache,
        key,
        cached=lambda: _cached(cache, key),
        read=lambda: _ask(client, image, budget, deadline),
        store=store,
        deadline=deadline,
        defer_claimed=defer_claimed,
    )


def _ask(
    client: VlmClient, image: PilImage, budget: VlmBudget | None, deadline: float | None
) -> str | None:
    if budget is not None and not budget.take():
        return None
    return client.markdown(_png(image), deadline=deadline)


def _cached(cache: ExtractionCache, key: str) -> str | None:
    if (hit := cache.get(key)) is None:
        return None
    try:
        return str(json.loads(hit.output_json)["markdown"])
    except (ValueError, KeyError, TypeError):
        logger.warning("ignoring unreadable VLM cache entry %s", key)
        return None


def _store(cache: ExtractionCache, key: str, client: VlmClient, text: str) -> None:
    from content_core.cache import CachedOutput

    try:
        cache.put(key, CachedOutput(output_json=json.dumps({"markdown": text}), model=client.model))
    except OSError as exc:  # a full or read-only disk costs a second request later
        logger.warning("cannot cache a VLM reading: %s", exc)


def _cache_key(client: VlmClient, image: PilImage) -> str:
    pixels = hashlib.sha256(image.tobytes())
    pixels.update(f"{image.mode}:{image.size}".encode())
    prompt = hashlib.sha256(page_prompt(client.config.prompt_version).encode()).hexdigest()
    payload = json.dumps(
        [_CACHE_FORMAT, pixels.hexdigest(), client.model, client.config.prompt_version, prompt]
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
