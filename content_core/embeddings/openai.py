"""OpenAI-compatible `/v1/embeddings` over httpx: OpenAI, Ollama, vLLM, llama.cpp server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from content_core._http_retry import backoff_s, retry_after_s
from content_core.embeddings.base import Vector
from content_core.errors import EmbeddingError, EmbeddingUnavailableError

__all__ = ["OpenAIEmbedder"]


class _Item(BaseModel):
    index: int
    embedding: list[float]


class _Reply(BaseModel):
    data: list[_Item]


class OpenAIEmbedder:
    """An embeddings endpoint speaking OpenAI's wire protocol.

    `base_url` includes the API prefix (`https://api.openai.com/v1`,
    `http://localhost:11434/v1`). With `dimension` set it is sent as `dimensions` (OpenAI's
    text-embedding-3 models shorten their vectors); without it the first reply fixes it.
    Timeouts, transport errors, 429 and 5xx are retried `max_retries` times with exponential
    backoff and jitter, or after the `Retry-After` the server sent.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        dimension: int | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if max_retries < 0 or timeout_s <= 0:
            raise ValueError("need max_retries >= 0, timeout_s > 0")
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self._requested = dimension
        self._dimension = dimension
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)

    @property
    def name(self) -> str:
        """The endpoint's model name."""
        return self.model

    @property
    def dimension(self) -> int:
        """Floats per vector: the configured one, else learnt from a one-text call."""
        if self._dimension is None:
            self.embed(["dimension probe"])
        assert self._dimension is not None  # set by the call above
        return self._dimension

    @property
    def requested_dimension(self) -> int | None:
        """The `dimensions` sent, None for the model's own."""
        return self._requested

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = self._client.post(self.url, json=body)
            except httpx.HTTPError as exc:
                failure: str = f"{type(exc).__name__}: {exc}"
                wait = None
            else:
                if response.status_code < 400:
                    return response
                if response.status_code != 429 and response.status_code < 500:
                    raise EmbeddingError(
                        f"{self.url} refused the request: HTTP {response.status_code} "
                        f"{response.text[:200]}",
                        stage="embed",
                    )
                failure = f"HTTP {response.status_code}"
                wait = retry_after_s(response)
            if attempt >= self.max_retries:
                raise EmbeddingUnavailableError(
                    f"{self.url}: {failure} after {attempt + 1} attempts", stage="embed"
                )
            if wait is None:
                wait = backoff_s(attempt, self.backoff_s, self.max_backoff_s)
            time.sleep(min(wait, self.max_backoff_s))
            attempt += 1

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order.

        Raises:
            EmbeddingUnavailableError: retries exhausted.
            EmbeddingError: a 4xx, a malformed reply, or vectors of the wrong size.
        """
        if not texts:
            return []
        body: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self._requested is not None:
            body["dimensions"] = self._requested
        response = self._post(body)
        try:
            reply = _Reply.model_validate_json(response.content)
        except ValidationError as exc:
            raise EmbeddingError(f"{self.url}: malformed reply: {exc}", stage="embed") from exc
        items = sorted(reply.data, key=lambda item: item.index)
        if [item.index for item in items] != list(range(len(texts))):
            raise EmbeddingError(
                f"{self.url}: {len(items)} vectors for {len(texts)} texts", stage="embed"
            )
        vectors = [item.embedding for item in items]
        sizes = {len(v) for v in vectors}
        if self._dimension is None and len(sizes) == 1:
            self._dimension = sizes.pop()
        if any(len(v) != self._dimension for v in vectors):
            raise EmbeddingError(
                f"{self.url}: vectors of size {sorted({len(v) for v in vectors})}, "
                f"expected {self._dimension}",
                stage="embed",
            )
        return vectors

    async def aembed(self, texts: Sequence[str]) -> list[Vector]:
        """`embed` on a worker thread."""
        return await asyncio.to_thread(self.embed, texts)
