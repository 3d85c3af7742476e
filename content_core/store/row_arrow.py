"""Row models and Arrow: a model's Arrow schema, a stored table's rows as model instances, and
the docs' table of views, all read from the models' fields and `Col` annotations."""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from datetime import datetime
from typing import Annotated, Union

import duckdb
import pyarrow as pa

from content_core.store.rows import KEY_COLUMNS, Col, TableRow

__all__ = ["arrow_schema", "column_docs", "columns_markdown", "rows_from_table"]

_SCALARS: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    bytes: pa.binary(),
    datetime: pa.timestamp("us", tz="UTC"),
}


def _default_arrow(hint: object) -> pa.DataType:
    """The Arrow type of a plain annotation: a scalar, `X | None` or `tuple[X, ...]`."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _default_arrow(inner)
    if origin is tuple:
        return pa.list_(_default_arrow(typing.get_args(hint)[0]))
    if isinstance(hint, type) and hint in _SCALARS:
        return _SCALARS[hint]
    raise TypeError(f"no Arrow type for annotation {hint!r}; give one with Col(arrow=...)")


def _columns(model: type[TableRow]) -> list[tuple[str, Col, object]]:
    hints = typing.get_type_hints(model, include_extras=True)
    found = []
    for item in dataclasses.fields(model):
        hint = hints[item.name]
        col = Col()
        if typing.get_origin(hint) is Annotated:
            # A nested Annotated (an alias given a description) lists every Col: merge them.
            hint, *extras = typing.get_args(hint)
            for extra in extras:
                if isinstance(extra, Col):
                    col = Col(
                        doc=extra.doc or col.doc,
                        arrow=extra.arrow or col.arrow,
                        nullable=col.nullable and extra.nullable,
                    )
        found.append((item.name, col, hint))
    return found


def arrow_schema(model: type[TableRow]) -> pa.Schema:
    """The Arrow schema of `model`'s table: one field per model field, in order."""
    return pa.schema(
        [
            pa.field(name, col.arrow or _default_arrow(hint), nullable=col.nullable)
            for name, col, hint in _columns(model)
        ]
    )


R = typing.TypeVar("R", bound=TableRow)


def rows_from_table(model: type[R], data: pa.Table) -> list[R]:
    """The rows of `data` (holding exactly `model`'s columns) as `model` instances.

    Arrow gives lists and dicts back; tuple columns become tuples again, and struct items of a
    named-tuple column (`pages`) named tuples.

    Raises:
        TypeError: `data` lacks a column of `model` or has one `model` does not.
    """
    converters: dict[str, typing.Callable[[typing.Any], object]] = {}
    for name, _, hint in _columns(model):
        if typing.get_origin(hint) is tuple:
            converters[name] = _tuple_converter(typing.get_args(hint)[0])
    # Any: column values as Arrow returns them, converted where the model wants a tuple.
    values: list[dict[str, typing.Any]] = [
        {k: converters[k](v) if k in converters else v for k, v in row.items()}
        for row in data.to_pylist()
    ]
    return [model(**row) for row in values]


def _tuple_converter(item: object) -> typing.Callable[[typing.Any], object]:
    """Turn an Arrow list back into a tuple, its struct items into `item` if a named tuple."""
    if isinstance(item, type) and issubclass(item, tuple) and hasattr(item, "_fields"):
        record = item

        def to_records(value: typing.Any) -> object:
            return tuple(record(**x) for x in value or ())

        return to_records
    return lambda value: tuple(value or ())


def column_docs(model: type[TableRow]) -> dict[str, str]:
    """The description of each column of `model`'s table, in column order: the text the docs'
    table of columns and the asset's column schema in the Dagster UI both show."""
    return {name: col.doc for name, col, _ in _columns(model)}


def _column_table(model: type[TableRow], names: typing.Container[str]) -> list[str]:
    """A Markdown table of the columns of `model` among `names`: name, DuckDB type, text."""
    lines = ["| column | type | description |", "| --- | --- | --- |"]
    for name, col, hint in _columns(model):
        if name in names:
            kind = duckdb_type(col.arrow or _default_arrow(hint))
            text = col.doc.replace("|", "\\|")
            lines.append(f"| `{name}` | {kind} | {text} |")
    return lines


def columns_markdown(models: typing.Sequence[type[TableRow]]) -> str:
    """The docs' list of columns: the key columns every table starts with, then one section
    per table with its other columns, each with its DuckDB type and description
    (docs/reference/tables.md holds exactly this text; a test compares them)."""
    lines = ["Every table starts with these columns:", ""]
    lines += _column_table(TableRow, KEY_COLUMNS)
    for model in models:
        others = {name for name, _, _ in _columns(model)} - set(KEY_COLUMNS)
        lines += ["", f"### `{model.TABLE}`", "", f"One row per {model.ONE_ROW_PER}.", ""]
        lines += _column_table(model, others)
    return "\n".join(lines) + "\n"


# DuckDB's names of the scalar Arrow types the row models use.
_DUCKDB_SCALARS = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.binary(): "BLOB",
    pa.large_binary(): "BLOB",
    pa.bool_(): "BOOLEAN",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.uint32(): "UINTEGER",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
}
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.cache
def _duckdb_keywords() -> frozenset[str]:
    connection = duckdb.connect(":memory:")
    try:
        rows = connection.execute("SELECT keyword_name FROM duckdb_keywords()").fetchall()
    finally:
        connection.close()
    return frozenset(name for (name,) in rows)


def _duckdb_field(name: str) -> str:
    if _PLAIN_NAME.fullmatch(name) and name.lower() not in _duckdb_keywords():
        return name
    return '"' + name.replace('"', '""') + '"'


def duckdb_type(arrow_type: pa.DataType) -> str:
    """DuckDB's name of `arrow_type`, as a query of a view over the Parquet files reports it
    (`VARCHAR[]`, `STRUCT(page INTEGER, "end" BIGINT)[]`, ...): worked out here rather than by
    scanning an empty table, which makes DuckDB import pandas."""
    if arrow_type in _DUCKDB_SCALARS:
        return _DUCKDB_SCALARS[arrow_type]
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return duckdb_type(arrow_type.value_type) + "[]"
    if pa.types.is_struct(arrow_type):
        fields = ", ".join(
            f"{_duckdb_field(field.name)} {duckdb_type(field.type)}" for field in arrow_type
        )
        return f"STRUCT({fields})"
    if pa.types.is_timestamp(arrow_type) and arrow_type.unit == "us":
        return "TIMESTAMP WITH TIME ZONE" if arrow_type.tz else "TIMESTAMP"
    raise TypeError(f"no DuckDB type name for the Arrow type {arrow_type}")
