"""How the pipeline calls an agent: each call under a time budget, each validated output cached
the moment it arrives, and a coroutine run to completion from synchronous code."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

from pydantic import BaseModel

from content_core.agents.base import Agent, usage_of
from content_core.cache import CachedOutput, ExtractionCache
from content_core.errors import StageTimeoutError
from content_core.sandbox import report_progress

__all__ = ["BudgetedAgent", "CachingAgent", "run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from sync code, even if this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class BudgetedAgent:
    """Wraps an agent so each call that runs past `timeout_s` raises `StageTimeoutError`.

    The limit applies at the call's awaits: it bounds waiting on an endpoint (retries and
    backoff included). The offline extractor awaits nothing; its time is bounded instead by
    the size of a chunk and its linear-time rules. In a pool's worker, each call that ends
    (done or failed) renews the task's own limit (`report_progress`), so a task of many
    chunks has the budget of one chunk per chunk.
    """

    def __init__(self, agent: Agent, timeout_s: float, stage: str, unit: str) -> None:
        self.agent = agent
        self.timeout_s = timeout_s
        self.stage = stage
        self.unit = unit

    async def run(self, prompt: str, **kwargs: Any) -> Any:
        """The wrapped agent's result, or `StageTimeoutError` past the budget."""
        # Any: the wrapped agent's result; kwargs are passed through unchanged.
        try:
            return await asyncio.wait_for(self.agent.run(prompt, **kwargs), self.timeout_s)
        except TimeoutError as exc:
            raise StageTimeoutError.past_budget(
                self.stage, self.timeout_s, unit=self.unit, setting="chunk_timeout_s"
            ) from exc
        finally:
            report_progress()


class CachingAgent:
    """Wraps the agent so each validated output is cached the moment it arrives.

    Writing while other calls are still in flight keeps the cache's file I/O off the run's
    critical path, and a run that is interrupted keeps everything it already paid for.
    """

    def __init__(
        self, agent: Agent, cache: ExtractionCache, keys: dict[str, list[str]], model: str
    ) -> None:
        self.agent = agent
        self.cache = cache
        self.keys = keys
        self.model = model
        self.outputs: dict[str, CachedOutput] = {}  # cache key -> what this run produced

    async def run(self, prompt: str, **kwargs: Any) -> Any:
        """Run the wrapped agent, then serialise and cache its output."""
        # Any: the wrapped agent's result; kwargs are passed through unchanged.
        result = await self.agent.run(prompt, **kwargs)
        output = result.output
        output_json = (
            output.model_dump_json() if isinstance(output, BaseModel) else json.dumps(output)
        )
        usage = usage_of(result)
        entry = CachedOutput(
            output_json=output_json,
            model=str(getattr(result, "model", None) or self.model),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
        # Only outputs that came back validated (the agent raises otherwise) reach this line.
        # Chunks rendering to the same prompt share the answer (their keys differ only if the
        # template leaves the chunk text out).
        for key in self.keys[prompt]:
            self.cache.put(key, entry)
            self.outputs[key] = entry
        return result
