"""What the UI shows about a table: its columns (from the Arrow schema the store writes) and the
DuckDB view that reads it."""

from pathlib import Path

import dagster as dg
import duckdb

from content_core.store import CATALOG_FILE, SCHEMAS

# The catalog's database name: `duckdb content_store/content.duckdb` opens it as `content`.
_DATABASE = Path(CATALOG_FILE).stem


def table_metadata(table: str) -> dict[str, object]:
    """`dagster/column_schema` and `dagster/table_name` of one pipeline table.

    Column types are DuckDB's names for the Arrow types (what a query of the view returns), and
    a non-nullable field is marked so.
    """
    schema = SCHEMAS[table]
    connection = duckdb.connect(":memory:")
    try:
        types = [str(t) for t in connection.from_arrow(schema.empty_table()).types]
    finally:
        connection.close()
    columns = [
        dg.TableColumn(
            name=field.name,
            type=duckdb_type,
            constraints=dg.TableColumnConstraints(nullable=field.nullable),
        )
        for field, duckdb_type in zip(schema, types, strict=True)
    ]
    return {
        "dagster/column_schema": dg.TableSchema(columns=columns),
        "dagster/table_name": f"{_DATABASE}.main.{table}",
    }
