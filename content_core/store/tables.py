"""Arrow schemas of every table (the user-facing contract) and atomic Parquet writes."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "AGENTIC_EXTRACTIONS",
    "BATCHES",
    "CHUNKS",
    "COMPRESSED_CONTEXTS",
    "MERGED_EXTRACTIONS",
    "NORMALISED_ARTIFACTS",
    "PIPELINE_TABLES",
    "RAW_FILES",
    "SCHEMAS",
    "conform",
    "read_parquet",
    "rows_to_table",
    "write_parquet_atomic",
]

BATCHES = "batches"
RAW_FILES = "raw_files"
NORMALISED_ARTIFACTS = "normalised_artifacts"
CHUNKS = "chunks"
COMPRESSED_CONTEXTS = "compressed_contexts"
AGENTIC_EXTRACTIONS = "agentic_extractions"
MERGED_EXTRACTIONS = "merged_extractions"

# The tables the assets write, in pipeline order.
PIPELINE_TABLES = (
    RAW_FILES,
    NORMALISED_ARTIFACTS,
    CHUNKS,
    COMPRESSED_CONTEXTS,
    AGENTIC_EXTRACTIONS,
    MERGED_EXTRACTIONS,
)

_TS = pa.timestamp("us", tz="UTC")
_BATCH_KEYS = [
    pa.field("batch_id", pa.string(), nullable=False),
    pa.field("source_id", pa.string(), nullable=False),
    pa.field("path", pa.string(), nullable=False),  # text form of path_bytes (`escape_path`)
    # The exact bytes of the path as the filesystem gave them; null only in rows written before
    # the column existed (their path was then valid UTF-8 and is these bytes decoded).
    pa.field("path_bytes", pa.binary()),
]
_ERROR = [pa.field("error_type", pa.string()), pa.field("error_message", pa.string())]

SCHEMAS: dict[str, pa.Schema] = {
    # One row per file version in a discovery manifest; deletions are rows with change='deleted'.
    BATCHES: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("batch_seq", pa.int64(), nullable=False),
            pa.field("source_root", pa.string()),
            pa.field("change", pa.string(), nullable=False),
            pa.field("size_bytes", pa.int64()),
            pa.field("signature", pa.string()),  # the source's change signature (with the size)
            pa.field("sha256", pa.string()),
            pa.field("declared_type", pa.string()),
            pa.field("discovered_at", _TS),
        ]
    ),
    RAW_FILES: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("batch_seq", pa.int64(), nullable=False),
            pa.field("change", pa.string(), nullable=False),
            pa.field("size_bytes", pa.int64()),
            pa.field("sha256", pa.string()),
            pa.field("mime_type", pa.string()),
            pa.field("declared_type", pa.string()),
            pa.field("fetched_at", _TS),
        ]
    ),
    NORMALISED_ARTIFACTS: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("artifact_id", pa.string(), nullable=False),
            pa.field("derived_from", pa.list_(pa.string())),
            pa.field("kind", pa.string()),
            pa.field("media_type", pa.string()),
            pa.field("filename", pa.string()),
            pa.field("page_count", pa.int32()),
            pa.field("text", pa.large_string()),
            pa.field(
                "pages",
                pa.list_(
                    pa.struct(
                        [
                            pa.field("page", pa.int32()),
                            pa.field("start", pa.int64()),
                            pa.field("end", pa.int64()),
                        ]
                    )
                ),
            ),
            pa.field("text_status", pa.string()),  # processing.TEXT_STATUSES
            *_ERROR,
            pa.field("stage", pa.string()),
            pa.field("notes", pa.list_(pa.string())),  # facts that are not the row's error
            pa.field("raw_sha256", pa.string()),  # the raw file's bytes this row came from
            pa.field("fingerprint", pa.string()),  # configuration and code that made it
        ]
    ),
    CHUNKS: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("artifact_id", pa.string(), nullable=False),
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("index", pa.int32()),
            pa.field("total_chunks", pa.int32()),
            pa.field("content", pa.large_string()),
            pa.field("source_start", pa.int64()),
            pa.field("source_end", pa.int64()),
            pa.field("token_count", pa.int32()),
            pa.field("overlap_tokens", pa.int32()),
            pa.field("page_start", pa.int32()),  # page of the first character
            pa.field("page_end", pa.int32()),  # page of the last character
            pa.field("breadcrumb", pa.string()),
            pa.field("chunker", pa.string()),
            pa.field("chunker_fingerprint", pa.string()),
            pa.field("metadata", pa.string()),  # JSON
            *_ERROR,  # a document that could not be chunked: one row, no content
        ]
    ),
    COMPRESSED_CONTEXTS: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("artifact_id", pa.string(), nullable=False),
            pa.field("strategy", pa.string()),
            pa.field("max_tokens", pa.int32()),
            pa.field("tokens_before", pa.int32()),
            pa.field("tokens_after", pa.int32()),
            pa.field("text", pa.large_string()),
            *_ERROR,
        ]
    ),
    AGENTIC_EXTRACTIONS: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("artifact_id", pa.string(), nullable=False),
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("schema_name", pa.string()),
            pa.field("model", pa.string()),
            pa.field("cache_key", pa.string()),
            pa.field("output_json", pa.large_string()),
            *_ERROR,
            pa.field("prompt_tokens", pa.int32()),
            pa.field("completion_tokens", pa.int32()),
        ]
    ),
    MERGED_EXTRACTIONS: pa.schema(
        [
            *_BATCH_KEYS,
            pa.field("artifact_id", pa.string(), nullable=False),
            pa.field("schema_name", pa.string()),
            pa.field("model", pa.string()),
            pa.field("strategy", pa.string()),
            pa.field("output_json", pa.large_string()),
            pa.field("chunk_count", pa.int32()),
            pa.field("error_count", pa.int32()),
            pa.field("provenance_json", pa.large_string()),
        ]
    ),
}


def rows_to_table(table: str, rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Build an Arrow table of `table`'s schema from row dicts (missing keys become null)."""
    schema = SCHEMAS[table]
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    return pa.Table.from_pydict(columns, schema=schema)


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


def conform(data: pa.Table, table: str) -> pa.Table:
    """Cast `data` to `table`'s current schema, adding missing columns as nulls."""
    schema = SCHEMAS[table]
    missing = [name for name in schema.names if name not in data.column_names]
    for name in missing:
        data = data.append_column(schema.field(name), pa.nulls(len(data), schema.field(name).type))
    return data.select(schema.names).cast(schema)
