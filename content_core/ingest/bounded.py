"""Per-artifact time budgets for the stages after normalisation (chunks, compressed
contexts, message parts): each artifact's work runs as one task of the warm worker pool that
normalisation uses, under its stage's `timeout_s`.

A worker process is the only way to stop CPU-bound Python code (a regex, a tokeniser) at a
deadline: a thread cannot be killed and an asyncio timeout only fires at an await. The pool is
the normaliser's (forkserver, memory cap, warm between calls), so a stage adds no start-up
cost, and an artifact past its budget kills only its own worker. It becomes a
`StageTimeoutError` failure for that artifact and stage; the rest of the batch goes on.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable, Sequence
from typing import TypeVar

from content_core.agents.pages import PdfHandling
from content_core.agents.parts import ArtifactPart, artifact_parts
from content_core.chunking import Chunk, ChunkingConfig, build_chunker
from content_core.compression import CompressionConfig, CompressionResult, compress_text
from content_core.compression._text import default_estimator
from content_core.errors import ContentError, StageTimeoutError
from content_core.processing import ProcessingConfig
from content_core.sandbox import TaskFailure, WorkerTimeoutError, shared_pool

__all__ = ["PartsTask", "chunk_documents", "compress_documents", "parts_of_artifacts"]

# One artifact for `parts_of_artifacts`: its bytes (images, PDFs), media type, text and pages.
PartsTask = tuple[bytes | None, str, str | None, tuple[tuple[int, int, int], ...]]

_log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# The pool normalisation uses with its default settings (same key, so the same warm workers).
_POOL = ProcessingConfig()
_PRELOAD = ("content_core.processing",)
_WARM_UP_S = 300.0


def _stage_timeout(stage: str, timeout_s: float) -> TaskFailure:
    """The failure recorded for one artifact of `stage` that ran past `timeout_s`."""
    error = StageTimeoutError.past_budget(stage, timeout_s, unit="artifact", setting="timeout_s")
    return TaskFailure(error.error_type, error.message)


def chunk_documents(
    texts: Sequence[str], config: ChunkingConfig
) -> list[list[Chunk] | TaskFailure]:
    """The chunks of each text by the chunker `config` names, in order; a `TaskFailure` for a
    text that ran past `config.timeout_s` (error type `StageTimeoutError`) or whose worker
    failed otherwise."""
    return _run_bounded("chunks", _chunk_one, [(t, config) for t in texts], config.timeout_s)


def compress_documents(
    texts: Sequence[str], config: CompressionConfig
) -> list[CompressionResult | TaskFailure]:
    """Each text compressed with `config`, in order; a `TaskFailure` for a text that ran past
    `config.timeout_s` (error type `StageTimeoutError`) or whose worker failed otherwise."""
    return _run_bounded(
        "compressed_contexts", _compress_one, [(t, config) for t in texts], config.timeout_s
    )


def parts_of_artifacts(
    tasks: Sequence[PartsTask], handling: PdfHandling
) -> list[list[ArtifactPart] | TaskFailure]:
    """The message parts of each artifact (`artifact_parts`), in order; a `TaskFailure` for one
    that ran past `handling.timeout_s` (`StageTimeoutError`) or could not be made."""
    return _run_bounded(
        "message_parts", _parts_one, [(t, handling) for t in tasks], handling.timeout_s
    )


def _parts_one(task: tuple[PartsTask, PdfHandling]) -> list[ArtifactPart]:
    (data, media_type, text, pages), handling = task
    return artifact_parts(data, media_type=media_type, text=text, pages=pages, handling=handling)


def _warm_up(_: None) -> None:
    build_chunker(ChunkingConfig())
    default_estimator()


def _chunk_one(task: tuple[str, ChunkingConfig]) -> list[Chunk]:
    text, config = task
    return build_chunker(config).chunk(text)


def _compress_one(task: tuple[str, CompressionConfig]) -> CompressionResult:
    text, config = task
    return compress_text(text, config)


def _run_bounded(
    stage: str, function: Callable[[T], R], items: list[T], timeout_s: float
) -> list[R | TaskFailure]:
    if not items:
        return []
    if multiprocessing.current_process().daemon:
        # A daemonic process may not start children: run here, without a time limit.
        _log.warning("%s called from a daemonic process: running without a time budget", stage)
        return [_run_here(function, item) for item in items]
    pool = shared_pool(workers=_POOL.workers, memory_mb=_POOL.memory_mb, preload=_PRELOAD)
    # A fresh worker imports the stage code and loads the tokeniser on its first task; do that
    # under a generous limit first, so the budget measures the artifact, not the start-up.
    pool.map(_warm_up, [None] * min(pool.workers, len(items)), timeout_s=_WARM_UP_S)
    results = pool.map(function, items, timeout_s=timeout_s)
    return [
        _stage_timeout(stage, timeout_s)
        if isinstance(r, TaskFailure) and r.error_type == WorkerTimeoutError.__name__
        else r
        for r in results
    ]


def _run_here(function: Callable[[T], R], item: T) -> R | TaskFailure:
    try:
        return function(item)
    except ContentError as exc:
        return TaskFailure(exc.error_type, exc.message)
