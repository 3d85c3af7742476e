"""The extraction pipeline's entry point: AgentConfig and run_extractions, what the Dagster
asset `agentic_extractions` calls (`merged_extractions` calls content_core.agents.documents).
Plain synchronous functions over frozen records, with the agent, batch and cache underneath.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from content_core.agents.base import Agent
from content_core.agents.batch import BatchItem, BatchProcessor
from content_core.agents.calls import BudgetedAgent, CachingAgent, run_sync
from content_core.agents.merge import MergeStrategy
from content_core.agents.offline import OFFLINE_MODEL, OfflineExtractor
from content_core.agents.openai import OpenAICompatibleAgent
from content_core.agents.schemas import (
    default_prompt,
    load_schema,
    schema_fingerprint,
    schema_name,
)
from content_core.cache import CachedOutput, ExtractionCache, cache_key
from content_core.compression.strategies import render_template
from content_core.errors import LLMUnavailableError

__all__ = [
    "AgentConfig",
    "ExtractionInput",
    "ExtractionRecord",
    "ExtractionRun",
    "arun_extractions",
    "build_agent",
    "run_extractions",
]

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
    # The pipeline merges with MERGE_JSON and de-duplicates list items (`merge_dedupe`):
    # neighbouring chunks share their overlap, so an item found there comes back twice.
    merge_strategy: str = MergeStrategy.MERGE_JSON.value
    # Drop list items equal to one already merged (the seed's strategies keep repeats).
    merge_dedupe: bool = True
    # A TOML file adding or correcting model limits rows (content_core.model_limits).
    limits_file: str | None = None

    @field_validator("merge_strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        return MergeStrategy(value).value

    @model_validator(mode="after")
    def _llm_merge_has_an_endpoint(self) -> AgentConfig:
        if self.merge_strategy == MergeStrategy.LLM_MERGE and self.kind != "openai":
            raise ValueError(
                "merge_strategy='llm_merge' needs a model to reconcile the results: set "
                "kind='openai' with a model (and base_url), or choose 'merge_json'"
            )
        return self

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
        settings: list[object] = [
            self.kind, self.model_name, self.schema_path, self.prompt, self.merge_strategy
        ]
        if not self.merge_dedupe:  # only when off: fingerprints made before it stay the same
            settings.append("keep-repeats")
        payload = json.dumps(settings, separators=(",", ":"))
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
        limits_file=config.limits_file,
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
    return run_sync(
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
        writer = CachingAgent(
            BudgetedAgent(runner, config.chunk_timeout_s, "agentic_extractions", "chunk"),
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
