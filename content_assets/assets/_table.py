"""A pipeline table's asset: one step that writes the batch's rows of its table and runs the
table's checks; and what the UI shows about the table, its columns (from the Arrow schema the
store writes) and the DuckDB view that reads it."""

import inspect
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from content_assets.assets._result import to_result
from content_assets.assets.checks import BatchChecksConfig, check_results, check_specs
from content_assets.partitions import ingest_batches
from content_assets.resources import ContentStoreResource
from content_core.pipeline.report import StageReport
from content_core.store import CATALOG_FILE, column_docs, duckdb_type, row_model, table_schema

if TYPE_CHECKING:
    TableEvent = dg.MaterializeResult[None] | dg.AssetCheckResult
else:
    # Dagster reads annotations at definition time; the parameter is for type checkers alone.
    TableEvent = dg.MaterializeResult | dg.AssetCheckResult

__all__ = ["TableEvent", "table_asset", "table_metadata", "write_and_check"]

# The catalog's database name: `duckdb content_store/content.duckdb` opens it as `content`.
_DATABASE = Path(CATALOG_FILE).stem


def table_metadata(table: str) -> dict[str, object]:
    """`dagster/column_schema` and `dagster/table_name` of one pipeline table.

    Column types are DuckDB's names for the Arrow types (what a query of the view returns), a
    non-nullable field is marked so, and each column carries its description from the table's
    row model (the text the docs' table of columns shows).
    """
    docs = column_docs(row_model(table))
    columns = [
        dg.TableColumn(
            name=field.name,
            type=duckdb_type(field.type),
            description=docs[field.name],
            constraints=dg.TableColumnConstraints(nullable=field.nullable),
        )
        for field in table_schema(table)
    ]
    return {
        "dagster/column_schema": dg.TableSchema(columns=columns),
        "dagster/table_name": f"{_DATABASE}.main.{table}",
    }


def table_asset(
    table: str,
    *,
    deps: Sequence[dg.AssetKey] = (),
    retry_policy: dg.RetryPolicy | None = None,
    required_resource_keys: set[str] | None = None,
    metadata: dict[str, object] | None = None,
) -> Callable[[Callable[..., Iterator[TableEvent]]], dg.AssetsDefinition]:
    """The decorator of the asset of pipeline table `table`, partitioned by ingest batch, with
    the table's checks in the same step; the decorated function's docstring describes it.

    The asset and its checks can be selected apart (`can_subset`): the function yields what
    `write_and_check` yields for the selection.
    """

    def decorate(function: Callable[..., Iterator[TableEvent]]) -> dg.AssetsDefinition:
        spec = dg.AssetSpec(
            table,
            deps=deps,
            description=inspect.getdoc(function),
            group_name="content",
            kinds={"parquet", "duckdb"},
            metadata={**table_metadata(table), **(metadata or {})},
        )
        return dg.multi_asset(
            name=table,
            specs=[spec],
            check_specs=check_specs(table),
            partitions_def=ingest_batches,
            can_subset=True,
            retry_policy=retry_policy,
            required_resource_keys=required_resource_keys,
        )(function)

    return decorate


def write_and_check(
    table: str,
    context: dg.AssetExecutionContext,
    config: BatchChecksConfig,
    store: ContentStoreResource,
    build: Callable[[], StageReport],
) -> Iterator[TableEvent]:
    """The batch's rows of `table` written by `build` when the run selects the asset (with the
    rows now current for the batch's source), then the results of the table's checks the run
    selects, on the stored rows."""
    if dg.AssetKey(table) in context.selected_asset_keys:
        yield to_result(build())
    yield from check_results(table, context, config, store)
