"""Table names, the Arrow schema of every table (derived from its row model in rows.py, the
user-facing contract) and atomic Parquet writes."""

from __future__ import annotations

import functools
import logging
import os
import tempfile
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from content_core.store import rows as models
from content_core.store.row_arrow import arrow_schema
from content_core.store.rows import TABLE_ROWS, TableRow

__all__ = [
    "AGENTIC_EXTRACTIONS",
    "BATCHES",
    "CHUNKS",
    "CHUNK_EMBEDDINGS",
    "COMPRESSED_CONTEXTS",
    "DOCUMENT_SIMILARITY",
    "MERGED_EXTRACTIONS",
    "MESSAGE_PARTS",
    "NORMALISED_ARTIFACTS",
    "PIPELINE_TABLES",
    "RAW_FILES",
    "ROW_MODELS",
    "SCHEMAS",
    "STAGES_ENTRY_POINT_GROUP",
    "conform",
    "pipeline_tables",
    "read_parquet",
    "row_model",
    "rows_to_table",
    "stage_plugins",
    "table_schema",
    "write_parquet_atomic",
]

_log = logging.getLogger(__name__)

# Where other packages add stages (content_core.pipeline.stage): the store writes and views the
# tables of their row models (a stage's `row`) like its own.
STAGES_ENTRY_POINT_GROUP = "content_pipeline.stages"

# Each table is named by its row model; the constants are for code that names one table.
BATCHES = models.BatchRow.TABLE
RAW_FILES = models.RawFileRow.TABLE
NORMALISED_ARTIFACTS = models.NormalisedArtifactRow.TABLE
CHUNKS = models.ChunkRow.TABLE
CHUNK_EMBEDDINGS = models.ChunkEmbeddingRow.TABLE
MESSAGE_PARTS = models.MessagePartRow.TABLE
COMPRESSED_CONTEXTS = models.CompressedContextRow.TABLE
AGENTIC_EXTRACTIONS = models.AgenticExtractionRow.TABLE
MERGED_EXTRACTIONS = models.MergedExtractionRow.TABLE
DOCUMENT_SIMILARITY = models.DocumentSimilarityRow.TABLE

# The tables the assets write, in pipeline order: every table but the discovery manifests.
PIPELINE_TABLES = tuple(model.TABLE for model in TABLE_ROWS if model is not models.BatchRow)

# The row model of each table: its Arrow schema and documented columns come from it (rows.py).
ROW_MODELS: dict[str, type[TableRow]] = {model.TABLE: model for model in TABLE_ROWS}
SCHEMAS: dict[str, pa.Schema] = {table: arrow_schema(model) for table, model in ROW_MODELS.items()}


@functools.cache
def stage_plugins() -> tuple[tuple[str, object], ...]:
    """What each installed stage plug-in declares, as (entry point, item), read once per
    process: the entry point group's values, a factory called, an iterable spread. One that
    fails to load is logged and left out. The pipeline's registry keeps the `Stage`s among the
    items; the store takes their row models (by `row`: it sits below the pipeline and never
    imports it)."""
    found: list[tuple[str, object]] = []
    for entry in metadata.entry_points(group=STAGES_ENTRY_POINT_GROUP):
        try:
            value = entry.load()
            if callable(value) and not hasattr(value, "row"):
                value = value()
        except Exception:  # noqa: BLE001 - a broken plug-in must not stop the pipeline
            _log.warning("stage plug-in %s failed to load", entry.value, exc_info=True)
            continue
        items = value if isinstance(value, Iterable) else [value]
        found.extend((entry.value, item) for item in items)
    return tuple(found)


@functools.cache
def _plugin_models() -> dict[str, type[TableRow]]:
    """The row models of the installed stage plug-ins, by table."""
    found: dict[str, type[TableRow]] = {}
    for _, item in stage_plugins():
        row = getattr(item, "row", None)
        if isinstance(row, type) and issubclass(row, TableRow) and row.TABLE:
            if row.TABLE not in ROW_MODELS:
                found.setdefault(row.TABLE, row)
    return found


