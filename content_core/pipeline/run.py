"""run_batch: every stage of one ingest batch in this process, with no orchestrator (what
`content-pipeline ingest` runs), and PipelineConfig, the library knobs of every stage."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, ConfigDict, Field

from content_core.agents import AgentConfig, PdfHandling
from content_core.chunking import ChunkingConfig
from content_core.compression import CompressionConfig
from content_core.embeddings import Embedder, EmbedderConfig
from content_core.pipeline.embeddings import build_chunk_embeddings
from content_core.pipeline.message_parts import build_message_parts
from content_core.pipeline.normalise import build_normalised_artifacts
from content_core.pipeline.pool import warm_pool
from content_core.pipeline.processing import ProcessingConfig
from content_core.pipeline.report import StageReport
from content_core.pipeline.search_index import build_search_index
from content_core.pipeline.stages import (
    build_chunks,
    build_compressed_contexts,
    build_extractions,
    build_merged_extractions,
    build_raw_files,
)
from content_core.store import ContentStore

__all__ = ["PipelineConfig", "run_batch"]


class PipelineConfig(BaseModel):
    """Every library knob of the pipeline, one model per stage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    processing: ProcessingConfig = Field(default_factory=ProcessingConfig)
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    message_parts: PdfHandling = Field(default_factory=PdfHandling)


def run_batch(
    store: ContentStore,
    batch_id: str,
    config: PipelineConfig,
    *,
    on_stage: Callable[[StageReport], None] | None = None,
    embedder: Embedder | None = None,
) -> list[StageReport]:
    """Run every stage of `batch_id`, in this process, with no orchestrator (`embedder`, when
    given, embeds the chunks instead of `config.embedder`'s); the reports in the order the
    stages finished.

    The stages run one after the other as the assets depend on each other, except the search
    index: nothing but `merged_extractions` waits for it, so it is updated in a thread (DuckDB
    works outside the GIL) while message parts, compression and extraction use the pool. The
    worker pool starts in a thread while raw_files runs. No thread forks: the pool's
    processes are forked by its fork server, a process of its own.
    """
    reports: list[StageReport] = []

    def run(step: Callable[[], StageReport]) -> None:
        report = step()
        reports.append(report)
        if on_stage is not None:
            on_stage(report)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pool-warm-up") as background:
        # The pool's processes start (a fork server, then its workers) while raw_files sniffs,
        # with the local embedding model loaded (unless the caller brings its own embedder).
        warming = background.submit(
            warm_pool, config.processing, config.embedder if embedder is None else None
        )
        run(lambda: build_raw_files(store, batch_id))
        warming.result()
    run(lambda: build_normalised_artifacts(store, batch_id, config.processing))
    run(lambda: build_chunks(store, batch_id, config.chunking, pool=config.processing))
    run(lambda: build_chunk_embeddings(
        store, batch_id, config.embedder, embedder, pool=config.processing
    ))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-index") as background:
        search = background.submit(build_search_index, store, batch_id)
        run(lambda: build_message_parts(
            store, batch_id, config.message_parts, pool=config.processing
        ))
        run(lambda: build_compressed_contexts(
            store, batch_id, config.compression, pool=config.processing
        ))
        run(lambda: build_extractions(store, batch_id, config.agent, pool=config.processing))
        run(search.result)
    run(lambda: build_merged_extractions(store, batch_id, config.agent))
    return reports
