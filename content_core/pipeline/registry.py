"""The registry of stages: the built-in ones (one module each in `content_core.pipeline.stages`)
and those other packages add through the entry point group `content_pipeline.stages`, in the
order they run. `run_batch`, the Dagster assets and their checks, and the store's tables and
views all read it, so a new stage is one module.
"""

from __future__ import annotations

import functools
import importlib
import logging

from content_core.pipeline.checks import CheckOutcome, CheckRule, check_rules
from content_core.pipeline.stage import Stage
from content_core.store import ContentStore, stage_plugins

__all__ = ["BUILTIN_STAGE_MODULES", "all_stages", "batch_checks", "check_batch", "stage_of"]

_log = logging.getLogger(__name__)

# One line per built-in stage, in the order they run; each module defines `STAGE`.
BUILTIN_STAGE_MODULES: tuple[str, ...] = tuple(
    f"content_core.pipeline.stages.{name}"
    for name in (
        "raw_files",
        "normalised_artifacts",
        "chunks",
        "chunk_embeddings",
        "search_index",
        "document_similarity",
        "message_parts",
        "compressed_contexts",
        "agentic_extractions",
        "merged_extractions",
    )
)


@functools.cache
def all_stages() -> tuple[Stage, ...]:
    """Every stage in the order they run: the built-in ones, then the installed plug-ins'
    (each after the stages it reads), and the stage that finishes a batch last of all."""
    builtin = [importlib.import_module(name).STAGE for name in BUILTIN_STAGE_MODULES]
    return _ordered(builtin, _plugins({stage.table for stage in builtin}))


def stage_of(table: str) -> Stage:
    """The stage that writes `table`.

    Raises:
        KeyError: no stage writes it.
    """
    for stage in all_stages():
        if stage.table == table:
            return stage
    raise KeyError(table)


def batch_checks() -> dict[str, tuple[CheckRule, ...]]:
    """The checks of every table a stage writes, in pipeline order."""
    return {stage.table: stage.checks for stage in all_stages() if stage.checks}


def check_batch(
    store: ContentStore, table: str, batch_id: str, *, max_failure_ratio: float
) -> list[CheckOutcome]:
    """Run every check of `table` (its stage's `checks`) on the stored rows of `batch_id`.

    Raises:
        KeyError: `table` has no checks (no stage writes it).
        FileNotFoundError: no such batch was discovered into this store.
    """
    rules = batch_checks()[table]
    return check_rules(store, table, rules, batch_id, max_failure_ratio=max_failure_ratio)


def _plugins(taken: set[str]) -> list[Stage]:
    """The stages the installed plug-ins declare (`content_core.store.stage_plugins`, which
    loads them once); one that writes a table another stage writes is left out with a
    warning."""
    found: list[Stage] = []
    for entry, stage in stage_plugins():
        if not isinstance(stage, Stage):
            continue
        if stage.table in taken:
            _log.warning("stage plug-in %s: table %s is taken", entry, stage.table)
            continue
        taken.add(stage.table)
        found.append(stage)
    return found


def _ordered(builtin: list[Stage], plugins: list[Stage]) -> tuple[Stage, ...]:
    """Built-in stages in their order, the finishing stage held back; then each plug-in once
    the stages it reads are placed; then the finishing stage. A plug-in that reads a table no
    stage writes is left out with a warning."""
    finishing = [stage for stage in builtin if stage.finishes]
    placed = [stage for stage in builtin if not stage.finishes]
    done = {stage.table for stage in placed}
    waiting = list(plugins)
    while waiting:
        ready = [stage for stage in waiting if set(stage.deps) <= done]
        if not ready:
            for stage in waiting:
                _log.warning("stage plug-in %s reads tables no stage writes: %s", stage.table,
                             sorted(set(stage.deps) - done))
            break
        for stage in ready:
            placed.append(stage)
            done.add(stage.table)
            waiting.remove(stage)
    return (*placed, *finishing)
