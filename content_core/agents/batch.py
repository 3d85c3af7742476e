"""BatchProcessor: run one agent over many chunks concurrently, keeping order and failures."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from content_core.agents.base import Agent
from content_core.chunking.base import Chunk
from content_core.compression.strategies import render_template

__all__ = ["BatchItem", "BatchProcessor"]


@dataclass(frozen=True, slots=True)
class BatchItem:
    """The outcome for one chunk: the agent's result, or the error it raised."""

    index: int
    prompt: str
    result: Any = None  # Any: the agent's own result type
    error: BaseException | None = None
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the agent returned a result."""
        return self.error is None

    @property
    def output(self) -> Any:  # Any: the agent's output type
        """The result's `.output`, or None for a failed chunk."""
        return None if self.result is None else self.result.output

    @property
    def error_type(self) -> str | None:
        """Class name of the error, as stored in error rows."""
        return None if self.error is None else type(self.error).__name__


def _values(chunk: Chunk | str, position: int, total: int) -> dict[str, object]:
    if isinstance(chunk, str):
        return {"content": chunk, "index": position, "index_1": position + 1, "total_chunks": total}
    values: dict[str, object] = dict(chunk.metadata)
    values.update(
        content=chunk.content,
        index=chunk.index,
        index_1=chunk.index + 1,
        total_chunks=chunk.total_chunks,
    )
    return values


class BatchProcessor:
    """Send chunks through `agent.run` with at most `concurrency` calls in flight.

    `process` renders `prompt_template` per chunk (`{content}`, `{index}`, `{total_chunks}`
    and any chunk-metadata key), forwards extra keyword arguments to `agent.run`, and returns
    one `BatchItem` per chunk in input order. A chunk whose call raises becomes a failed item;
    the others go on. With an `aggregator`, its return value over the items is returned instead.
    """

    def __init__(
        self,
        *,
        concurrency: int = 4,
        aggregator: Callable[[list[BatchItem]], Any] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.concurrency = concurrency
        self.aggregator = aggregator

    async def process(
        self,
        agent: Agent,
        chunks: Sequence[Chunk | str],
        prompt_template: str = "{content}",
        **kwargs: Any,
    ) -> Any:
        """Run `agent` over `chunks`; return the items in order (or the aggregator's value)."""
        # Any: kwargs are the agent's own options; the aggregator's value is the caller's.
        semaphore = asyncio.Semaphore(self.concurrency)
        total = len(chunks)

        async def one(position: int, chunk: Chunk | str) -> BatchItem:
            prompt = render_template(prompt_template, _values(chunk, position, total))
            index = position if isinstance(chunk, str) else chunk.index
            async with semaphore:
                started = time.perf_counter()
                try:
                    result = await agent.run(prompt, **kwargs)
                # Foreign agents (pydantic-ai, user classes) raise their own exception types;
                # this per-chunk boundary records any of them so the other chunks go on.
                except Exception as exc:  # noqa: BLE001
                    return BatchItem(index, prompt, error=exc, elapsed_s=_since(started))
                return BatchItem(index, prompt, result=result, elapsed_s=_since(started))

        items = list(await asyncio.gather(*(one(i, c) for i, c in enumerate(chunks))))
        return self.aggregator(items) if self.aggregator is not None else items


def _since(started: float) -> float:
    return time.perf_counter() - started
