"""The extraction pipeline entry points: AgentConfig, run_extractions and merge_extractions.

These are what the Dagster assets `agentic_extractions` and `merged_extractions` call: plain
synchronous functions over frozen records, with the agent, batch, cache and merge underneath.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
from collections.abc import Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from content_core.agents.base import Agent, usage_of
from content_core.agents.batch import BatchItem, BatchProcessor
from content_core.agents.cache import CachedOutput, ExtractionCache, cache_key
from content_core.agents.merge import MergeStrategy, amerge_results
from content_core.agents.offline import OFFLINE_MODEL, OfflineExtractor
from content_core.agents.openai import OpenAICompatibleAgent
from content_core.agents.schemas import (
    default_prompt,
    load_schema,
    schema_fingerprint,
    schema_name,
)
from content_core.compression.strategies import render_template
from content_core.errors import LLMUnavailableError, StageTimeoutError

__all__ = [
    "AgentConfig",
    "ExtractionInput",
    "ExtractionRecord",
    "ExtractionRun",
    "MergedExtraction",
    "arun_extractions",
    "build_agent",
    "merge_extractions",
    "run_extractions",
]

T = TypeVar("T")
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class AgentConfig(BaseModel):
    """Which agent extracts what: kind, model, endpoint, schema, prompt, limits, merge rule.

    Nothing here reads the environment; the Dagster resource maps its fields onto this.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["offline", "openai"] = "offline"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    schema_path: str | None = None
    # Template text, or the path of a .md/.txt template file; None = the schema's default.
    prompt: str | None = None
    concurrency: int = Field(default=8, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    # The whole of one chunk's extraction (one merge), retries included: past it the chunk is
    # a StageTimeoutError row (the merge falls back to the deterministic one).
    chunk_timeout_s: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    # Neighbouring chunks share their overlap, so an item found there comes back twice: the
    # pipeline merges with MERGE_JSON, which de-duplicates, rather than the seed's
    # CONCATENATE_LIST, which keeps every repeat.
    merge_strategy: str = MergeStrategy.MERGE_JSON.value

    @field_validator("merge_strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        return MergeStrategy(value).value

    @property
    def model_name(self) -> str:
        """The model recorded on rows: the configured one, or the offline extractor's."""
        if self.kind == "offline":
            return OFFLINE_MODEL
        if not self.model:
            raise ValueError("AgentConfig(kind='openai') needs a model")
        return self.model

    def fingerprint(self) -> str:
        """Hash of the settings that change outputs (never the key or the timeouts)."""
        payload = json.dumps(
            [self.kind, self.model_name, self.schema_path, self.prompt, self.merge_strategy],
            separators=(",", ":"),
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class ExtractionInput(BaseModel):
    """One chunk to extract from."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    artifact_id: str
    path: str
    content: str
    index: int
    total_chunks: int
    # Open dict, as chunks carry it: values are interpolated into the prompt template.
    metadata: dict[str, Any] = Field(default_factory=dict)


class ExtractionRecord(BaseModel):
    """One row of `agentic_extractions`: a chunk's validated output or its error."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    artifact_id: str
    path: str
    schema_name: str
    model: str
    cache_key: str
    output_json: str | None
    error_type: str | None
    error_message: str | None
    cached: bool = False  # whether this run read it from the cache (not stored in the table)
    prompt_tokens: int
    completion_tokens: int


class ExtractionRun(BaseModel):
    """All records of one run, in input order, with what the run cost."""

    model_config = ConfigDict(frozen=True)

    records: list[ExtractionRecord]
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int


class MergedExtraction(BaseModel):
    """One row of `merged_extractions`: one document's merged output for one schema."""

    model_config = ConfigDict(frozen=True)

    artifact_id: str
    path: str
    schema_name: str
    model: str
    strategy: str
    output_json: str
    chunk_count: int
    error_count: int
    provenance_json: str


def build_agent(config: AgentConfig, schema: type[BaseModel]) -> Agent:
    """Return the agent `config` describes, producing instances of `schema`."""
    if config.kind == "offline":
        return OfflineExtractor(schema)
    return OpenAICompatibleAgent(
        config.model_name,
        base_url=config.base_url or DEFAULT_BASE_URL,
        api_key=config.api_key,
        output_type=schema,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
        concurrency=config.concurrency,
    )


def _template(prompt: str | None, schema: type[BaseModel]) -> str:
    """The prompt template: the schema's default, a template file, or the text itself.

    A one-line value ending in .md or .txt that names an existing file is read from it (prompts
    live in files); anything else is the template text.
    """
    if prompt is None:
        return default_prompt(schema)
    if "\n" not in prompt and prompt.endswith((".md", ".txt")) and Path(prompt).is_file():
        return Path(prompt).read_text(encoding="utf-8")
    return prompt


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from sync code, even if this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_extractions(
    items: Sequence[ExtractionInput],
    config: AgentConfig,
    *,
    cache_dir: Path,
    agent: Agent | None = None,
    raise_on_outage: bool = True,
) -> ExtractionRun:
    """Extract from every chunk: cached outputs are reused, the rest go through the agent.

    Records come back in input order; a chunk whose call fails (unavailable endpoint, invalid
    reply) is one record with `error_type` set, and is not cached, so the next run retries it.
    `agent` overrides the agent built from `config` (e.g. a pydantic-ai Agent).

    Raises:
        LLMUnavailableError: every call of the run failed as unavailable (the endpoint is down
            or rate-limits everything) and `raise_on_outage` is set, so that the caller's retry
            policy applies instead of a table full of error rows. Outputs already cached stay.
    """
    return _run_sync(
        arun_extractions(
            items, config, cache_dir=cache_dir, agent=agent, raise_on_outage=raise_on_outage
        )
    )


async def arun_extractions(
    items: Sequence[ExtractionInput],
    config: AgentConfig,
    *,
    cache_dir: Path,
    agent: Agent | None = None,
    raise_on_outage: bool = True,
) -> ExtractionRun:
    """The async form of `run_extractions`."""
    schema = load_schema(config.schema_path)
    template = _template(config.prompt, schema)
    sname = schema_name(schema)
    schema_id = f"{sname}@{schema_fingerprint(schema)}"
    schema_json = json.dumps(schema.model_json_schema(), ensure_ascii=False)
    model = config.model_name if agent is None else str(getattr(agent, "model", "custom"))
    cache = ExtractionCache(Path(cache_dir))

    prompts: list[str] = []
    keys: list[str] = []
    for item in items:
        values: dict[str, object] = dict(item.metadata)
        values.update(
            content=item.content,
            index=item.index,
            index_1=item.index + 1,
            total_chunks=item.total_chunks,
            path=item.path,
            schema_json=schema_json,
        )
        prompt = render_template(template, values)
        prompts.append(prompt)
        keys.append(
            cache_key(
                chunk_text=item.content,
                schema=schema_id,
                model=f"{config.kind}:{model}",
                prompt=prompt,
            )
        )

    cached = {i: hit for i, key in enumerate(keys) if (hit := cache.get(key)) is not None}
    todo = [i for i in range(len(items)) if i not in cached]
    outcomes: dict[int, BatchItem] = {}
    fresh_outputs: dict[str, CachedOutput] = {}
    calls = 0
    if todo:
        own_agent = agent is None
        runner = build_agent(config, schema) if agent is None else agent
        # Identical chunks (the same boilerplate in many files) render to one prompt: it is
        # sent once and its answer serves, and is cached for, every key that asked for it.
        items_by_prompt: dict[str, list[int]] = {}
        for i in todo:
            items_by_prompt.setdefault(prompts[i], []).append(i)
        keys_by_prompt = {
            prompt: sorted({keys[i] for i in indices})
            for prompt, indices in items_by_prompt.items()
        }
        writer = _CachingAgent(
            _BudgetedAgent(runner, config.chunk_timeout_s, "agentic_extractions", "chunk"),
            cache,
            keys_by_prompt,
            model,
        )
        try:
            batch = BatchProcessor(concurrency=config.concurrency)
            done: list[BatchItem] = await batch.process(writer, list(items_by_prompt))
        finally:
            if own_agent and isinstance(runner, OpenAICompatibleAgent):
                await runner.aclose()
        outcomes = {
            i: outcome
            for indices, outcome in zip(items_by_prompt.values(), done, strict=True)
            for i in indices
        }
        calls = len(done)
        fresh_outputs = writer.outputs
        _raise_on_outage(done, raise_on_outage)

    records = [
        _record(item, keys[i], sname, model, cached.get(i), outcomes.get(i), fresh_outputs)
        for i, item in enumerate(items)
    ]
    return ExtractionRun(
        records=records,
        calls=calls,
        cache_hits=len(cached),
        prompt_tokens=sum(e.prompt_tokens for e in _distinct(fresh_outputs.values())),
        completion_tokens=sum(e.completion_tokens for e in _distinct(fresh_outputs.values())),
    )


def _distinct(entries: Iterable[CachedOutput]) -> list[CachedOutput]:
    """One entry per call: keys sharing a prompt share the very same entry object."""
    return list({id(entry): entry for entry in entries}.values())


def _raise_on_outage(done: Sequence[BatchItem], enabled: bool) -> None:
    errors = [item.error for item in done if item.error is not None]
    if enabled and done and len(errors) == len(done):
        if all(isinstance(e, LLMUnavailableError) for e in errors):
            first = errors[0]
            assert isinstance(first, LLMUnavailableError)
            raise LLMUnavailableError(
                f"all {len(done)} agent calls failed as unavailable; first: {first.message}",
                stage="extract",
            ) from first


class _BudgetedAgent:
    """Wraps an agent so each call that runs past `timeout_s` raises `StageTimeoutError`.

    The limit applies at the call's awaits: it bounds waiting on an endpoint (retries and
    backoff included). The offline extractor awaits nothing; its time is bounded instead by
    the size of a chunk and its linear-time rules.
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


class _CachingAgent:
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


def _record(
    item: ExtractionInput,
    key: str,
    sname: str,
    model: str,
    hit: CachedOutput | None,
    outcome: BatchItem | None,
    fresh: dict[str, CachedOutput],
) -> ExtractionRecord:
    common = {
        "chunk_id": item.chunk_id,
        "artifact_id": item.artifact_id,
        "path": item.path,
        "schema_name": sname,
        "cache_key": key,
    }
    # A cache hit keeps what producing its output cost when it was made, so a rerun rewrites
    # identical rows; the run's own spend (the ExtractionRun totals) counts fresh calls only.
    entry = hit if hit is not None else fresh.get(key)
    if hit is None and (outcome is None or outcome.error is not None):
        entry = None
    if entry is None:
        error = outcome.error if outcome is not None else None
        return ExtractionRecord(
            **common,
            model=model,
            output_json=None,
            error_type=type(error).__name__ if error is not None else "LLMError",
            error_message=str(error)[:2000] if error is not None else "no result",
            cached=False,
            prompt_tokens=0,
            completion_tokens=0,
        )
    return ExtractionRecord(
        **common,
        model=entry.model,
        output_json=entry.output_json,
        error_type=None,
        error_message=None,
        cached=hit is not None,
        prompt_tokens=entry.prompt_tokens,
        completion_tokens=entry.completion_tokens,
    )


def merge_extractions(
    records: Sequence[ExtractionRecord], config: AgentConfig
) -> list[MergedExtraction]:
    """One merged row per (path, artifact, schema), in order of first appearance.

    Successful records merge in their given order with `config.merge_strategy`; failed ones
    are counted in `error_count`. LLM_MERGE calls the configured endpoint (kind "openai") and
    falls back to the deterministic JSON merge offline or on failure.
    """
    return _run_sync(_amerge_extractions(records, config))


async def _amerge_extractions(
    records: Sequence[ExtractionRecord], config: AgentConfig
) -> list[MergedExtraction]:
    # Rows belong to paths: two copies of one document (or one member reached through two
    # containers) are two documents that each merge their own chunks.
    groups: dict[tuple[str, str, str], list[ExtractionRecord]] = {}
    for record in records:
        key = (record.path, record.artifact_id, record.schema_name)
        groups.setdefault(key, []).append(record)
    strategy = MergeStrategy(config.merge_strategy)
    agent: _BudgetedAgent | None = None
    schema: type[BaseModel] | None = None
    if strategy is MergeStrategy.LLM_MERGE and config.kind == "openai":
        schema = load_schema(config.schema_path)
        agent = _BudgetedAgent(
            build_agent(config, schema), config.chunk_timeout_s, "merged_extractions", "merge"
        )
    try:
        rows = await asyncio.gather(
            *(_merge_group(group, strategy, agent, schema, config) for group in groups.values())
        )
    finally:
        if agent is not None and isinstance(agent.agent, OpenAICompatibleAgent):
            await agent.agent.aclose()
    return list(rows)


async def _merge_group(
    group: list[ExtractionRecord],
    strategy: MergeStrategy,
    agent: Agent | None,
    schema: type[BaseModel] | None,
    config: AgentConfig,
) -> MergedExtraction:
    good = [r for r in group if r.output_json is not None]
    outcome = await amerge_results(
        [json.loads(r.output_json) for r in good if r.output_json is not None],
        strategy,
        agent=agent,
        schema=schema,
        sources=[r.chunk_id for r in good],
    )
    first = group[0]
    provenance = {
        "chunks": [r.chunk_id for r in good],
        "failed_chunks": [r.chunk_id for r in group if r.output_json is None],
        "fields": outcome.provenance,
        "llm_fallback": outcome.fallback,
    }
    return MergedExtraction(
        artifact_id=first.artifact_id,
        path=first.path,
        schema_name=first.schema_name,
        model=good[0].model if good else first.model,
        strategy=strategy.value,
        output_json=json.dumps(outcome.merged, ensure_ascii=False),
        chunk_count=len(group),
        error_count=len(group) - len(good),
        provenance_json=json.dumps(provenance, ensure_ascii=False),
    )
