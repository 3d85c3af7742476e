"""Merge strategies as the seed defines them: concatenation and deep JSON merge keeping
repeats, structural de-duplication as an option, LLM merge (which needs an agent) with its
recorded deterministic fallback, and provenance of every kept value."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError as PydanticValidationError

from content_core.agents import (
    AgentConfig,
    ExtractedFacts,
    ExtractionInput,
    MergeStrategy,
    OpenAICompatibleAgent,
    amerge_results,
    merge_extractions,
    merge_results,
    merge_with_provenance,
    run_extractions,
)
from content_core.errors import ConfigError
from tests.support.chat_server import MALFORMED_MARKER, ChatServer


@pytest.mark.parametrize(
    ("results", "strategy", "expected"),
    [
        (  # the seed's CONCATENATE_LIST example
            [
                {"skills": ["Python", "SQL"], "experience_years": 5},
                {"skills": ["Docker", "K8s"], "experience_years": 3},
            ],
            MergeStrategy.CONCATENATE_LIST,
            {"skills": ["Python", "SQL", "Docker", "K8s"], "experience_years": 5},
        ),
        (  # the seed's MERGE_JSON example
            [
                {"contract": {"parties": ["Alice"], "terms": {"duration": "1 year"}}},
                {"contract": {"parties": ["Bob"], "terms": {"renewal": "auto"}}},
            ],
            MergeStrategy.MERGE_JSON,
            {
                "contract": {
                    "parties": ["Alice", "Bob"],
                    "terms": {"duration": "1 year", "renewal": "auto"},
                }
            },
        ),
        (  # CONCATENATE_LIST updates a nested dict (the seed's shallow merge): later keys win
            [
                {"contract": {"terms": {"duration": "1 year"}, "party": "A"}},
                {"contract": {"terms": {"renewal": "auto"}}},
                {"contract": {"party": "B"}},
            ],
            MergeStrategy.CONCATENATE_LIST,
            {"contract": {"terms": {"renewal": "auto"}, "party": "B"}},
        ),
        (  # CONCATENATE_LIST keeps repeated items: the seed concatenates, nothing is dropped
            [{"skills": ["Python", "SQL"]}, {"skills": ["python", "SQL", "Go"]}],
            MergeStrategy.CONCATENATE_LIST,
            {"skills": ["Python", "SQL", "python", "SQL", "Go"]},
        ),
        (  # first non-null scalar wins; null never overwrites
            [{"title": None, "n": 0}, {"title": "Second", "n": 7}, {"title": "Third"}],
            MergeStrategy.CONCATENATE_LIST,
            {"title": "Second", "n": 0},
        ),
        (  # MERGE_JSON concatenates nested lists as the seed says: repeats kept
            [{"a": {"b": [1]}}, {"a": {"b": [1, 2]}}],
            MergeStrategy.MERGE_JSON,
            {"a": {"b": [1, 1, 2]}},
        ),
        ([], MergeStrategy.CONCATENATE_LIST, {}),  # nothing to merge
    ],
    ids=[
        "seed-concat",
        "seed-deep",
        "concat-update",
        "concat-repeats",
        "first-non-null",
        "deep-repeats",
        "empty",
    ],
)
def test_merge_results(
    results: list[dict[str, object]], strategy: MergeStrategy, expected: dict[str, object]
) -> None:
    assert merge_results(results, strategy=strategy) == expected


@pytest.mark.parametrize(
    "strategy", [MergeStrategy.MERGE_JSON, MergeStrategy.CONCATENATE_LIST], ids=lambda s: s.value
)
def test_dedupe_drops_structural_repeats_when_asked(strategy: MergeStrategy) -> None:
    # Strings compare case- and whitespace-insensitively, objects by canonical JSON.
    results = [
        {"tags": ["Ledger", "audit"], "rows": [{"a": 1, "b": 2}]},
        {"tags": ["ledger ", "AUDIT", "new"], "rows": [{"b": 2, "a": 1}, {"a": 3}]},
    ]
    kept = merge_results(results, strategy, dedupe=True)
    assert kept == {"tags": ["Ledger", "audit", "new"], "rows": [{"a": 1, "b": 2}, {"a": 3}]}
    every = merge_results(results, strategy)
    assert every["tags"] == ["Ledger", "audit", "ledger ", "AUDIT", "new"]
    assert len(every["rows"]) == 3


def test_llm_merge_without_an_agent_is_refused_by_name() -> None:
    results = [{"summary": "First half."}, {"summary": "Second half."}]
    for merge in (
        lambda: merge_results(results, MergeStrategy.LLM_MERGE),
        lambda: merge_results(results, "llm_merge", dedupe=True),
        lambda: merge_with_provenance(results, MergeStrategy.LLM_MERGE),
    ):
        with pytest.raises(ConfigError, match=r"needs an agent.*agent=") as caught:
            merge()
        assert isinstance(caught.value, ValueError) and caught.value.error_type == "ConfigError"
    with pytest.raises(ConfigError, match="agent="):
        asyncio.run(amerge_results(results, MergeStrategy.LLM_MERGE))
    # The pipeline's configuration refuses it where no model could reconcile the results.
    with pytest.raises(PydanticValidationError, match="llm_merge.*kind='openai'"):
        AgentConfig(merge_strategy="llm_merge")


def test_merge_results_calls_the_agent_for_llm_merge_from_sync_code() -> None:
    results = [{"title": "A", "key_terms": ["x"]}, {"title": "B", "key_terms": ["y"]}]
    with ChatServer(responder=_merged_reply) as server:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url)
        merged = merge_results(results, MergeStrategy.LLM_MERGE, agent=agent)
    assert merged["title"] == "Reconciled" and len(server.calls) == 1
    assert '"key_terms": ["x", "y"]' in server.calls[0].user_text


def test_merge_accepts_models_and_strategy_names() -> None:
    a = ExtractedFacts(title="A", emails=["x@y.org"])
    b = ExtractedFacts(title="B", emails=["X@y.org", "z@y.org"])
    merged = merge_results([a, b], strategy="merge_json")
    assert merged["title"] == "A" and merged["emails"] == ["x@y.org", "X@y.org", "z@y.org"]
    merged = merge_results([a, b], strategy="merge_json", dedupe=True)
    assert merged["emails"] == ["x@y.org", "z@y.org"]
    merged = merge_results([a, b], strategy="concatenate_list")
    assert merged["emails"] == ["x@y.org", "X@y.org", "z@y.org"]
    with pytest.raises(ValueError):
        merge_results([a], strategy="vote")
    with pytest.raises(TypeError):
        merge_results([["not", "a", "dict"]])


def test_provenance_names_the_chunks_behind_each_value() -> None:
    outcome = merge_with_provenance(
        [{"title": None, "tags": ["a", "b"]}, {"title": "T", "tags": ["B", "c"]}],
        MergeStrategy.MERGE_JSON,
        sources=["c1", "c2"],
        dedupe=True,
    )
    assert outcome.merged == {"title": "T", "tags": ["a", "b", "c"]}
    assert outcome.provenance == {"title": "c2", "tags": [["c1"], ["c1", "c2"], ["c2"]]}
    concatenated = merge_with_provenance(
        [{"tags": ["a"], "meta": {"k": 1}}, {"tags": ["a"], "meta": {"k": 2}}],
        MergeStrategy.CONCATENATE_LIST,
        sources=["c1", "c2"],
    )
    assert concatenated.merged == {"tags": ["a", "a"], "meta": {"k": 2}}
    assert concatenated.provenance == {"tags": [["c1"], ["c2"]], "meta.k": "c2"}
    with pytest.raises(ValueError):
        merge_with_provenance([{}], sources=["a", "b"])


def _merged_reply(body: dict[str, object], text: str) -> str:
    return json.dumps({"title": "Reconciled", "summary": "whole document", "key_terms": ["one"]})


async def test_llm_merge_uses_the_agent_and_validates() -> None:
    results = [{"title": "A", "key_terms": ["x"]}, {"title": "B", "key_terms": ["y"]}]
    with ChatServer(responder=_merged_reply) as server:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url)
        outcome = await amerge_results(
            results,
            MergeStrategy.LLM_MERGE,
            agent=agent,
            schema=ExtractedFacts,
            sources=["c1", "c2"],
        )
        await agent.aclose()
    assert not outcome.fallback
    assert outcome.merged["title"] == "Reconciled"
    prompt = server.calls[0].user_text
    assert '"key_terms": ["x", "y"]' in prompt  # the mechanical merge is offered as a start
    assert outcome.provenance["key_terms"] == [["c1"], ["c2"]]


async def test_llm_merge_falls_back_when_the_reply_is_bad() -> None:
    results = [{"title": "A", "key_terms": [MALFORMED_MARKER]}, {"title": "B", "key_terms": []}]
    with ChatServer() as server:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url)
        outcome = await amerge_results(results, MergeStrategy.LLM_MERGE, agent=agent)
        await agent.aclose()
    assert outcome.fallback and outcome.merged == {"title": "A", "key_terms": [MALFORMED_MARKER]}
    assert len(server.calls) == 1


def test_merged_extractions_over_http_with_llm_merge(tmp_path: Path) -> None:
    items = [
        ExtractionInput(
            chunk_id=f"k{i}",
            artifact_id="doc",
            path="doc.md",
            content=f"Part {i} about lanterns",
            index=i,
            total_chunks=3,
        )
        for i in range(3)
    ]
    with ChatServer() as server:
        config = AgentConfig(
            kind="openai", model="gpt-4o-mini", base_url=server.base_url, merge_strategy="llm_merge"
        )
        run = run_extractions(items, config, cache_dir=tmp_path)
        server.responder = _merged_reply
        merged = merge_extractions(run.records, config)
    assert len(merged) == 1
    row = merged[0]
    assert (row.strategy, row.chunk_count, row.error_count) == ("llm_merge", 3, 0)
    assert json.loads(row.output_json)["title"] == "Reconciled"
    provenance = json.loads(row.provenance_json)
    assert provenance["chunks"] == ["k0", "k1", "k2"] and provenance["llm_fallback"] is False
    assert sum("Several parts" in c.user_text for c in server.calls) == 1


def test_merge_of_a_document_whose_chunks_all_failed() -> None:
    from content_core.agents import ExtractionRecord

    record = ExtractionRecord(
        chunk_id="k",
        artifact_id="d",
        path="d",
        schema_name="s",
        model="m",
        cache_key="0" * 64,
        output_json=None,
        error_type="LLMOutputError",
        error_message="bad",
        cached=False,
        prompt_tokens=0,
        completion_tokens=0,
    )
    (row,) = merge_extractions([record], AgentConfig())
    assert (row.output_json, row.chunk_count, row.error_count) == ("{}", 1, 1)
    assert json.loads(row.provenance_json)["failed_chunks"] == ["k"]


_values = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "A ", "b", "c"]))
_results = st.lists(
    st.fixed_dictionaries(
        {"tags": st.lists(st.sampled_from(["x", "X", "y", " z", "z"]), max_size=4)},
        optional={"n": _values, "meta": st.fixed_dictionaries({"k": _values})},
    ),
    max_size=5,
)


_DETERMINISTIC = [MergeStrategy.CONCATENATE_LIST, MergeStrategy.MERGE_JSON]


@settings(max_examples=60, deadline=None)
@given(results=_results, strategy=st.sampled_from(_DETERMINISTIC), dedupe=st.booleans())
def test_merge_properties(
    results: list[dict[str, object]], strategy: MergeStrategy, dedupe: bool
) -> None:
    outcome = merge_with_provenance(results, strategy, dedupe=dedupe)
    tags = outcome.merged.get("tags", [])
    normalised = [" ".join(str(t).split()).casefold() for t in tags]
    if not dedupe:
        assert tags == [t for r in results for t in r["tags"]], "every item, in chunk order"
    else:
        assert len(normalised) == len(set(normalised)), "list items are unique after merging"
    if results:
        assert len(outcome.provenance["tags"]) == len(tags)
        # Every kept item names the first result it came from, first.
        for item, sources in zip(tags, outcome.provenance["tags"], strict=True):
            assert item in results[int(sources[0])]["tags"]
    firsts = [r["n"] for r in results if r.get("n") is not None]
    assert outcome.merged.get("n") == (firsts[0] if firsts else None)
    again = merge_with_provenance(results, strategy, dedupe=dedupe)
    assert again.merged == outcome.merged  # deterministic


def test_the_pipeline_merge_drops_repeats_unless_told_to_keep_them(tmp_path: Path) -> None:
    # Neighbouring chunks share their overlap: the same address is found in both.
    items = [
        ExtractionInput(
            chunk_id=f"k{i}",
            artifact_id="doc",
            path="doc.md",
            content=f"Part {i}: write to Desk@Example.org about lot {i}.",
            index=i,
            total_chunks=2,
        )
        for i in range(2)
    ]
    run = run_extractions(items, AgentConfig(), cache_dir=tmp_path)
    assert all(r.output_json is not None for r in run.records)
    (kept,) = merge_extractions(run.records, AgentConfig())
    (every,) = merge_extractions(run.records, AgentConfig(merge_dedupe=False))
    assert json.loads(kept.output_json)["emails"] == ["Desk@Example.org"]
    assert json.loads(every.output_json)["emails"] == ["Desk@Example.org"] * 2
    assert json.loads(kept.provenance_json)["fields"]["emails"] == [["k0", "k1"]]
    assert AgentConfig(merge_dedupe=False).fingerprint() != AgentConfig().fingerprint()
