"""Merging per-chunk results into one per document: concatenate, deep JSON merge, or LLM merge.

As the seed defines them: CONCATENATE_LIST concatenates lists and updates a nested dict with
each later result's keys (a shallow `dict.update`); MERGE_JSON merges dicts recursively and
concatenates lists; in both a scalar keeps the first non-null value in chunk order, and list
items are all kept, repeats included. De-duplication is an option (`dedupe=True`): a list item
equal to one already kept (strings compared case- and whitespace-insensitively, objects by
canonical JSON) is dropped and its chunk added to the kept item's provenance. LLM_MERGE asks an
agent to reconcile the results and needs one (`agent=...`): without it the merge raises
`ConfigError` rather than quietly merging another way. Provenance records which chunk gave
each kept value or item.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from content_core.agents.base import Agent
from content_core.compression.strategies import render_template
from content_core.errors import ConfigError, LLMError, StageTimeoutError

__all__ = [
    "MergeOutcome",
    "MergeStrategy",
    "amerge_results",
    "merge_results",
    "merge_with_provenance",
]

logger = logging.getLogger(__name__)

# Any: merged values are arbitrary JSON (the user's schema decides their shape).
JSON = Any


class MergeStrategy(StrEnum):
    """How per-chunk results combine."""

    CONCATENATE_LIST = "concatenate_list"  # lists concatenated, nested dicts updated
    MERGE_JSON = "merge_json"  # lists concatenated, dicts merged recursively
    LLM_MERGE = "llm_merge"  # an agent reconciles the results (an agent is required)


@dataclass
class MergeOutcome:
    """The merged object and, per field path, the source ids that gave each value or item.

    `fallback` is True when LLM_MERGE's agent failed or answered invalid output and the
    deterministic deep merge was kept instead (a recorded outcome, never a silent one).
    """

    merged: dict[str, JSON]
    provenance: dict[str, JSON] = field(default_factory=dict)
    strategy: MergeStrategy = MergeStrategy.CONCATENATE_LIST
    fallback: bool = False


def _identity(value: JSON) -> str:
    if isinstance(value, str):
        return json.dumps(" ".join(value.split()).casefold())
    return json.dumps(_normalise(value), sort_keys=True, ensure_ascii=False)


def _normalise(value: JSON) -> JSON:
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, Mapping):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


class _Merger:
    """Accumulates results one at a time, tracking provenance per path."""

    def __init__(self, deep: bool, dedupe: bool) -> None:
        self.deep = deep
        self.dedupe = dedupe
        self.provenance: dict[str, JSON] = {}
        # path -> identity -> position in the merged list
        self._seen: dict[str, dict[str, int]] = {}

    def add(
        self, target: dict[str, JSON], item: Mapping[str, JSON], source: str, path: str, depth: int
    ) -> None:
        for key, value in item.items():
            here = f"{path}.{key}" if path else key
            self._add_value(target, key, value, source, here, depth)

    def _add_value(
        self, target: dict[str, JSON], key: str, value: JSON, source: str, path: str, depth: int
    ) -> None:
        current = target.get(key)
        if isinstance(value, list):
            if current is None:
                current = target[key] = []
                self.provenance[path] = []
            if isinstance(current, list):
                self._extend(current, value, source, path)
            return
        if isinstance(value, Mapping) and (self.deep or depth == 0):
            if current is None:
                current = target[key] = {}
            if isinstance(current, dict):
                if self.deep:
                    self.add(current, value, source, path, depth + 1)
                else:  # the seed's shallow update: a later result's keys replace earlier ones
                    for inner, item in value.items():
                        current[inner] = item
                        self.provenance[f"{path}.{inner}"] = source
            return
        if current is None and value is not None:
            target[key] = value
            self.provenance[path] = source
        elif key not in target:
            target[key] = value

    def _extend(self, current: list[JSON], values: list[JSON], source: str, path: str) -> None:
        sources = self.provenance.setdefault(path, [])
        if not self.dedupe:  # the seed's strategies keep every item, repeats included
            current.extend(values)
            sources.extend([source] for _ in values)
            return
        seen = self._seen.setdefault(path, {})
        for value in values:
            ident = _identity(value)
            position = seen.get(ident)
            if position is None:
                seen[ident] = len(current)
                current.append(value)
                sources.append([source])
            elif source not in sources[position]:
                sources[position].append(source)


def _as_dict(result: JSON) -> dict[str, JSON]:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, Mapping):
        return dict(result)
    raise TypeError(f"cannot merge a {type(result).__name__}; pass dicts or pydantic models")


def _llm_merge_needs_an_agent() -> ConfigError:
    return ConfigError(
        "MergeStrategy.LLM_MERGE needs an agent to reconcile the results: pass agent=... "
        "(e.g. merge_results(results, MergeStrategy.LLM_MERGE, agent=OpenAICompatibleAgent("
        "model, base_url=...))), or choose MergeStrategy.MERGE_JSON for the deterministic deep "
        "merge",
        stage="merge",
    )


def _deterministic(
    results: Sequence[JSON],
    strategy: MergeStrategy,
    sources: Sequence[str] | None,
    dedupe: bool,
) -> MergeOutcome:
    names = list(sources) if sources is not None else [str(i) for i in range(len(results))]
    if len(names) != len(results):
        raise ValueError("sources must name every result")
    merger = _Merger(deep=strategy is not MergeStrategy.CONCATENATE_LIST, dedupe=dedupe)
    merged: dict[str, JSON] = {}
    for result, name in zip(results, names, strict=True):
        merger.add(merged, _as_dict(result), name, "", 0)
    return MergeOutcome(merged=merged, provenance=merger.provenance, strategy=strategy)


def merge_with_provenance(
    results: Sequence[JSON],
    strategy: MergeStrategy | str = MergeStrategy.CONCATENATE_LIST,
    *,
    sources: Sequence[str] | None = None,
    dedupe: bool = False,
) -> MergeOutcome:
    """Merge `results` (dicts or pydantic models) deterministically, keeping provenance.

    `sources` names each result (chunk ids); by default their positions "0", "1", ....
    `dedupe` drops list items equal to one already kept (see the module rules).

    Raises:
        ConfigError: LLM_MERGE, which needs an agent (`amerge_results(..., agent=...)`).
    """
    strategy = MergeStrategy(strategy)
    if strategy is MergeStrategy.LLM_MERGE:
        raise _llm_merge_needs_an_agent()
    return _deterministic(results, strategy, sources, dedupe)


def merge_results(
    results: Sequence[JSON],
    strategy: MergeStrategy | str = MergeStrategy.CONCATENATE_LIST,
    *,
    dedupe: bool = False,
    agent: Agent | None = None,
    schema: type[BaseModel] | None = None,
) -> dict[str, JSON]:
    """Merge per-chunk results into one dict (the seed's entry point); see the module rules.

    LLM_MERGE calls `agent` (from sync code; in a coroutine use `amerge_results`), and keeps
    the deterministic deep merge if the agent fails.

    Raises:
        ConfigError: LLM_MERGE without `agent`.
    """
    strategy = MergeStrategy(strategy)
    if strategy is not MergeStrategy.LLM_MERGE:
        return _deterministic(results, strategy, None, dedupe).merged
    if agent is None:
        raise _llm_merge_needs_an_agent()
    from content_core.agents.calls import run_sync

    async def once() -> MergeOutcome:
        try:
            return await amerge_results(
                results, strategy, agent=agent, schema=schema, dedupe=dedupe
            )
        finally:
            # A sync call runs its own event loop: close the client the agent bound to it.
            close = getattr(agent, "aclose", None)
            if close is not None:
                await close()

    return run_sync(once()).merged


async def amerge_results(
    results: Sequence[JSON],
    strategy: MergeStrategy | str = MergeStrategy.LLM_MERGE,
    *,
    agent: Agent | None = None,
    schema: type[BaseModel] | None = None,
    prompt_template: str | None = None,
    sources: Sequence[str] | None = None,
    dedupe: bool = False,
) -> MergeOutcome:
    """Merge like `merge_with_provenance`; for LLM_MERGE ask `agent` to reconcile the results.

    The agent gets the deterministic deep merge (MERGE_JSON, with `dedupe`) and the per-chunk
    results and must answer with the final object (validated against `schema` when given).
    A single result needs no reconciling: it is returned as merged. If the agent fails or
    answers invalid output, the deterministic merge is returned with `fallback=True`.
    Provenance is always the deterministic one.

    Raises:
        ConfigError: LLM_MERGE without `agent`.
    """
    strategy = MergeStrategy(strategy)
    if strategy is not MergeStrategy.LLM_MERGE:
        return _deterministic(results, strategy, sources, dedupe)
    if agent is None:
        raise _llm_merge_needs_an_agent()
    base = replace(
        _deterministic(results, MergeStrategy.MERGE_JSON, sources, dedupe), strategy=strategy
    )
    if len(results) < 2:
        return base
    from content_core.agents.schemas import _PROMPTS

    template = prompt_template or (_PROMPTS / "merge.md").read_text(encoding="utf-8")
    prompt = render_template(
        template,
        {
            "results_json": json.dumps([_as_dict(r) for r in results], ensure_ascii=False),
            "merged_json": json.dumps(base.merged, ensure_ascii=False),
        },
    )
    try:
        reply = await agent.run(prompt)
        output = reply.output
        if schema is not None and not isinstance(output, schema):
            output = schema.model_validate(
                json.loads(output) if isinstance(output, str) else output
            )
        merged = _as_dict(json.loads(output) if isinstance(output, str) else output)
    except (LLMError, StageTimeoutError, ValidationError, ValueError, TypeError) as exc:
        logger.warning("LLM merge failed, keeping the deterministic merge: %s", exc)
        return replace(base, fallback=True)
    return MergeOutcome(merged=merged, provenance=base.provenance, strategy=base.strategy)
