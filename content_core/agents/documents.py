"""merge_extractions: the per-chunk records of each document merged into one row per schema
(`merged_extractions`), with which chunk gave which item."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from content_core.agents.base import Agent
from content_core.agents.calls import BudgetedAgent, run_sync
from content_core.agents.extraction import AgentConfig, ExtractionRecord, build_agent
from content_core.agents.merge import MergeStrategy, amerge_results
from content_core.agents.openai import OpenAICompatibleAgent
from content_core.agents.schemas import load_schema

__all__ = ["MergedExtraction", "merge_extractions"]


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


def merge_extractions(
    records: Sequence[ExtractionRecord], config: AgentConfig
) -> list[MergedExtraction]:
    """One merged row per (path, artifact, schema), in order of first appearance.

    Successful records merge in their given order with `config.merge_strategy`, list items
    de-duplicated when `config.merge_dedupe`; failed ones are counted in `error_count`.
    LLM_MERGE calls the configured endpoint (AgentConfig allows it with kind "openai" only)
    and keeps the deterministic deep merge when the call fails (`llm_fallback` in provenance).
    """
    return run_sync(_amerge_extractions(records, config))


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
    agent: BudgetedAgent | None = None
    schema: type[BaseModel] | None = None
    if strategy is MergeStrategy.LLM_MERGE:
        schema = load_schema(config.schema_path)
        agent = BudgetedAgent(
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
        dedupe=config.merge_dedupe,
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
