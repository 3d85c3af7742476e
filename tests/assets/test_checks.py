"""What the UI says about each table: its columns, its DuckDB view, its code, and checks that
pass on a good batch and fail, by name, on a batch whose stored tables were damaged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from content_assets.definitions import build_definitions
from content_core.pipeline import batch_checks
from content_core.store import (
    PIPELINE_TABLES,
    ROW_MODELS,
    SCHEMAS,
    ContentStore,
    column_docs,
    row_model,
    rows_from_table,
)
from tests.support.sensors import tick_sensor

STAGES_DIR = Path(__file__).resolve().parents[2] / "content_core" / "pipeline" / "stages"
ASSET_MODULES = {
    "raw_files": "raw_files.py",
    "normalised_artifacts": "normalised_artifacts/__init__.py",
    "chunks": "chunks.py",
    "chunk_embeddings": "chunk_embeddings.py",
    "message_parts": "message_parts.py",
    "compressed_contexts": "compressed_contexts.py",
    "agentic_extractions": "agentic_extractions.py",
    "merged_extractions": "merged_extractions.py",
    "document_similarity": "document_similarity.py",
}


def test_every_asset_says_what_its_table_holds(tmp_path: Path) -> None:
    defs = build_definitions({"CONTENT_STORE_DIR": str(tmp_path)})
    graph = defs.get_repository_def().asset_graph
    for table in PIPELINE_TABLES:
        metadata = graph.get(dg.AssetKey(table)).metadata
        schema = metadata["dagster/column_schema"]
        assert isinstance(schema, dg.TableSchema)
        assert [c.name for c in schema.columns] == SCHEMAS[table].names
        # The types DuckDB itself reports for the table's Arrow schema.
        connection = duckdb.connect(":memory:")
        expected = [str(t) for t in connection.from_arrow(SCHEMAS[table].empty_table()).types]
        connection.close()
        assert [c.type for c in schema.columns] == expected
        nullable = {c.name: c.constraints.nullable for c in schema.columns}
        assert nullable["batch_id"] is False and nullable["path_bytes"] is True
        assert metadata["dagster/table_name"] == f"content.main.{table}"
        (reference,) = metadata["dagster/code_references"].code_references
        assert Path(reference.file_path) == STAGES_DIR / ASSET_MODULES[table]
        checks = {key.name for key in graph.asset_check_keys if key.asset_key.path == [table]}
        assert checks == {rule.name for rule in batch_checks()[table]}
        assert f"{table}_unique_keys" in checks
        assert any(name.startswith(f"{table}_cover_") for name in checks)
    columns = graph.get(dg.AssetKey("normalised_artifacts")).metadata["dagster/column_schema"]
    types = {c.name: c.type for c in columns.columns}
    assert types["derived_from"] == "VARCHAR[]" and types["page_count"] == "INTEGER"


def test_every_column_of_every_table_is_described_in_the_ui(tmp_path: Path) -> None:
    """Each column the UI lists for a table asset carries its row model's description, and
    none is empty: the same text as the docs' table of columns (columns_markdown)."""
    defs = build_definitions({"CONTENT_STORE_DIR": str(tmp_path)})
    graph = defs.get_repository_def().asset_graph
    described = set()
    for key in graph.get_all_asset_keys():
        schema = graph.get(key).metadata.get("dagster/column_schema")
        if schema is None:
            continue
        table = key.to_user_string()
        docs = column_docs(row_model(table))
        assert {c.name: c.description for c in schema.columns} == docs, table
        empty = [name for name, text in docs.items() if not (text or "").strip()]
        assert not empty, f"{table}: columns without a description: {empty}"
        described.add(table)
    assert described >= set(PIPELINE_TABLES)
    for model in ROW_MODELS.values():  # batches has no asset: its columns are described too
        assert all(text.strip() for text in column_docs(model).values()), model.TABLE
    chunks = column_docs(ROW_MODELS["chunks"])
    assert "partition" in chunks["batch_id"] and "index" in chunks["chunk_id"]


