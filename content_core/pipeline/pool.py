"""Per-artifact time budgets for the stages after normalisation (chunks, compressed
contexts, message parts): each artifact's work runs in the warm worker pool that normalisation
uses, under its stage's `timeout_s` (small artifacts share a task and its budget; a shared
task that fails is run again an artifact per task, so a failure is always one artifact's).

A worker process is the only way to stop CPU-bound Python code (a regex, a tokeniser) at a
deadline: a thread cannot be killed and an asyncio timeout only fires at an await. The pool is
the normaliser's (forkserver, memory cap, warm between calls), so a stage adds no start-up
cost, and an artifact past its budget kills only its own worker. It becomes a
`StageTimeoutError` failure for that artifact and stage; the rest of the batch goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from content_core.agents import (
    AgentConfig,
    ExtractionInput,
    ExtractionRecord,
    ExtractionRun,
    run_extractions,
)
from content_core.agents.pages import PdfHandling
from content_core.agents.parts import ArtifactPart, artifact_parts
from content_core.chunking import Chunk, ChunkingConfig, build_chunker
from content_core.compression import CompressionConfig, CompressionResult, compress_text
from content_core.embeddings import (
    Embedder,
    EmbedderConfig,
    EmbeddingRun,
    WordLlamaEmbedder,
    embed_cached,
    make_embedder,
)
from content_core.errors import StageTimeoutError
from content_core.pipeline.config import WORKER_PRELOAD, ProcessingConfig
from content_core.sandbox import (
    TaskFailure,
    WorkerTimeoutError,
    run_task,
    shared_pool,
    workers_can_start,
)
from content_core.tokens import default_estimator

__all__ = [
    "PartsTask",
    "chunk_documents",
    "compress_documents",
    "embed_locally",
    "extract_offline",
    "parts_of_artifacts",
    "warm_pool",
    "warm_worker",
]

# One artifact for `parts_of_artifacts`: its bytes (images, PDFs), media type, text and pages.
PartsTask = tuple[bytes | None, str, str | None, tuple[tuple[int, int, int], ...]]

_log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# The pool normalisation uses by default (same key, so the same warm workers).
_POOL = ProcessingConfig()
_PRELOAD = WORKER_PRELOAD
_WARM_UP_S = 300.0


def _stage_timeout(stage: str, timeout_s: float) -> TaskFailure:
    """The failure recorded for one artifact of `stage` that ran past `timeout_s`."""
    error = StageTimeoutError.past_budget(stage, timeout_s, unit="artifact", setting="timeout_s")
    return TaskFailure(error.error_type, error.message)


def chunk_documents(
    texts: Sequence[str], config: ChunkingConfig, *, pool: ProcessingConfig = _POOL
) -> list[list[Chunk] | TaskFailure]:
    """The chunks of each text by the chunker `config` names, in order; a `TaskFailure` for a
    text that ran past `config.timeout_s` (error type `StageTimeoutError`) or whose worker
    failed otherwise. The work runs in the pool of `pool` (its `workers` and `memory_mb`:
    normalisation's, so the same warm processes)."""
    items = [(t, config) for t in texts]
    sizes = [float(len(t)) for t in texts]
    return _run_bounded("chunks", _chunk_one, items, config.timeout_s, pool, sizes)


def compress_documents(
    texts: Sequence[str], config: CompressionConfig, *, pool: ProcessingConfig = _POOL
) -> list[CompressionResult | TaskFailure]:
    """Each text compressed with `config`, in order; a `TaskFailure` for a text that ran past
    `config.timeout_s` (error type `StageTimeoutError`) or whose worker failed otherwise. The
    work runs in the pool of `pool`, as for `chunk_documents`."""
    items = [(t, config) for t in texts]
    sizes = [float(len(t)) for t in texts]
    return _run_bounded(
        "compressed_contexts", _compress_one, items, config.timeout_s, pool, sizes
    )


def parts_of_artifacts(
    tasks: Sequence[PartsTask], handling: PdfHandling, *, pool: ProcessingConfig = _POOL
) -> list[list[ArtifactPart] | TaskFailure]:
    """The message parts of each artifact (`artifact_parts`), in order; a `TaskFailure` for one
    that ran past `handling.timeout_s` (`StageTimeoutError`) or could not be made. The work
    runs in the pool of `pool`, as for `chunk_documents`."""
    items = [(t, handling) for t in tasks]
    sizes = [float(len(t[0] or b"") + len(t[2] or "")) for t in tasks]
    return _run_bounded("message_parts", _parts_one, items, handling.timeout_s, pool, sizes)


def _parts_one(task: tuple[PartsTask, PdfHandling]) -> list[ArtifactPart]:
    (data, media_type, text, pages), handling = task
    return artifact_parts(data, media_type=media_type, text=text, pages=pages, handling=handling)


def extract_offline(
    items: Sequence[ExtractionInput],
    config: AgentConfig,
    *,
    cache_dir: Path,
    pool: ProcessingConfig = _POOL,
) -> ExtractionRun:
    """`run_extractions` with the offline agent, whose work is CPU-bound Python: each
    document's chunks are one task of the worker pool of `pool` (short documents share one,
    as in `_grouped`), so the run uses every worker.

    Records come back in input order and the figures are summed. A task that fails in a
    worker (a chunk past `config.chunk_timeout_s`, a dead worker) is run again here, as
    every document was before the pool, so no record is lost to the scheduling.
    """
    documents: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        documents.setdefault(item.artifact_id, []).append(index)
    chunks = list(documents.values())
    lengths = [float(sum(len(items[i].content) for i in doc)) for doc in chunks]
    bundles = _grouped(lengths)
    groups = [[i for doc in bundle for i in chunks[doc]] for bundle in bundles]
    tasks = [([items[i] for i in group], config, cache_dir) for group in groups]
    if not workers_can_start() or len(tasks) < 2:
        return run_extractions(items, config, cache_dir=cache_dir)
    workers = shared_pool(workers=pool.workers, memory_mb=pool.memory_mb, preload=_PRELOAD)
    runs = workers.map(
        _extract_group,
        tasks,
        # Per chunk: each chunk's call renews its task's limit (`BudgetedAgent`), so a task
        # of 25,000 chunks has 25,000 budgets, never one budget 25,000 times as long.
        timeout_s=config.chunk_timeout_s,
        # The longest first, so that no worker is left with one at the end.
        sizes=[sum(lengths[doc] for doc in bundle) for bundle in bundles],
    )
    records: list[ExtractionRecord | None] = [None] * len(items)
    totals = [0, 0, 0, 0]
    for task, group, run in zip(tasks, groups, runs, strict=True):
        if isinstance(run, TaskFailure):
            _log.warning("offline extraction of %s failed in a worker (%s): running it here",
                         task[0][0].path, run.error_type)
            run = run_extractions(task[0], config, cache_dir=cache_dir)
        for index, record in zip(group, run.records, strict=True):
            records[index] = record
        for position, value in enumerate(
            (run.calls, run.cache_hits, run.prompt_tokens, run.completion_tokens)
        ):
            totals[position] += value
    return ExtractionRun(
        records=[record for record in records if record is not None],
        calls=totals[0],
        cache_hits=totals[1],
        prompt_tokens=totals[2],
        completion_tokens=totals[3],
    )


# Texts per embedding task: at least enough to amortise a task's round trip, at most a
# quarter of a worker's share, so that the workers finish together.
_EMBED_TASK_MIN = 32
_EMBED_TASK_MAX = 256


def embed_locally(
    texts: Sequence[str],
    config: EmbedderConfig,
    embedder: Embedder,
    *,
    cache_dir: Path,
    pool: ProcessingConfig = _POOL,
) -> EmbeddingRun:
    """`embed_cached` for an embedder that computes on this machine (WordLlama: CPU-bound),
    its distinct texts split into tasks of the worker pool of `pool`, each worker with its own
    copy of the model. Results come back in input order and the figures are summed. A task
    that fails in a worker is run again here with `embedder`, as every text was before the
    pool."""
    # Each distinct text once: copies of a file share their chunks, and the slices of two
    # workers would both miss the cache for the same text.
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < len(texts):
        unique = embed_locally(distinct, config, embedder, cache_dir=cache_dir, pool=pool)
        vectors = dict(zip(distinct, unique.results, strict=True))
        return EmbeddingRun(
            results=[vectors[text] for text in texts],
            calls=unique.calls,
            cache_hits=unique.cache_hits,
        )
    size = min(_EMBED_TASK_MAX, max(_EMBED_TASK_MIN, -(-len(texts) // (4 * pool.workers))))
    slices = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
    if not workers_can_start() or len(slices) < 2:
        return embed_cached(texts, embedder, cache_dir, batch_size=config.batch_size)
    workers = shared_pool(workers=pool.workers, memory_mb=pool.memory_mb, preload=_PRELOAD)
    runs = workers.map(
        _embed_slice,
        [(part, config, cache_dir) for part in slices],
        # Each batch's call within the embedder's own time limit (`embed_cached` reports
        # each batch done, which renews the limit); the first may also load the model.
        timeout_s=_WARM_UP_S + config.timeout_s,
        sizes=[float(sum(len(text) for text in part)) for part in slices],
    )
    total = EmbeddingRun()
    for part, run in zip(slices, runs, strict=True):
        if isinstance(run, TaskFailure):
            _log.warning("embedding %d texts failed in a worker (%s): running them here",
                         len(part), run.error_type)
            run = embed_cached(part, embedder, cache_dir, batch_size=config.batch_size)
        total.results.extend(run.results)
        total.calls += run.calls
        total.cache_hits += run.cache_hits
    return total


# One embedder per configuration in a worker: the model loads once per process.
_EMBEDDERS: dict[str, Embedder] = {}


def _local_embedder(config: EmbedderConfig) -> Embedder | None:
    """This worker's embedder of `config` (None: embeddings are off), made once."""
    key = config.model_dump_json()
    if key not in _EMBEDDERS:
        made = make_embedder(config)
        if made is None:
            return None
        _EMBEDDERS[key] = made
    return _EMBEDDERS[key]


def _embed_slice(task: tuple[list[str], EmbedderConfig, Path]) -> EmbeddingRun:
    texts, config, cache_dir = task
    embedder = _local_embedder(config)
    if embedder is None:
        raise ValueError("embeddings are off: nothing to embed with")
    return embed_cached(texts, embedder, cache_dir, batch_size=config.batch_size)


def _extract_group(task: tuple[list[ExtractionInput], AgentConfig, Path]) -> ExtractionRun:
    items, config, cache_dir = task
    return run_extractions(items, config, cache_dir=cache_dir)


def warm_pool(settings: ProcessingConfig, embedder: EmbedderConfig | None = None) -> None:
    """Start the worker pool of `settings` and load the stage code, the tokeniser and the local
    embedding model of `embedder` (if it names one) in each of its workers, so that a caller
    can do it while this process works on something else."""
    if not workers_can_start() or not settings.isolate:
        return
    pool = shared_pool(workers=settings.workers, memory_mb=settings.memory_mb, preload=_PRELOAD)
    pool.map(warm_worker, [embedder] * pool.workers, timeout_s=_WARM_UP_S)


def warm_worker(embedder: EmbedderConfig | None) -> None:
    """Load the default chunker and estimator (the tokeniser) and the local embedding model of
    `embedder` in this process; each is kept, so a second call costs nothing."""
    build_chunker(ChunkingConfig())
    default_estimator()
    if embedder is not None:
        local = _local_embedder(embedder)
        if isinstance(local, WordLlamaEmbedder):
            local.load()


def _chunk_one(task: tuple[str, ChunkingConfig]) -> list[Chunk]:
    text, config = task
    return build_chunker(config).chunk(text)


def _compress_one(task: tuple[str, CompressionConfig]) -> CompressionResult:
    text, config = task
    return compress_text(text, config)


# Small artifacts share a task, up to this many characters (bytes for images) in all and this
# many artifacts: a task's round trip costs this process about a millisecond, more than the
# work of a short text, and with two workers this process became what they waited for.
_GROUP_SIZE = 20_000.0
_GROUP_ITEMS = 32


def _grouped(sizes: list[float]) -> list[list[int]]:
    """Item indices in tasks, largest first: an item of `_GROUP_SIZE` or more alone, smaller
    ones together up to `_GROUP_SIZE` and `_GROUP_ITEMS`."""
    groups: list[list[int]] = []
    current: list[int] = []
    total = 0.0
    for index in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        if sizes[index] >= _GROUP_SIZE:
            groups.append([index])
            continue
        if current and (total + sizes[index] > _GROUP_SIZE or len(current) >= _GROUP_ITEMS):
            groups.append(current)
            current, total = [], 0.0
        current.append(index)
        total += sizes[index]
    if current:
        groups.append(current)
    return groups


def _run_group(task: tuple[Callable[[T], R], list[T]]) -> list[R | TaskFailure]:
    function, items = task
    return [run_task(function, item) for item in items]


def _run_bounded(
    stage: str,
    function: Callable[[T], R],
    items: list[T],
    timeout_s: float,
    settings: ProcessingConfig,
    sizes: list[float],
) -> list[R | TaskFailure]:
    if not items:
        return []
    if not workers_can_start():
        # A daemonic process or an unguarded script (see `workers_can_start`): run here,
        # without a time limit.
        _log.debug("%s: no worker processes here, running without a time budget", stage)
        return [run_task(function, item) for item in items]
    pool = shared_pool(
        workers=settings.workers, memory_mb=settings.memory_mb, preload=_PRELOAD
    )
    # A worker has the stage code and the tokeniser from its fork server's preload; where it
    # has not (no fork server, a preload step failed), it loads them here under a generous
    # limit first, so the budget measures the artifact, not the start-up.
    pool.map(warm_worker, [None] * min(pool.workers, len(items)), timeout_s=_WARM_UP_S)
    groups = _grouped(sizes)
    # A group of small artifacts has one artifact's budget in all; one that runs past it (or
    # loses its worker) is run again an artifact per task, so a failure is always one
    # artifact's own, under its own budget.
    outcomes = pool.map(
        _run_group,
        [(function, [items[i] for i in group]) for group in groups],
        timeout_s=timeout_s,
        sizes=[sum(sizes[i] for i in group) for group in groups],
    )
    results: list[R | TaskFailure] = [TaskFailure("WorkerCrashedError", "no result")] * len(items)
    alone: list[int] = []
    for group, outcome in zip(groups, outcomes, strict=True):
        if not isinstance(outcome, TaskFailure):
            for index, result in zip(group, outcome, strict=True):
                results[index] = result
        elif len(group) == 1:
            results[group[0]] = outcome
        else:
            alone.extend(group)
    if alone:
        again = pool.map(
            function,
            [items[i] for i in alone],
            timeout_s=timeout_s,
            sizes=[sizes[i] for i in alone],
        )
        for index, result in zip(alone, again, strict=True):
            results[index] = result
    return [
        _stage_timeout(stage, timeout_s)
        if isinstance(r, TaskFailure) and r.error_type == WorkerTimeoutError.__name__
        else r
        for r in results
    ]
