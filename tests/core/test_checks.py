"""content_core.pipeline.check_batch on stored rows, without Dagster: each kind of rule passes on
consistent tables and fails, naming the paths, when a row is missing, doubled or failed."""

from __future__ import annotations

from typing import Any

import pytest

from content_core.pipeline import batch_checks, check_batch
from content_core.store import (
    BATCHES,
    NORMALISED_ARTIFACTS,
    RAW_FILES,
    ROW_MODELS,
    SCHEMAS,
    ContentStore,
    TableRow,
)

BATCH = "inbox-000001-test"
PATHS = ("a.txt", "b.txt", "c.txt", "gone.txt")


def _row(table: str, path: str, **values: Any) -> TableRow:
    """A row of `table`'s model for `path` in BATCH; columns not given are null."""
    given = {"batch_id": BATCH, "source_id": "inbox", "path": path, "batch_seq": 1, **values}
    return ROW_MODELS[table](**{name: given.get(name) for name in SCHEMAS[table].names})


def _change(path: str) -> str:
    return "deleted" if path == "gone.txt" else "added"


def _write(store: ContentStore, *, raw: list[str], artifacts: list[TableRow]) -> None:
    manifest = [_row(BATCHES, p, change=_change(p)) for p in PATHS]
    store.write_manifest(BATCH, manifest)
    store.write_rows(RAW_FILES, BATCH, [_row(RAW_FILES, p, change=_change(p)) for p in raw])
    store.write_rows(NORMALISED_ARTIFACTS, BATCH, artifacts)


def _artifact(path: str, *, error: str | None = None) -> TableRow:
    return _row(
        NORMALISED_ARTIFACTS, path, artifact_id=f"id-{path}", text="words", error_type=error
    )


def _outcomes(store: ContentStore, table: str, ratio: float = 0.5) -> dict[str, Any]:
    return {o.name: o for o in check_batch(store, table, BATCH, max_failure_ratio=ratio)}


def test_every_pipeline_table_has_unique_keys_and_coverage() -> None:
    for table, rules in batch_checks().items():
        kinds = [rule.kind for rule in rules]
        assert kinds[:2] == ["unique_keys", "coverage"], table
        assert all(rule.name.startswith(f"{table}_") for rule in rules)


def test_consistent_tables_pass(store: ContentStore) -> None:
    _write(store, raw=list(PATHS), artifacts=[_artifact(p) for p in PATHS[:3]])
    for table in (RAW_FILES, NORMALISED_ARTIFACTS):
        outcomes = _outcomes(store, table)
        assert all(o.passed for o in outcomes.values()), outcomes
    covered = _outcomes(store, NORMALISED_ARTIFACTS)["normalised_artifacts_cover_raw_files"]
    # the deleted file needs no artifact
    assert covered.figures == {"expected": 3, "missing": 0}


@pytest.mark.parametrize(
    ("raw", "artifacts", "failed", "examples"),
    [
        pytest.param(
            ["a.txt", "b.txt", "gone.txt"],
            [_artifact(p) for p in ("a.txt", "b.txt")],
            "raw_files_cover_manifest",
            ("c.txt",),
            id="a manifest entry without a raw_files row",
        ),
        pytest.param(
            list(PATHS),
            [_artifact(p) for p in ("a.txt", "b.txt")],
            "normalised_artifacts_cover_raw_files",
            ("c.txt",),
            id="a raw file without an artifact",
        ),
        pytest.param(
            list(PATHS),
            [_artifact(p) for p in ("a.txt", "b.txt", "c.txt", "c.txt")],
            "normalised_artifacts_unique_keys",
            ("c.txt",),
            id="an artifact written twice",
        ),
        pytest.param(
            list(PATHS),
            [_artifact(p, error="CorruptFileError") for p in ("a.txt", "b.txt")]
            + [_artifact("c.txt")],
            "normalised_artifacts_failure_ratio",
            ("a.txt", "b.txt"),
            id="two of three artifacts failed, over a ratio of 0.5",
        ),
    ],
)
def test_a_damaged_table_fails_its_check(
    store: ContentStore,
    raw: list[str],
    artifacts: list[TableRow],
    failed: str,
    examples: tuple[str, ...],
) -> None:
    _write(store, raw=raw, artifacts=artifacts)
    outcomes = {**_outcomes(store, RAW_FILES), **_outcomes(store, NORMALISED_ARTIFACTS)}
    assert {name for name, o in outcomes.items() if not o.passed} == {failed}
    assert outcomes[failed].examples == examples
    assert outcomes[failed].severity == ("warn" if failed.endswith("ratio") else "error")
