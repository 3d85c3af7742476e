"""CompressionConfig and compress_text: the synchronous entry point used by the pipeline."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from content_core.chunking import TokenDoc
from content_core.compression._text import truncate_to_tokens
from content_core.compression.extractive import extractive_compress
from content_core.encodings import CL100K_BASE, resolve_target_encoding
from content_core.tokens import TokenEstimator, default_estimator

__all__ = ["CompressionConfig", "CompressionResult", "compress_text"]


class CompressionConfig(BaseModel):
    """How `compressed_contexts` reduces each document: an offline strategy and a budget."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategy: Literal["extractive", "truncation"] = "extractive"
    max_tokens: int = Field(default=1024, ge=1)
    encoding_name: str = Field(
        default=CL100K_BASE,
        description="The encoding the budget counts in (cl100k_base, o200k_base); set by "
        "`model` when that names an OpenAI model.",
    )
    model: str | None = Field(
        default=None,
        description="The model the context is meant for: an OpenAI model sets `encoding_name` "
        "(gpt-4o, gpt-4.1, gpt-5, o-series: o200k_base). Not part of the fingerprint.",
    )
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Most seconds one artifact may take to compress; past it the artifact is a "
        "StageTimeoutError row. Not part of the fingerprint: it never changes a result.",
    )

    @model_validator(mode="before")
    @classmethod
    def _encoding_from_model(cls, data: object) -> object:
        return resolve_target_encoding(data)

    def fingerprint(self) -> str:
        """A short stable hash of the settings but the time budget, stored with each row."""
        exclude = {"timeout_s", "model"}
        if self.encoding_name == CL100K_BASE:
            # Configs from before the encoding was a setting keep their fingerprints.
            exclude.add("encoding_name")
        payload = self.model_dump_json(exclude=exclude)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class CompressionResult(BaseModel):
    """One compressed text with the strategy used and exact counts before and after, in the
    configured encoding."""

    model_config = ConfigDict(frozen=True)

    text: str
    strategy: str
    tokens_before: int
    tokens_after: int


def compress_text(text: str, config: CompressionConfig) -> CompressionResult:
    """Compress `text` to `config.max_tokens` tokens of `config.encoding_name`, offline and
    synchronously.

    Text that already fits is returned unchanged with strategy "none". The extractive strategy
    keeps the best-scoring sentences; truncation keeps the beginning. Either way the result
    fits the budget by exact count.
    """
    estimator = _estimator(config.encoding_name)
    span_tokens: Callable[[int, int], int] | None = None
    if estimator.is_exact and estimator.encoding_name is not None:
        # One tokenisation answers the total and every sentence's count (see TokenDoc).
        doc = TokenDoc(text, estimator.encoding, estimator.encoding_name)
        before, span_tokens = doc.n_tokens, doc.size
    else:
        before = estimator.estimate(text)
    if before <= config.max_tokens:
        return CompressionResult(
            text=text, strategy="none", tokens_before=before, tokens_after=before
        )
    if config.strategy == "extractive":
        reduced = extractive_compress(
            text, config.max_tokens, estimator, span_tokens=span_tokens
        )
    else:
        reduced = truncate_to_tokens(text, config.max_tokens, estimator, suffix="...")
    return CompressionResult(
        text=reduced,
        strategy=config.strategy,
        tokens_before=before,
        tokens_after=estimator.estimate(reduced),
    )


@functools.lru_cache(maxsize=8)
def _estimator(encoding_name: str) -> TokenEstimator:
    """The exact counter of `encoding_name`, loaded once per process."""
    if encoding_name == CL100K_BASE:
        return default_estimator()
    return TokenEstimator(encoding_name=encoding_name)
