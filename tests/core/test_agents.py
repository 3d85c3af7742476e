"""Agents against a real chat-completions server on 127.0.0.1: retries, limits, validation,
concurrency, the offline extractor, BatchProcessor, and the extraction pipeline with its cache."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from pathlib import Path

import pytest

from content_core.agents import (
    AgentConfig,
    BatchItem,
    BatchProcessor,
    ExtractedFacts,
    ExtractionInput,
    OfflineExtractor,
    OpenAICompatibleAgent,
    extract_facts,
    load_schema,
    merge_extractions,
    run_extractions,
)
from content_core.chunking import ChunkingConfig, build_chunker
from content_core.chunking.base import Chunk
from content_core.errors import LLMError, LLMOutputError, LLMUnavailableError
from content_core.extract import extract_text
from tests.support.chat_server import INVALID_MARKER, MALFORMED_MARKER, ChatServer, Fault
from tests.support.schemas import Contacts, Invoice, Needy

INVOICE_TEXT = (
    "# Invoice INV-2024-0042\n"
    "Bill to: Harbour Lights Ltd, accounts@harbour-lights.example\n"
    "Issued 2024-03-15, due 15 April 2024. Portal: https://pay.harbour-lights.example/inv/42.\n"
    "## Items\n"
    "Lantern repair: $1,250.00. Glass panes: EUR 300. Total due: $1,574.50.\n"
)


@pytest.fixture
def server() -> ChatServer:
    with ChatServer() as running:
        yield running


def chunks(n: int, *, artifacts: int = 1, marker_at: int | None = None) -> list[ExtractionInput]:
    out = []
    for i in range(n):
        text = f"Section {i} of the ledger mentions ledger entry {i} and supplier s{i}@ex.org."
        if i == marker_at:
            text += f" {MALFORMED_MARKER}"
        artifact = i % artifacts
        out.append(
            ExtractionInput(
                chunk_id=f"chunk-{i}",
                artifact_id=f"doc-{artifact}",
                path=f"inbox/doc-{artifact}.txt",
                content=text,
                index=i // artifacts,
                total_chunks=-(-n // artifacts),
            )
        )
    return out


def http_config(server: ChatServer, **overrides: object) -> AgentConfig:
    settings: dict[str, object] = {
        "kind": "openai",
        "model": "gpt-4o-mini",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "concurrency": 4,
        "max_retries": 3,
        "timeout_s": 60.0,  # a local server, but possibly a loaded machine
    }
    settings.update(overrides)
    return AgentConfig(**settings)


# ---------------------------------------------------------------- OpenAI-compatible agent


async def test_request_is_chat_completions_with_json_schema(server: ChatServer) -> None:
    agent = OpenAICompatibleAgent(
        "gpt-4o-mini", base_url=server.base_url, api_key="sk-test", system_prompt="Be exact."
    )
    result = await agent.run("<document>\nLanterns and harbours\n</document>")
    await agent.aclose()
    call = server.calls[0]
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == "Bearer sk-test"
    assert call.body["model"] == "gpt-4o-mini"
    assert [m["role"] for m in call.body["messages"]] == ["system", "user"]
    schema_format = call.body["response_format"]
    assert schema_format["type"] == "json_schema"
    assert schema_format["json_schema"]["schema"] == ExtractedFacts.model_json_schema()
    assert isinstance(result.output, ExtractedFacts)
    assert result.output.key_terms == ["Lanterns", "harbours"]
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


# A backoff no test could wait for: a retry that ignored Retry-After would run into
# HONOURED_WITHIN instead of finishing (no upper bound on seconds, which load could break).
_HOUR_BACKOFF = {"backoff_s": 3600.0, "max_backoff_s": 3600.0, "max_retry_after_s": 3600.0}
HONOURED_WITHIN_S = 120


async def test_429_with_retry_after_is_retried_after_the_wait(server: ChatServer) -> None:
    server.script(Fault(429, retry_after="0.3"))
    agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url, **_HOUR_BACKOFF)
    run = agent.run("<document>\nretry me\n</document>")
    result = await asyncio.wait_for(run, HONOURED_WITHIN_S)
    await agent.aclose()
    assert [c.status for c in server.calls] == [429, 200]
    # Retry-After (0.3 s) was waited for (a sleep is never shorter, whatever the load).
    assert server.calls[1].started - server.calls[0].finished >= 0.28
    assert isinstance(result.output, ExtractedFacts)


async def test_retry_after_as_http_date_is_understood(server: ChatServer) -> None:
    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    server.script(Fault(503, retry_after=past))
    agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url, **_HOUR_BACKOFF)
    await asyncio.wait_for(agent.run("x"), HONOURED_WITHIN_S)  # a past date: "retry now"
    await agent.aclose()
    assert [c.status for c in server.calls] == [503, 200]


async def test_5xx_retries_are_bounded(server: ChatServer) -> None:
    server.script(*[Fault(502) for _ in range(3)])
    agent = OpenAICompatibleAgent(
        "gpt-4o-mini", base_url=server.base_url, max_retries=2, backoff_s=0.01
    )
    with pytest.raises(LLMUnavailableError) as caught:
        await agent.run("x")
    await agent.aclose()
    assert caught.value.retryable
    assert [c.status for c in server.calls] == [502, 502, 502]


async def test_4xx_is_not_retried(server: ChatServer) -> None:
    server.script(Fault(401, body='{"error": {"message": "bad key"}}'))
    agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url, backoff_s=0.01)
    with pytest.raises(LLMError, match="401") as caught:
        await agent.run("x")
    await agent.aclose()
    assert not caught.value.retryable and len(server.calls) == 1


async def test_timeout_becomes_unavailable() -> None:
    with ChatServer(latency_s=0.5) as slow:
        agent = OpenAICompatibleAgent(
            "gpt-4o-mini", base_url=slow.base_url, timeout_s=0.1, max_retries=1, backoff_s=0.01
        )
        with pytest.raises(LLMUnavailableError, match="timed out"):
            await agent.run("x")
        await agent.aclose()


@pytest.mark.parametrize(
    ("prompt", "fault"),
    [
        (f"<document>\n{MALFORMED_MARKER}\n</document>", None),  # truncated JSON content
        (f"<document>\n{INVALID_MARKER}\n</document>", None),  # JSON of the wrong shape
        ("x", Fault(200, body="<html>gateway page</html>")),  # a 200 that is not JSON at all
        ("x", Fault(200, body='{"choices": []}')),  # JSON without a message
    ],
    ids=["truncated-json", "wrong-shape", "html-body", "no-choices"],
)
async def test_invalid_replies_raise_output_error(
    server: ChatServer, prompt: str, fault: Fault | None
) -> None:
    if fault is not None:
        server.script(fault)
    agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url)
    with pytest.raises(LLMOutputError):
        await agent.run(prompt)
    await agent.aclose()
    assert len(server.calls) == 1, "invalid output is not retried"


async def test_model_limits_refuse_oversized_prompt_before_calling(server: ChatServer) -> None:
    agent = OpenAICompatibleAgent("gpt-4", base_url=server.base_url, max_output_tokens=100_000)
    assert agent.limits == (8_192 - 4_096, 4_096)
    assert agent.max_output_tokens == 4_096  # capped to what the model can write
    with pytest.raises(LLMError, match="accepts"):
        await agent.run("word " * 5_000)
    await agent.aclose()
    assert server.calls == []


async def test_plain_text_output_and_unknown_kwargs(server: ChatServer) -> None:
    agent = OpenAICompatibleAgent("local-llama", base_url=server.base_url, output_type=str)
    result = await agent.run("say hello world")
    assert result.output == "say hello world"
    with pytest.raises(TypeError):
        await agent.run("x", temperature=1)
    await agent.aclose()


async def test_strict_schema_closes_objects(server: ChatServer) -> None:
    agent = OpenAICompatibleAgent("gpt-4o", base_url=server.base_url, strict_schema=True)
    schema = agent.request_body("x")["response_format"]["json_schema"]
    assert schema["strict"] is True
    assert schema["schema"]["additionalProperties"] is False
    assert set(schema["schema"]["required"]) == set(ExtractedFacts.model_fields)


# ---------------------------------------------------------------- offline extractor


def test_offline_facts_are_extracted_deterministically() -> None:
    facts = extract_facts(INVOICE_TEXT)
    assert facts == extract_facts(INVOICE_TEXT)
    assert facts.title == "Invoice INV-2024-0042"
    assert facts.headings == ["Invoice INV-2024-0042", "Items"]
    assert facts.emails == ["accounts@harbour-lights.example"]
    assert facts.urls == ["https://pay.harbour-lights.example/inv/42"]
    assert facts.dates == ["2024-03-15", "15 April 2024"]
    assert facts.amounts == ["$1,250.00", "EUR 300", "$1,574.50"]
    assert "Lantern repair" in facts.summary and "#" not in facts.summary
    assert "invoice" in facts.key_terms


JSON_CORPUS = Path(__file__).parents[1] / "corpus" / "json"


@pytest.mark.parametrize("name", ["simple.json", "markitdown-test.json", "simple.ndjson"])
def test_offline_title_of_a_json_chunk_is_a_line_with_words(name: str) -> None:
    """A JSON document's first line is `[` or `{`: the title is the first line with a letter
    or digit, for the whole text and for each chunk the default chunker makes of it."""
    data = (JSON_CORPUS / name).read_bytes()
    media_type = "application/x-ndjson" if name.endswith(".ndjson") else "application/json"
    text = extract_text(data, media_type, filename=name).text
    chunks = build_chunker(ChunkingConfig(chunk_size=128, chunk_overlap=16)).chunk(text)
    assert text.lstrip()[0] in "[{"  # the case at hand: the line `{` titled documents before
    for content in [text, *(chunk.content for chunk in chunks)]:
        title = extract_facts(content).title
        assert title is not None and any(c.isalnum() for c in title), (name, title)
        lines = [line.strip() for line in content.splitlines()]
        # The first line with a letter or digit: every line above it has neither.
        above = lines[: lines.index(title)]
        assert not any(c.isalnum() for line in above for c in line), (name, title)
    if name == "markitdown-test.json":
        assert extract_facts(text).title == '"key1": "string_value",'


@pytest.mark.parametrize(
    ("text", "title"),
    [
        pytest.param("{\n  [\n\"Quarterly report\": 1\n}", '"Quarterly report": 1', id="brackets"),
        pytest.param("```json\n{\n```\nPlain words", "Plain words", id="code-fence"),
        pytest.param("~~~\n---\n...\nNotes 2024", "Notes 2024", id="tilde-fence-rules"),
        pytest.param("# ***\n# Scope\nbody", "Scope", id="punctuation-heading-skipped"),
        pytest.param("Intro line\n# Heading", "Heading", id="heading-first-as-before"),
        pytest.param("{\n}\n[]\n---", None, id="nothing-to-title"),
    ],
)
def test_offline_title_is_never_only_punctuation(text: str, title: str | None) -> None:
    assert extract_facts(text).title == title


async def test_offline_extractor_reads_only_the_document_block() -> None:
    prompt = (
        "Mention of <document> tags and spam@instructions.example\n"
        "<document>\nhi a@b.org\n</document>"
    )
    result = await OfflineExtractor().run(prompt)
    assert result.output.emails == ["a@b.org"]
    assert result.usage.prompt_tokens == 0


async def test_offline_extractor_fills_other_schemas_or_says_why_not() -> None:
    contacts = await OfflineExtractor(Contacts).run(INVOICE_TEXT)
    assert contacts.output == Contacts(
        emails=["accounts@harbour-lights.example"],
        urls=["https://pay.harbour-lights.example/inv/42"],
    )
    with pytest.raises(LLMOutputError, match="Needy"):
        await OfflineExtractor(Needy).run(INVOICE_TEXT)


@pytest.mark.parametrize(
    "path",
    ["nope", "tests.support.schemas:Missing", "no.such.module:X", "json:dumps"],
    ids=["no-colon", "no-attribute", "no-module", "not-a-model"],
)
def test_bad_schema_paths_are_rejected(path: str) -> None:
    with pytest.raises(ValueError):
        load_schema(path)


# ---------------------------------------------------------------- BatchProcessor


class _Echo:
    """A minimal agent honouring the contract: sleeps inversely to the index, fails on 'boom'."""

    def __init__(self) -> None:
        self.seen_kwargs: list[dict[str, object]] = []

    async def run(self, prompt: str, **kwargs: object) -> object:
        self.seen_kwargs.append(kwargs)
        if "boom" in prompt:
            raise LLMOutputError("boom chunk")
        await asyncio.sleep(0.001 * (10 - len(self.seen_kwargs) % 10))
        return type("R", (), {"output": prompt.upper()})()


async def test_batch_interpolates_keeps_order_and_records_failures() -> None:
    items = [
        Chunk(
            content=f"part {i}" + (" boom" if i == 3 else ""),
            index=i,
            total_chunks=6,
            source_start=0,
            source_end=1,
            metadata={"breadcrumb": f"H{i}"},
        )
        for i in range(6)
    ]
    agent = _Echo()
    results = await BatchProcessor(concurrency=2).process(
        agent, items, "{breadcrumb} [{index}/{total_chunks}] {content} {unknown}", deps="d"
    )
    assert [r.index for r in results] == list(range(6))
    assert results[0].output == "H0 [0/6] PART 0 {UNKNOWN}"
    assert [r.ok for r in results] == [True, True, True, False, True, True]
    assert results[3].error_type == "LLMOutputError" and results[3].output is None
    assert all(kw == {"deps": "d"} for kw in agent.seen_kwargs)


async def test_batch_aggregator_and_plain_strings() -> None:
    def joined(items: list[BatchItem]) -> str:
        return "|".join(str(i.output) for i in items)

    out = await BatchProcessor(concurrency=3, aggregator=joined).process(_Echo(), ["a", "b"])
    assert out == "A|B"
    with pytest.raises(ValueError):
        BatchProcessor(concurrency=0)


# ---------------------------------------------------------------- the pipeline over HTTP


def test_concurrency_never_exceeds_the_limit() -> None:
    with ChatServer(latency_s=0.05, gather=4) as server:
        run = run_extractions(
            chunks(24), http_config(server, concurrency=4), cache_dir=server_cache(server)
        )
    assert run.calls == 24 and all(r.error_type is None for r in run.records)
    assert server.max_in_flight == 4


def server_cache(server: ChatServer) -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="cache-"))


def test_pipeline_retries_records_bad_chunk_and_reruns_from_cache(
    server: ChatServer, tmp_path: Path
) -> None:
    items = chunks(12, artifacts=3, marker_at=7)
    config = http_config(server)
    server.script(Fault(429, retry_after="0.1"))
    first = run_extractions(items, config, cache_dir=tmp_path)

    assert [r.chunk_id for r in first.records] == [i.chunk_id for i in items]
    failed = [r for r in first.records if r.error_type]
    assert [(r.chunk_id, r.error_type) for r in failed] == [("chunk-7", "LLMOutputError")]
    assert first.calls == 12 and first.cache_hits == 0
    assert [c.status for c in server.calls].count(429) == 1
    assert first.prompt_tokens == sum(r.prompt_tokens for r in first.records) > 0
    good = first.records[0]
    assert good.model == "gpt-4o-mini" and not good.cached
    assert ExtractedFacts.model_validate_json(good.output_json or "")

    server.reset()
    second = run_extractions(items, config, cache_dir=tmp_path)
    # Only the chunk whose reply was invalid is asked again: it was never cached.
    assert second.calls == 1 and second.cache_hits == 11 and len(server.calls) == 1
    assert [r.output_json for r in second.records if r.cached] == [
        r.output_json for r in first.records if r.output_json
    ]
    assert second.prompt_tokens == second.records[7].prompt_tokens == 0

    clean = [i for i in items if i.chunk_id != "chunk-7"]
    server.reset()
    third = run_extractions(clean, config, cache_dir=tmp_path)
    assert third.calls == 0 and server.calls == []

    merged = merge_extractions(first.records, config)
    assert [(m.artifact_id, m.chunk_count, m.error_count) for m in merged] == [
        ("doc-0", 4, 0),
        ("doc-1", 4, 1),
        ("doc-2", 4, 0),
    ]
    provenance = json.loads(merged[1].provenance_json)
    assert provenance["failed_chunks"] == ["chunk-7"]
    assert provenance["chunks"] == ["chunk-1", "chunk-4", "chunk-10"]


@pytest.mark.parametrize(
    ("change", "expected_calls"),
    [
        ({}, 0),
        ({"model": "gpt-4o"}, 6),
        ({"schema_path": "tests.support.schemas:Invoice"}, 6),
        ({"prompt": "Facts please.\n<document>\n{content}\n</document>"}, 6),
        ({"concurrency": 2, "timeout_s": 9.0, "api_key": "other"}, 0),
    ],
    ids=["nothing", "model", "schema", "prompt", "transport-only"],
)
def test_cache_invalidation(
    server: ChatServer, tmp_path: Path, change: dict[str, object], expected_calls: int
) -> None:
    items = chunks(6)
    run_extractions(items, http_config(server), cache_dir=tmp_path)
    server.reset()
    rerun = run_extractions(items, http_config(server, **change), cache_dir=tmp_path)
    assert rerun.calls == expected_calls == len(server.calls)


def test_editing_one_chunk_recalls_only_that_chunk(server: ChatServer, tmp_path: Path) -> None:
    items = chunks(5)
    run_extractions(items, http_config(server), cache_dir=tmp_path)
    edited = [*items[:2], items[2].model_copy(update={"content": "rewritten"}), *items[3:]]
    server.reset()
    rerun = run_extractions(edited, http_config(server), cache_dir=tmp_path)
    assert rerun.calls == 1 and [r.cached for r in rerun.records] == [1, 1, 0, 1, 1]


def test_user_schema_by_import_path_with_its_own_prompt(server: ChatServer, tmp_path: Path) -> None:
    config = http_config(server, schema_path="tests.support.schemas:Invoice")
    items = [chunks(1)[0].model_copy(update={"content": INVOICE_TEXT})]
    run = run_extractions(items, config, cache_dir=tmp_path)
    record = run.records[0]
    assert record.schema_name == "tests.support.schemas:Invoice"
    assert Invoice.model_validate_json(record.output_json or "")
    sent = server.calls[0]
    assert sent.user_text.startswith("Read the invoice between the tags")
    assert '"invoice_number"' in sent.user_text  # {schema_json} was filled in
    assert sent.body["response_format"]["json_schema"]["name"] == "Invoice"


def test_offline_pipeline_end_to_end(tmp_path: Path) -> None:
    items = [
        ExtractionInput(
            chunk_id="a0",
            artifact_id="A",
            path="a.md",
            content=INVOICE_TEXT,
            index=0,
            total_chunks=2,
        ),
        ExtractionInput(
            chunk_id="a1",
            artifact_id="A",
            path="a.md",
            content="Questions: accounts@harbour-lights.example or ops@harbour.example.",
            index=1,
            total_chunks=2,
        ),
        ExtractionInput(
            chunk_id="b0",
            artifact_id="B",
            path="b.txt",
            content="Plain note.",
            index=0,
            total_chunks=1,
        ),
    ]
    config = AgentConfig()
    run = run_extractions(items, config, cache_dir=tmp_path)
    assert run.calls == 3 and run.prompt_tokens == 0
    assert {r.model for r in run.records} == {"offline-facts-v2"}
    assert run_extractions(items, config, cache_dir=tmp_path).calls == 0
    merged = merge_extractions(run.records, config)
    assert [(m.artifact_id, m.path, m.chunk_count) for m in merged] == [
        ("A", "a.md", 2),
        ("B", "b.txt", 1),
    ]
    facts = json.loads(merged[0].output_json)
    assert facts["emails"] == ["accounts@harbour-lights.example", "ops@harbour.example"]
    assert facts["title"] == "Invoice INV-2024-0042"
    fields = json.loads(merged[0].provenance_json)["fields"]
    assert fields["emails"] == [["a0", "a1"], ["a1"]] and fields["title"] == "a0"


def test_agent_config_contract() -> None:
    config = AgentConfig(kind="openai", model="m", api_key="secret")
    assert "secret" not in repr(config)
    assert config.fingerprint() == AgentConfig(kind="openai", model="m").fingerprint()
    assert config.fingerprint() != AgentConfig(kind="openai", model="n").fingerprint()
    with pytest.raises(ValueError):
        AgentConfig(merge_strategy="vote")
    with pytest.raises(ValueError):
        AgentConfig(temperature=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        _ = AgentConfig(kind="openai").model_name


def test_pydantic_ai_agent_plugs_in_unchanged(server: ChatServer, tmp_path: Path) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai", reason="optional extra: pydantic-ai")
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(
        "gpt-4o-mini", provider=OpenAIProvider(base_url=server.base_url, api_key="sk-test")
    )
    agent = pydantic_ai.Agent(model, output_type=pydantic_ai.NativeOutput(ExtractedFacts))
    run = run_extractions(chunks(3), AgentConfig(), cache_dir=tmp_path, agent=agent)
    assert all(r.error_type is None for r in run.records), run.records
    assert len(server.completed) == 3 and run.prompt_tokens > 0
    assert server.calls[0].body["response_format"]["type"] == "json_schema"


def test_prompt_template_from_a_file(server: ChatServer, tmp_path: Path) -> None:
    template = tmp_path / "contacts.md"
    template.write_text("Only contacts, please.\n<document>\n{content}\n</document>\n")
    config = http_config(server, prompt=str(template))
    run_extractions(chunks(1), config, cache_dir=tmp_path / "cache")
    assert server.calls[0].user_text.startswith("Only contacts, please.\n<document>\nSection 0")
    # Editing the file changes the prompt, so the cached output no longer applies.
    template.write_text("Contacts only.\n<document>\n{content}\n</document>\n")
    assert run_extractions(chunks(1), config, cache_dir=tmp_path / "cache").calls == 1


def test_public_surface() -> None:
    import content_core
    import content_core.agents as agents
    import content_core.chat as chat

    assert agents.__all__ == sorted(agents.__all__)
    assert all(hasattr(agents, name) for name in agents.__all__)
    for name in (
        "AgentConfig",
        "BatchProcessor",
        "MergeStrategy",
        "OfflineExtractor",
        "OpenAICompatibleAgent",
        "merge_results",
        "run_extractions",
    ):
        assert getattr(content_core, name) is getattr(agents, name)
    # Preparing a caller's messages is the chat package's, on the floor above.
    assert content_core.prepare_messages is chat.prepare_messages


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [("gpt-4o-mini", False), ("o3-mini", True), ("openai/gpt-5", True), ("llama3.1", False)],
)
def test_reasoning_models_get_the_parameters_they_accept(model: str, reasoning: bool) -> None:
    body = OpenAICompatibleAgent(model, max_output_tokens=512).request_body("x")
    assert ("temperature" in body) is not reasoning
    assert body.get("max_completion_tokens" if reasoning else "max_tokens") == 512


def test_an_outage_raises_so_the_caller_can_retry(server: ChatServer, tmp_path: Path) -> None:
    config = http_config(server, max_retries=0)
    server.script(*[Fault(503) for _ in range(3)])
    with pytest.raises(LLMUnavailableError, match="all 3 agent calls"):
        run_extractions(chunks(3), config, cache_dir=tmp_path)
    server.script(*[Fault(503) for _ in range(3)])
    kept = run_extractions(chunks(3), config, cache_dir=tmp_path, raise_on_outage=False)
    assert {r.error_type for r in kept.records} == {"LLMUnavailableError"}
    # One unavailable chunk among good ones is just that chunk's error row.
    server.script(Fault(503))
    partial = run_extractions(chunks(3), config, cache_dir=tmp_path)
    assert sorted(str(r.error_type) for r in partial.records) == [
        "LLMUnavailableError",
        "None",
        "None",
    ]


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"title": "T"}\n```',
        '<think>The user wants JSON.</think>\n{"title": "T"}',
    ],
    ids=["fenced", "think-prefix"],
)
async def test_common_reply_wrappers_are_unwrapped(reply: str) -> None:
    with ChatServer(responder=lambda body, text: reply) as server:
        agent = OpenAICompatibleAgent("qwen3", base_url=server.base_url)
        result = await agent.run("x")
        await agent.aclose()
    assert result.output == ExtractedFacts(title="T")


async def test_the_agent_enforces_its_own_concurrency_limit() -> None:
    # BatchProcessor allows 10 at once; the agent's own limit of 3 still holds at the server.
    with ChatServer(latency_s=0.03, gather=3) as slow:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=slow.base_url, concurrency=3)
        items = await BatchProcessor(concurrency=10).process(agent, [f"c{i}" for i in range(15)])
        await agent.aclose()
    assert all(item.ok for item in items)
    assert slow.max_in_flight == 3
