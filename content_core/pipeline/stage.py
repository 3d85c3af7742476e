"""What a stage is: the table it writes, the row model of that table, the tables it reads, the
part of `PipelineConfig` it takes, how it builds one batch's rows and the checks of its table.

Every built-in stage is one module of `content_core.pipeline.stages` holding `STAGE = Stage(...)`;
another package adds one through the entry point group `content_pipeline.stages` (an entry point
names a `Stage`). `run_batch`, the Dagster assets and their checks, the store's tables and views
and the documentation's column tables all come from the registry of these
(`content_core.pipeline.registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from content_core.agents import AgentConfig, PdfHandling
from content_core.chunking import Chunker, ChunkingConfig
from content_core.compression import CompressionConfig
from content_core.embeddings import Embedder, EmbedderConfig
from content_core.pipeline.checks import CheckRule
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.report import StageReport, current_row_count
from content_core.store.tables import STAGES_ENTRY_POINT_GROUP

if TYPE_CHECKING:
    from content_core.store import ContentStore, TableRow

__all__ = ["ENTRY_POINT_GROUP", "Batch", "PipelineConfig", "Stage"]

# Where other packages add stages (read by the store, which writes and views their tables).
ENTRY_POINT_GROUP = STAGES_ENTRY_POINT_GROUP


class PipelineConfig(BaseModel):
    """Every library knob of the pipeline, one model per concern; a stage names the ones it
    reads (`Stage.uses`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    processing: ProcessingConfig = Field(default_factory=ProcessingConfig)
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    message_parts: PdfHandling = Field(default_factory=PdfHandling)


@dataclass(frozen=True, slots=True)
class Batch:
    """One batch as a stage builds it: the store, the batch, the configuration, and an
    embedder a caller brings instead of `config.embedder`'s (None: the configured one), and a
    chunker a caller brings instead of `config.chunking`'s (`RAG(chunker=...)`)."""

    store: ContentStore
    batch_id: str
    config: PipelineConfig
    embedder: Embedder | None = None
    chunker: Chunker | None = None


@dataclass(frozen=True, slots=True)
class Stage:
    """One pipeline stage and the table it writes.

    Attributes:
        table: the table (and the Dagster asset) the stage writes.
        row: the table's row model (`content_core.store.TableRow`: its Arrow schema, documented
            columns, views); None for a stage that writes no table of rows (the search index).
        build: writes the rows of one batch and reports what it did.
        deps: the tables (stages) it reads; they run first.
        uses: the fields of `PipelineConfig` it reads (the Dagster resources it takes).
        checks: the checks of its table, run on the stored rows after each batch.
        description: what a row is, for the UI and the docs.
        beside: it may run beside the stages after it (a thread), until one that needs it.
        retry: its failures may be transient (a model endpoint): the asset retries them.
        finishes: it marks the batch finished, so it runs last, after every other stage.
    """

    table: str
    row: type[TableRow] | None
    build: Callable[[Batch], StageReport]
    deps: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    checks: tuple[CheckRule, ...] = ()
    description: str = ""
    beside: bool = False
    retry: bool = False
    finishes: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.uses) - set(PipelineConfig.model_fields)
        if unknown:
            raise ValueError(f"stage {self.table} uses unknown config {sorted(unknown)}")
        if self.row is not None and self.row.TABLE != self.table:
            raise ValueError(f"stage {self.table} writes rows of {self.row.TABLE}")

    def write(self, batch: Batch) -> StageReport:
        """`build` the batch, reporting for a table also its rows now current for the batch's
        source (what the asset's metadata shows beside the rows written)."""
        report = self.build(batch)
        if self.row is None:
            return report
        current = current_row_count(batch.store, self.table, report.batch_id)
        return report.model_copy(update={"current_rows": current})
