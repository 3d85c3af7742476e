"""Data checks of one batch of one table, read back from the store: keys are unique, every
upstream row that should lead somewhere did, and failure rows stay under a ratio.

The rules are data (`BATCH_CHECKS`), so the Dagster asset checks are built from them and a
plain caller can run them with `check_batch`. They read what was stored, not what a stage
reported, so a check also catches a table changed after its stage ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import duckdb
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from content_core.store import (
    AGENTIC_EXTRACTIONS,
    BATCHES,
    CHUNK_EMBEDDINGS,
    CHUNKS,
    COMPRESSED_CONTEXTS,
    MERGED_EXTRACTIONS,
    MESSAGE_PARTS,
    NORMALISED_ARTIFACTS,
    RAW_FILES,
)

if TYPE_CHECKING:
    from content_core.store import ContentStore

__all__ = ["BATCH_CHECKS", "CheckOutcome", "CheckRule", "check_batch"]

CheckKind = Literal["unique_keys", "coverage", "failure_ratio"]
Severity = Literal["warn", "error"]

# How many offending paths an outcome names, so the UI shows examples, not the whole batch.
_EXAMPLES = 5
_NO_ERROR = "coalesce(error_type, '') = ''"
_ERROR = f"NOT ({_NO_ERROR})"
_DOCUMENT = f"coalesce(text, '') <> '' AND {_NO_ERROR}"


@dataclass(frozen=True, slots=True)
class CheckRule:
    """One check of a table: its name (`<table>_<property>`), what it asserts, and how."""

    name: str
    table: str
    kind: CheckKind
    description: str
    severity: Severity
    keys: tuple[str, ...] = ()
    # coverage: the upstream table (BATCHES is the manifest) and which of its rows must appear
    upstream: str = ""
    upstream_where: str = "TRUE"
    # failure_ratio: what makes a row a failure
    failed_where: str = ""


class CheckOutcome(BaseModel):
    """The result of one rule on one batch."""

    model_config = ConfigDict(frozen=True)

    name: str
    table: str
    passed: bool
    severity: Severity
    figures: dict[str, int | float]
    examples: tuple[str, ...] = ()  # paths of offending rows, at most a few


def _unique(table: str, keys: tuple[str, ...], what: str) -> CheckRule:
    return CheckRule(
        name=f"{table}_unique_keys",
        table=table,
        kind="unique_keys",
        description=f"No two rows of a batch share {what} ({', '.join(keys)}).",
        severity="error",
        keys=keys,
    )


def _covers(
    table: str, name: str, upstream: str, keys: tuple[str, ...], where: str, what: str
) -> CheckRule:
    return CheckRule(
        name=f"{table}_{name}",
        table=table,
        kind="coverage",
        description=f"{what} has at least one row here (matched on {', '.join(keys)}).",
        severity="error",
        keys=keys,
        upstream=upstream,
        upstream_where=where,
    )


def _failures(table: str, failed_where: str, what: str) -> CheckRule:
    return CheckRule(
        name=f"{table}_failure_ratio",
        table=table,
        kind="failure_ratio",
        description=f"The share of {what} stays at or under the threshold (max_failure_ratio).",
        severity="warn",
        failed_where=failed_where,
    )


_FILE = ("source_id", "path")
_ARTIFACT = (*_FILE, "artifact_id")
_CHUNK = (*_FILE, "chunk_id")


def _covers_documents(table: str) -> CheckRule:
    return _covers(
        table,
        "cover_documents",
        NORMALISED_ARTIFACTS,
        _ARTIFACT,
        _DOCUMENT,
        "Every artifact with text",
    )


def _covers_chunks(table: str) -> CheckRule:
    return _covers(
        table, "cover_chunks", CHUNKS, _CHUNK, _NO_ERROR, "Every chunk (not a chunking failure row)"
    )


# Every table's checks, in pipeline order. A document is an artifact with text and no error:
# the rows chunks and compressed_contexts are made from (see pipeline/stages.py).
BATCH_CHECKS: dict[str, tuple[CheckRule, ...]] = {
    RAW_FILES: (
        _unique(RAW_FILES, _FILE, "a file"),
        _covers(RAW_FILES, "cover_manifest", BATCHES, _FILE, "TRUE", "Every manifest entry"),
    ),
    NORMALISED_ARTIFACTS: (
        _unique(NORMALISED_ARTIFACTS, _ARTIFACT, "an artifact of one file"),
        _covers(
            NORMALISED_ARTIFACTS,
            "cover_raw_files",
            RAW_FILES,
            _FILE,
            "change <> 'deleted'",
            "Every raw file that was not deleted (a file that cannot be read is a failure row)",
        ),
        _failures(NORMALISED_ARTIFACTS, _ERROR, "artifacts with an error"),
    ),
    CHUNKS: (
        _unique(CHUNKS, _CHUNK, "a chunk of one file"),
        _covers_documents(CHUNKS),
        _failures(CHUNKS, _ERROR, "documents that could not be chunked"),
    ),
    CHUNK_EMBEDDINGS: (
        _unique(CHUNK_EMBEDDINGS, _CHUNK, "a chunk of one file"),
        _covers_chunks(CHUNK_EMBEDDINGS),
        _failures(CHUNK_EMBEDDINGS, _ERROR, "chunks that could not be embedded"),
    ),
    MESSAGE_PARTS: (
        _unique(MESSAGE_PARTS, (*_ARTIFACT, "part_index"), "a part of one artifact of one file"),
        _covers_documents(MESSAGE_PARTS),
        _failures(MESSAGE_PARTS, _ERROR, "artifacts whose parts could not be made"),
    ),
    COMPRESSED_CONTEXTS: (
        _unique(COMPRESSED_CONTEXTS, _ARTIFACT, "a document of one file"),
        _covers_documents(COMPRESSED_CONTEXTS),
        _failures(COMPRESSED_CONTEXTS, _ERROR, "documents not compressed"),
    ),
    AGENTIC_EXTRACTIONS: (
        _unique(AGENTIC_EXTRACTIONS, (*_CHUNK, "schema_name"), "a chunk and schema"),
        _covers_chunks(AGENTIC_EXTRACTIONS),
        _failures(AGENTIC_EXTRACTIONS, _ERROR, "chunks the agent failed on"),
    ),
    MERGED_EXTRACTIONS: (
        _unique(MERGED_EXTRACTIONS, (*_ARTIFACT, "schema_name"), "a document and schema"),
        _covers(
            MERGED_EXTRACTIONS,
            "cover_extractions",
            AGENTIC_EXTRACTIONS,
            (*_ARTIFACT, "schema_name"),
            "TRUE",
            "Every document and schema with chunk extractions",
        ),
        _failures(MERGED_EXTRACTIONS, "error_count > 0", "documents with a failed chunk"),
    ),
}


def _rows(store: ContentStore, table: str, batch_id: str) -> pa.Table:
    if table == BATCHES:
        return store.read_manifest(batch_id)
    return store.read_rows(table, batch_id)


def _examples(connection: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, ...]:
    rows = connection.execute(f"SELECT DISTINCT path FROM ({sql}) LIMIT {_EXAMPLES}").fetchall()
    return tuple(sorted(str(row[0]) for row in rows))


def _count(connection: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = connection.execute(f"SELECT count(*) FROM ({sql})").fetchone()
    return int(row[0]) if row else 0


def _evaluate(
    connection: duckdb.DuckDBPyConnection, rule: CheckRule, max_failure_ratio: float
) -> CheckOutcome:
    keys = ", ".join(rule.keys)
    examples: tuple[str, ...] = ()
    if rule.kind == "unique_keys":
        sql = f"SELECT {keys} FROM this GROUP BY {keys} HAVING count(*) > 1"
        duplicates = _count(connection, sql)
        figures: dict[str, int | float] = {"duplicate_keys": duplicates}
        passed, examples = duplicates == 0, _examples(connection, sql)
    elif rule.kind == "coverage":
        sql = (
            f"SELECT DISTINCT {keys} FROM upstream WHERE {rule.upstream_where} "
            f"EXCEPT SELECT DISTINCT {keys} FROM this"
        )
        missing = _count(connection, sql)
        expected = _count(
            connection, f"SELECT DISTINCT {keys} FROM upstream WHERE {rule.upstream_where}"
        )
        figures = {"expected": expected, "missing": missing}
        passed, examples = missing == 0, _examples(connection, sql)
    else:
        rows = _count(connection, "SELECT 1 FROM this")
        failed = _count(connection, f"SELECT 1 FROM this WHERE {rule.failed_where}")
        ratio = failed / rows if rows else 0.0
        figures = {
            "rows": rows,
            "failures": failed,
            "failure_ratio": round(ratio, 4),
            "threshold": max_failure_ratio,
        }
        passed = ratio <= max_failure_ratio
        sql = f"SELECT path FROM this WHERE {rule.failed_where}"
        examples = () if passed else _examples(connection, sql)
    return CheckOutcome(
        name=rule.name,
        table=rule.table,
        passed=passed,
        severity=rule.severity,
        figures=figures,
        examples=examples,
    )


def check_batch(
    store: ContentStore, table: str, batch_id: str, *, max_failure_ratio: float
) -> list[CheckOutcome]:
    """Run every rule of `table` (see `BATCH_CHECKS`) on the stored rows of `batch_id`.

    Raises:
        KeyError: `table` has no checks (it is not a pipeline table).
        FileNotFoundError: no such batch was discovered into this store.
    """
    rules = BATCH_CHECKS[table]
    upstream = next((rule.upstream for rule in rules if rule.upstream), None)
    connection = duckdb.connect(":memory:")
    try:
        connection.register("this", _rows(store, table, batch_id))
        if upstream is not None:
            connection.register("upstream", _rows(store, upstream, batch_id))
        return [_evaluate(connection, rule, max_failure_ratio) for rule in rules]
    finally:
        connection.close()
