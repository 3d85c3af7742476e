"""Data checks of one batch of one table, read back from the store: keys are unique, every
upstream row that should lead somewhere did, and failure rows stay under a ratio.

The rules are data (each stage's `Stage.checks`, built with the functions here), so the Dagster
asset checks are built from them and a plain caller can run them with `check_batch`
(content_core.pipeline.registry). They read what was stored, not what a stage
reported, so a check also catches a table changed after its stage ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import duckdb
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from content_core.store import BATCHES, CHUNKS, NORMALISED_ARTIFACTS

if TYPE_CHECKING:
    from content_core.store import ContentStore

__all__ = [
    "ARTIFACT_KEYS",
    "CHUNK_KEYS",
    "DOCUMENT_ROWS",
    "ERROR_ROWS",
    "FILE_KEYS",
    "NO_ERROR",
    "CheckOutcome",
    "CheckRule",
    "check_rules",
    "covers_chunks",
    "covers_documents",
    "covers_rule",
    "failures_rule",
    "unique_rule",
]

CheckKind = Literal["unique_keys", "coverage", "failure_ratio"]
Severity = Literal["warn", "error"]

# How many offending paths an outcome names, so the UI shows examples, not the whole batch.
_EXAMPLES = 5
NO_ERROR = "coalesce(error_type, '') = ''"
ERROR_ROWS = f"NOT ({NO_ERROR})"
DOCUMENT_ROWS = f"coalesce(text, '') <> '' AND {NO_ERROR}"


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
    # coverage: when set, a batch with no rows at all passes, for this reason (a stage that
    # was switched off for the batch, as chunk_embeddings without an embedder)
    unless_empty: str = ""
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


def unique_rule(table: str, keys: tuple[str, ...], what: str) -> CheckRule:
    return CheckRule(
        name=f"{table}_unique_keys",
        table=table,
        kind="unique_keys",
        description=f"No two rows of a batch share {what} ({', '.join(keys)}).",
        severity="error",
        keys=keys,
    )


def covers_rule(
    table: str,
    name: str,
    upstream: str,
    keys: tuple[str, ...],
    where: str,
    what: str,
    *,
    unless_empty: str = "",
) -> CheckRule:
    unless = f" A batch with no rows here passes: {unless_empty}." if unless_empty else ""
    return CheckRule(
        name=f"{table}_{name}",
        table=table,
        kind="coverage",
        description=f"{what} has at least one row here (matched on {', '.join(keys)}).{unless}",
        severity="error",
        keys=keys,
        upstream=upstream,
        upstream_where=where,
        unless_empty=unless_empty,
    )


def failures_rule(table: str, failed_where: str, what: str) -> CheckRule:
    return CheckRule(
        name=f"{table}_failure_ratio",
        table=table,
        kind="failure_ratio",
        description=f"The share of {what} stays at or under the threshold (max_failure_ratio).",
        severity="warn",
        failed_where=failed_where,
    )


FILE_KEYS = ("source_id", "path")
ARTIFACT_KEYS = (*FILE_KEYS, "artifact_id")
CHUNK_KEYS = (*FILE_KEYS, "chunk_id")


def covers_documents(table: str) -> CheckRule:
    return covers_rule(
        table,
        "cover_documents",
        NORMALISED_ARTIFACTS,
        ARTIFACT_KEYS,
        DOCUMENT_ROWS,
        "Every artifact with text",
    )


def covers_chunks(table: str, *, unless_empty: str = "") -> CheckRule:
    return covers_rule(
        table,
        "cover_chunks",
        CHUNKS,
        CHUNK_KEYS,
        NO_ERROR,
        "Every chunk (not a chunking failure row)",
        unless_empty=unless_empty,
    )




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
        if rule.unless_empty and missing and not _count(connection, "SELECT 1 FROM this"):
            figures = {"expected": expected, "missing": 0, "switched_off": 1}
            passed, examples = True, ()
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


def check_rules(
    store: ContentStore,
    table: str,
    rules: Sequence[CheckRule],
    batch_id: str,
    *,
    max_failure_ratio: float,
) -> list[CheckOutcome]:
    """Run `rules` (of `table`) on the stored rows of `batch_id`.

    Raises:
        FileNotFoundError: no such batch was discovered into this store.
    """
    upstream = next((rule.upstream for rule in rules if rule.upstream), None)
    connection = duckdb.connect(":memory:")
    try:
        connection.register("this", _rows(store, table, batch_id))
        if upstream is not None:
            connection.register("upstream", _rows(store, upstream, batch_id))
        return [_evaluate(connection, rule, max_failure_ratio) for rule in rules]
    finally:
        connection.close()
