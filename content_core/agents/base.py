"""The agent contract: `await agent.run(prompt, **kwargs)` returns a result with `.output`.

Any object with that method plugs in: our offline extractor and OpenAI-compatible client, a
pydantic-ai `Agent`, or a user's own class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

__all__ = ["Agent", "AgentResult", "Usage", "usage_of"]

OutputT = TypeVar("OutputT")


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens billed for one call (0 when the agent does not report them)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class AgentResult(Generic[OutputT]):
    """What our agents return: the validated output, the model name and the token usage."""

    output: OutputT
    model: str
    usage: Usage = Usage()


@runtime_checkable
class Agent(Protocol):
    """Anything with `async run(prompt, **kwargs)` returning an object with `.output`."""

    # Any: the contract is structural so foreign agents (pydantic-ai) fit; kwargs are theirs.
    async def run(self, prompt: str, **kwargs: Any) -> Any:
        """Run the agent on `prompt`."""
        ...


def usage_of(result: Any) -> Usage:  # Any: a result from any agent implementation
    """Read token usage from our `AgentResult` or a pydantic-ai run result; zeros if absent."""
    usage = getattr(result, "usage", None)
    if isinstance(usage, Usage):
        return usage
    # Older pydantic-ai exposes usage() as a method; newer ones a property (still callable,
    # with a deprecation warning), so call only when the counters are not there already.
    if callable(usage) and not hasattr(usage, "input_tokens"):
        usage = usage()
    if usage is None:
        return Usage()
    prompt = _first_int(usage, ("input_tokens", "request_tokens", "prompt_tokens"))
    completion = _first_int(usage, ("output_tokens", "response_tokens", "completion_tokens"))
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


def _first_int(obj: object, names: tuple[str, ...]) -> int:
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, int):
            return value
    return 0
