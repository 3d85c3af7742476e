"""What `ingest` and `retry` show while batches run: one progress bar per stage on a terminal
(files done, rate, ETA), plain lines otherwise, and a summary table at the end."""

import sys
from dataclasses import dataclass, field
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from content_core.embeddings import EmbedderConfig

# What a person reads when no vectors are made, by what switched them off.
EMBEDDINGS_OFF = "embeddings: off (install the embeddings extra for vector and hybrid search)"
EMBEDDINGS_SET_OFF = (
    "embeddings: off (CONTENT_EMBEDDER=off; unset it, with the embeddings extra installed, "
    "for vector and hybrid search)"
)


def embeddings_line(config: EmbedderConfig, vectors: int | None = None) -> str:
    """`embeddings: ...`: whether this environment embeds chunks, and with what (`vectors`:
    how many the store holds, when known)."""
    kind = config.resolved_kind()
    if kind == "off":
        return EMBEDDINGS_SET_OFF if config.kind == "off" else EMBEDDINGS_OFF
    model = config.model if kind == "openai" and config.model else kind
    held = f", {vectors} vectors in this store" if vectors is not None else ""
    return f"embeddings: {model}{held}"


@dataclass(slots=True)
class StageTotals:
    """What one stage wrote over every batch of this command."""

    rows: int = 0
    failures: int = 0
    files: int = 0


@dataclass(slots=True)
class RunReport:
    """The totals the summary table shows."""

    stages: dict[str, StageTotals] = field(default_factory=dict)
    batches_ok: int = 0
    batches_failed: list[str] = field(default_factory=list)


class _FilesPerSecond(ProgressColumn):
    """The stage's rate in files per second since the bars started (rich's rate column speaks
    in bytes, and needs several updates; a stage advances once per batch)."""

    def render(self, task: Task) -> Text:
        """The rate of `task`, or dashes before its first batch."""
        elapsed = task.elapsed
        if not task.completed or not elapsed:
            return Text("-- files/s")
        return Text(f"{task.completed / elapsed:.1f} files/s")


class IngestView:
    """Progress of the stages over every batch: bars on a terminal, lines elsewhere.

    A stage's bar advances by a batch's file count when that batch's stage materialises, so
    the rate and ETA are in files.
    """

    def __init__(self, stages: list[str], total_files: int, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout
        self.console = Console(file=self._out, highlight=False)
        self.report = RunReport(stages={stage: StageTotals() for stage in stages})
        self._bars = self.console.is_terminal
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        if self._bars:
            self._progress = Progress(
                TextColumn("{task.description:<22}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("files"),
                _FilesPerSecond(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
            )
            for stage in stages:
                self._tasks[stage] = self._progress.add_task(stage, total=total_files)
            self._progress.start()

    def line(self, text: str) -> None:
        """A line of text (above the bars on a terminal)."""
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self._out, flush=True)

    def stage_done(self, stage: str, files: int, rows: int, failures: int) -> None:
        """A stage of one batch has written its table."""
        totals = self.report.stages.setdefault(stage, StageTotals())
        totals.rows += rows
        totals.failures += failures
        totals.files += files
        if self._progress is not None:
            self._progress.advance(self._tasks[stage], files)
        else:
            note = f" ({failures} failed)" if failures else ""
            self.line(f"    {stage:<22} {rows:>7} rows{note}")

    def close(self) -> None:
        """Stop the bars (they stay on screen at their final state)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def summary(self, totals: dict[str, int | str]) -> None:
        """The summary table: per stage, rows and failures of this command and rows now current
        (`totals`, by stage: a count, or a word saying why there is none)."""
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("stage")
        table.add_column("rows written", justify="right")
        table.add_column("failed", justify="right")
        table.add_column("current rows", justify="right")
        for stage, stage_totals in self.report.stages.items():
            table.add_row(
                stage,
                str(stage_totals.rows),
                str(stage_totals.failures),
                str(totals.get(stage, "-")),
            )
        self.console.print()
        self.console.print(table)
