"""The compression strategies: truncation, LLM summarisation, map-reduce, and their protocol."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from content_core.compression._text import pack_spans, truncate_to_tokens
from content_core.errors import LLMOutputError
from content_core.tokens import TokenEstimator, default_estimator


class Agent(Protocol):
    """What a summarising strategy calls: `await agent.run(prompt)` returning an object with
    `.output` (`content_core.agents.Agent`, on a floor above, is the same contract)."""

    # Any: the contract is structural; kwargs are the agent's own.
    async def run(self, prompt: str, **kwargs: Any) -> Any:
        """Run the agent on `prompt`."""
        ...

__all__ = [
    "CompressionStrategy",
    "MapReduceStrategy",
    "SummarizationStrategy",
    "TruncationStrategy",
    "render_template",
]

_PROMPTS = Path(__file__).resolve().parent / "prompts"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _read_prompt(name: str) -> str:
    return (_PROMPTS / f"{name}.md").read_text(encoding="utf-8")


def render_template(template: str, values: dict[str, object]) -> str:
    """Fill `{name}` placeholders whose name is in `values`; leave every other brace as is.

    Unlike `str.format`, literal braces (a JSON example in a prompt) need no escaping.
    """
    return _PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template
    )


@runtime_checkable
class CompressionStrategy(Protocol):
    """Anything with `async compress(text, max_tokens) -> str`."""

    async def compress(self, text: str, max_tokens: int) -> str:
        """Return `text` reduced to at most `max_tokens` tokens."""
        ...


class TruncationStrategy:
    """Keep the beginning of the text and append `suffix`.

    Without an `estimator` the cut is sized by `tokens_per_word` (the seed's heuristic); with
    one, the prefix is checked against it, so an exact estimator makes the cut exact.
    """

    def __init__(
        self,
        *,
        tokens_per_word: float = 1.33,
        suffix: str = "...",
        estimator: TokenEstimator | None = None,
    ) -> None:
        if tokens_per_word <= 0:
            raise ValueError("tokens_per_word must be positive")
        self.tokens_per_word = tokens_per_word
        self.suffix = suffix
        self.estimator = estimator or TokenEstimator(tokens_per_word=tokens_per_word)

    async def compress(self, text: str, max_tokens: int) -> str:
        """Return the longest word-aligned prefix of `text` that fits, plus the suffix."""
        return truncate_to_tokens(text, max_tokens, self.estimator, suffix=self.suffix)


def _output_text(output: Any) -> str:  # Any: whatever the agent's output type is
    """Read summary text from an agent output: a string, or a model with a `summary` field."""
    if isinstance(output, str):
        return output.strip()
    summary = getattr(output, "summary", None)
    if isinstance(summary, str):
        return summary.strip()
    raise LLMOutputError(f"agent output {type(output).__name__} carries no summary text")


class SummarizationStrategy:
    """Ask an agent (`await agent.run(prompt)`) to summarise the whole text in one call.

    `system_instruction` is a prompt template with `{content}` and `{max_tokens}` placeholders;
    by default it is `compression/prompts/summarize.md`.
    """

    def __init__(self, agent: Agent, *, system_instruction: str | None = None) -> None:
        self.agent = agent
        self.system_instruction = system_instruction or _read_prompt("summarize")

    async def compress(self, text: str, max_tokens: int) -> str:
        """Return the agent's summary of `text` (the compressor enforces the budget)."""
        prompt = self._prompt(text, max_tokens)
        result = await self.agent.run(prompt)
        return _output_text(result.output)

    def _prompt(self, text: str, max_tokens: int) -> str:
        if "{content}" in self.system_instruction:
            return render_template(
                self.system_instruction, {"content": text, "max_tokens": max_tokens}
            )
        return f"{render_template(self.system_instruction, {'max_tokens': max_tokens})}\n\n{text}"


class MapReduceStrategy:
    """Summarise chunks of the text concurrently, join them, and reduce again while too long.

    The text is split into pieces of `chunk_size` tokens sharing `chunk_overlap` tokens; each
    piece is summarised (map), the summaries are joined, and while the join is over budget it
    is summarised again with the reduce prompt (at most `max_rounds` rounds).
    """

    def __init__(
        self,
        agent: Agent,
        *,
        chunk_size: int = 4000,
        chunk_overlap: int = 200,
        system_instruction: str | None = None,
        reduce_instruction: str | None = None,
        concurrency: int = 4,
        max_rounds: int = 3,
        estimator: TokenEstimator | None = None,
    ) -> None:
        if chunk_size <= 0 or chunk_overlap < 0 or chunk_overlap >= chunk_size:
            raise ValueError("need chunk_size > chunk_overlap >= 0")
        self.agent = agent
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.map = SummarizationStrategy(agent, system_instruction=system_instruction)
        self.reduce = SummarizationStrategy(
            agent, system_instruction=reduce_instruction or _read_prompt("reduce")
        )
        self.concurrency = concurrency
        self.max_rounds = max_rounds
        self.estimator = estimator or default_estimator()

    async def compress(self, text: str, max_tokens: int) -> str:
        """Return the merged summary of `text`, reduced until it fits or rounds run out."""
        pieces = pack_spans(text, self.chunk_size, self.chunk_overlap, self.estimator)
        share = max(1, max_tokens // max(1, len(pieces)))
        semaphore = asyncio.Semaphore(self.concurrency)

        async def summarise(piece: str) -> str:
            async with semaphore:
                return await self.map.compress(piece, share)

        summaries = await asyncio.gather(*(summarise(p) for p in pieces))
        merged = "\n\n".join(s for s in summaries if s)
        for _ in range(self.max_rounds):
            if self.estimator.fits(merged, max_tokens):
                break
            if self.estimator.fits(merged, self.chunk_size):
                merged = await self.reduce.compress(merged, max_tokens)
            else:
                parts = pack_spans(merged, self.chunk_size, 0, self.estimator)
                share = max(1, max_tokens // len(parts))
                reduced = await asyncio.gather(*(self.reduce.compress(p, share) for p in parts))
                merged = "\n\n".join(r for r in reduced if r)
        return merged
