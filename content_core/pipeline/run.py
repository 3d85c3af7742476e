"""run_batch: every stage of one ingest batch in this process, with no orchestrator, in the
order of the stage registry."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from content_core.chunking import Chunker
from content_core.embeddings import Embedder
from content_core.pipeline.pool import warm_pool
from content_core.pipeline.registry import all_stages
from content_core.pipeline.report import StageReport
from content_core.pipeline.stage import Batch, PipelineConfig
from content_core.store import ContentStore

__all__ = ["run_batch"]


def run_batch(
    store: ContentStore,
    batch_id: str,
    config: PipelineConfig,
    *,
    on_stage: Callable[[StageReport], None] | None = None,
    embedder: Embedder | None = None,
    chunker: Chunker | None = None,
) -> list[StageReport]:
    """Run every stage of `batch_id`, in this process, with no orchestrator (`embedder`, when
    given, embeds the chunks instead of `config.embedder`'s; `chunker`, when given, chunks
    the documents instead of `config.chunking`'s); the reports in the order the stages
    finished.

    The stages run one after the other in the registry's order, except a stage marked
    `beside` (the search index): it runs in a thread (DuckDB works outside the GIL) until the
    first stage that reads it, or the one that finishes the batch, waits for it. The worker
    pool starts in a thread while the first stage runs. No thread forks: the pool's
    processes are forked by its fork server, a process of its own.
    """
    reports: list[StageReport] = []
    batch = Batch(store, batch_id, config, embedder, chunker)

    def report(done: StageReport) -> None:
        reports.append(done)
        if on_stage is not None:
            on_stage(done)

    ordered = all_stages()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="stage") as background:
        # The pool's processes start (a fork server, then its workers) while the first stage
        # runs, with the local embedding model loaded (unless the caller brings an embedder).
        warming = background.submit(
            warm_pool, config.processing, config.embedder if embedder is None else None
        )
        beside: dict[str, Future[StageReport]] = {}
        for position, stage in enumerate(ordered):
            # A stage that runs beside the others is waited for by the first that reads it,
            # or by the stage that finishes the batch.
            for table in [t for t in beside if t in stage.deps or stage.finishes]:
                report(beside.pop(table).result())
            if stage.beside:
                beside[stage.table] = background.submit(stage.build, batch)
                continue
            report(stage.build(batch))
            if position == 0:
                warming.result()
        for future in beside.values():
            report(future.result())
        warming.result()
    return reports