def row_model(table: str) -> type[TableRow]:
    """The row model of `table`, a built-in table or a stage plug-in's.

    Raises:
        KeyError: no such table.
    """
    model = ROW_MODELS.get(table)
    return model if model is not None else _plugin_models()[table]


def table_schema(table: str) -> pa.Schema:
    """The Arrow schema of `table` (see `row_model`)."""
    schema = SCHEMAS.get(table)
    return schema if schema is not None else _plugin_schema(table)


@functools.cache
def _plugin_schema(table: str) -> pa.Schema:
    return arrow_schema(_plugin_models()[table])


def pipeline_tables() -> tuple[str, ...]:
    """Every table the pipeline writes: the built-in ones in pipeline order, then the stage
    plug-ins' (`PIPELINE_TABLES` holds the built-in ones alone)."""
    return (*PIPELINE_TABLES, *_plugin_models())


def rows_to_table(table: str, rows: Sequence[TableRow]) -> pa.Table:
    """Build an Arrow table of `table`'s schema from rows of its model.

    Raises:
        TypeError: a row is not of `table`'s model (a dict, another table's row).
        pyarrow.ArrowInvalid: a value does not fit its column's type.
    """
    model = row_model(table)
    for row in rows:
        if type(row) is not model:
            raise TypeError(f"{table} takes {model.__name__} rows, not {type(row).__name__}")
    schema = table_schema(table)
    columns = {name: [getattr(row, name) for row in rows] for name in schema.names}
    return _fixed_size_vectors(pa.Table.from_pydict(columns, schema=schema))


def _fixed_size_vectors(data: pa.Table) -> pa.Table:
    """Float32 list columns whose values all have one length n become `fixed_size_list(n)`
    (DuckDB `FLOAT[n]`, what its array distance functions take). The schema cannot say n: it
    is the embedding model's, known only when the rows are written; `conform` casts back."""
    for i, item in enumerate(data.schema):
        if not (pa.types.is_list(item.type) and item.type.value_type == pa.float32()):
            continue
        lengths = set(pc.list_value_length(data.column(i)).drop_null().to_pylist())
        if len(lengths) == 1 and (size := lengths.pop()) > 0:
            fixed = pa.list_(pa.float32(), size)
            data = data.set_column(i, item.with_type(fixed), data.column(i).cast(fixed))
    return data


def write_parquet_atomic(data: pa.Table, target: Path) -> None:
    """Write `data` to `target` so readers see the old file or the new one, never a part.

    The temporary file starts with a dot and ends in `.tmp`, so no view glob matches it.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".parquet.tmp")
    os.close(fd)
    try:
        pq.write_table(data, tmp, compression="zstd")
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_parquet(path: Path, table: str) -> pa.Table:
    """Read one Parquet file of `table`, cast to the current schema (new columns as nulls)."""
    return conform(pq.read_table(path), table)


# Columns renamed since rows were first written: old name -> current name.
_RENAMED = {RAW_FILES: {"mime_type": "media_type"}}


def conform(data: pa.Table, table: str) -> pa.Table:
    """Cast `data` to `table`'s current schema: renamed columns take their current name,
    missing columns are added as nulls, columns the table no longer has are left out."""
    schema = table_schema(table)
    renamed = _RENAMED.get(table, {})
    if any(old in data.column_names and new not in data.column_names
           for old, new in renamed.items()):
        data = data.rename_columns([
            renamed[name] if name in renamed and renamed[name] not in data.column_names else name
            for name in data.column_names
        ])
    missing = [name for name in schema.names if name not in data.column_names]
    for name in missing:
        data = data.append_column(schema.field(name), pa.nulls(len(data), schema.field(name).type))
    return data.select(schema.names).cast(schema)