def _evaluations(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def _rewrite(store: ContentStore, table: str, batch: str, change: str) -> str:
    """Damage the stored rows of one table of `batch` as a bug would; returns the path hit."""
    rows: list[Any] = rows_from_table(ROW_MODELS[table], store.read_rows(table, batch))
    victim = next(r for r in rows if not getattr(r, "error_type", None))
    if change == "duplicate":
        rows.append(victim)
    elif change == "drop_file":
        rows = [r for r in rows if r.path != victim.path]
    elif change == "fail_all":
        rows = [replace(r, error_type="CompressionError", error_message="damaged") for r in rows]
    store.write_rows(table, batch, rows)
    return str(victim.path)


def test_checks_pass_on_a_good_batch_and_fail_on_a_damaged_one(
    inbox: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    store = ContentStore(tmp_path / "store")
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(inbox),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )
    batch = tick_sensor(defs, instance, None).run_requests[0].partition_key
    job = defs.resolve_job_def("ingest_batch_job")
    good = job.execute_in_process(instance=instance, partition_key=batch)
    assert good.success
    evaluations = _evaluations(good)
    expected = {rule.name for rules in batch_checks().values() for rule in rules}
    assert set(evaluations) == expected
    failed = {name: e.metadata for name, e in evaluations.items() if not e.passed}
    assert not failed
    covered = evaluations["chunks_cover_documents"].metadata
    assert covered["expected"].value > 0 and covered["missing"].value == 0

    dropped_raw = _rewrite(store, "raw_files", batch, "drop_file")
    dropped_chunks = _rewrite(store, "chunks", batch, "drop_file")
    duplicated = _rewrite(store, "agentic_extractions", batch, "duplicate")
    _rewrite(store, "compressed_contexts", batch, "fail_all")
    dropped_merged = _rewrite(store, "merged_extractions", batch, "drop_file")

    # The checks alone, as the UI runs them when only checks are selected: nothing is written.
    every_check = set(job.asset_layer.asset_graph.asset_check_keys)
    checks_only = job.get_subset(asset_selection=set(), asset_check_selection=every_check)
    bad = checks_only.execute_in_process(instance=instance, partition_key=batch)
    assert not bad.get_asset_materialization_events()
    assert bad.success  # failed checks are reported, they do not fail the run
    evaluations = _evaluations(bad)
    failed_names = {name for name, e in evaluations.items() if not e.passed}
    assert failed_names == {
        "raw_files_cover_manifest",
        "chunks_cover_documents",
        "agentic_extractions_unique_keys",
        "compressed_contexts_failure_ratio",
        "merged_extractions_cover_extractions",
    }
    for name, path in [
        ("raw_files_cover_manifest", dropped_raw),
        ("chunks_cover_documents", dropped_chunks),
        ("agentic_extractions_unique_keys", duplicated),
        ("merged_extractions_cover_extractions", dropped_merged),
    ]:
        assert evaluations[name].severity == dg.AssetCheckSeverity.ERROR
        assert path in evaluations[name].metadata["examples"].value
    ratio = evaluations["compressed_contexts_failure_ratio"]
    assert ratio.severity == dg.AssetCheckSeverity.WARN
    assert ratio.metadata["failure_ratio"].value == 1.0
    assert ratio.metadata["threshold"].value == 0.5

    ratio_check = dg.AssetCheckKey(
        dg.AssetKey("compressed_contexts"), "compressed_contexts_failure_ratio"
    )
    lenient = job.get_subset(asset_selection=set(), asset_check_selection={ratio_check})
    lenient_result = lenient.execute_in_process(
        instance=instance,
        partition_key=batch,
        run_config={"ops": {"compressed_contexts": {"config": {"max_failure_ratio": 1.0}}}},
    )
    assert set(_evaluations(lenient_result)) == {"compressed_contexts_failure_ratio"}
    assert _evaluations(lenient_result)["compressed_contexts_failure_ratio"].passed
