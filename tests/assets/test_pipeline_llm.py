"""The pipeline against a real chat-completions server on 127.0.0.1: bounded concurrency,
retried 429s, one malformed reply = one error row, and a rerun that makes no call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from content_assets.definitions import build_definitions
from content_assets.partitions import INGEST_BATCHES
from content_core.discovery import discover_pending
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from tests.support.chat_server import MALFORMED_MARKER, ChatServer, Fault


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer(latency_s=0.05) as running:
        yield running


def test_llm_agent_through_the_batch_job(
    inbox: Path, tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (inbox / "broken-reply.txt").write_text(f"This chunk makes the model fail {MALFORMED_MARKER}")
    store = ContentStore(tmp_path / "store")
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_AGENT": "openai",
            "CONTENT_AGENT_MODEL": "gpt-4o-mini",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
        }
    )
    source = LocalFolderSource(LocalFolderSourceConfig(folder=inbox))
    found = discover_pending(source, store, set(), settle_s=0.0)
    (batch,) = found.batch_ids
    server.script(Fault(status=429, retry_after="0.2"))
    job = defs.resolve_job_def("ingest_batch_job")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(INGEST_BATCHES, [batch])
        first = job.execute_in_process(instance=instance, partition_key=batch)
        assert first.success
        chunks = store.query("SELECT count(*) AS n FROM chunks").to_pylist()[0]["n"]
        meta = first.asset_materializations_for_node("agentic_extractions")[0].metadata
        assert meta["calls"].value == chunks and meta["cache_hits"].value == 0
        assert meta["prompt_tokens"].value > 0
        assert server.max_in_flight <= 8
        auth = {k.lower(): v for k, v in server.calls[0].headers.items()}["authorization"]
        assert auth == "Bearer test-key"  # the secret reached the agent through dg.EnvVar
        assert any(call.status == 429 for call in server.calls)  # retried, then answered

        errors = store.query(
            "SELECT path, error_type FROM agentic_extractions WHERE error_type IS NOT NULL"
        ).to_pylist()
        assert errors == [{"path": "broken-reply.txt", "error_type": "LLMOutputError"}]
        merged = store.query(
            "SELECT path, model, provenance_json, output_json FROM merged_extractions"
        ).to_pylist()
        documents = store.query(
            "SELECT count(DISTINCT (path, artifact_id)) AS n FROM chunks"
        ).to_pylist()[0]["n"]
        assert len(merged) == documents
        good = [m for m in merged if m["path"] == "plain.txt"]
        assert good and good[0]["model"] == "gpt-4o-mini" and good[0]["provenance_json"]

        server.reset()
        second = job.execute_in_process(instance=instance, partition_key=batch)
        assert second.success
        rerun = second.asset_materializations_for_node("agentic_extractions")[0].metadata
        # The malformed reply is not cached, so exactly that chunk is asked again.
        assert rerun["calls"].value == 1 and len(server.calls) == 1
        assert rerun["cache_hits"].value == chunks - 1
