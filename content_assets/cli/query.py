"""`content-pipeline query`: SQL on the store's catalog, opened read-only, printed as a table,
CSV, JSON, JSON lines or Markdown, or written to a Parquet, CSV or JSON file.

This path answers interactively, so it imports neither Dagster nor pyarrow (see
`bench/bench_query.py`): DuckDB alone renders and converts the values.
"""

import csv
import io
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import TextIO

import duckdb

from content_assets.state import default_store
from content_core.store.layout import BATCHES_DIR, StoreLayout
from content_core.store.storage import ObjectStorage, default_work_dir, is_object_uri

FORMATS = ("table", "csv", "json", "jsonl", "markdown")
# --output: the file's suffix picks its format.
OUTPUT_SUFFIXES = (".parquet", ".csv", ".json")
# A compaction deleting superseded files as a query starts makes it fail once ("Cannot open
# file"); the query is run again, as ContentStore.query does.
_ATTEMPTS = 3
_ROW_ALIAS = "_content_pipeline_row"
# DuckDB's table renderer without its terminal limits: every row, column and character.
_UNLIMITED = 2**31 - 1


class StoreNotFoundError(Exception):
    """No content store where the command looks (raised before anything is created)."""

    def __init__(self, root: Path | str) -> None:
        super().__init__(
            f"no content store at {root}; run `content-pipeline ingest` first "
            "or set CONTENT_STORE_DIR"
        )


class ObjectStoreNotSupportedError(Exception):
    """The command works on a store in a folder only, and the store is an `s3://` URI."""

    def __init__(self, command: str, uri: str) -> None:
        super().__init__(
            f"`content-pipeline {command}` needs a store in a folder, not {uri}; "
            "query it with `content-pipeline query`, or use `ContentStore` from Python"
        )


def store_arg(text: str) -> Path | str:
    """`--store`'s value: an `s3://bucket/prefix` URI kept as text, else a folder."""
    return text if is_object_uri(text) else Path(text)


def object_store(given: Path | str | None) -> str | None:
    """The `s3://` URI of the store: `--store`'s, else CONTENT_STORE_DIR's when no `--store`
    was given; None for a store in a folder."""
    if given is not None:
        return given if isinstance(given, str) and is_object_uri(given) else None
    configured = os.environ.get("CONTENT_STORE_DIR") or ""
    return configured if is_object_uri(configured) else None


def store_dir(given: Path | str | None) -> Path:
    """The store the command works on: `--store`, else CONTENT_STORE_DIR, else the default
    (`content_assets.state`; for an `s3://` store, this machine's work folder, where its
    catalog is)."""
    uri = object_store(given)
    if uri is not None:
        return default_work_dir(uri)
    configured = os.environ.get("CONTENT_STORE_DIR")
    chosen = Path(given) if given else Path(configured) if configured else default_store()
    return chosen.expanduser().resolve()


def store_location(given: Path | str | None) -> Path | str:
    """What `ContentStore` opens: the `s3://` URI, or the folder."""
    return object_store(given) or store_dir(given)


def existing_store(given: Path | str | None) -> Path:
    """The store's root (for an `s3://` store, this machine's work folder), which must hold a
    catalog; an `s3://` store that holds batches gets its catalog built here on first use.

    Raises:
        StoreNotFoundError: no store there (nothing is created).
    """
    root = store_dir(given)
    uri = object_store(given)
    if StoreLayout(root).catalog.is_file():
        return root
    if uri is None or not ObjectStorage(uri).list(f"{BATCHES_DIR}/"):
        raise StoreNotFoundError(uri or root)
    from content_core.store import ContentStore  # imports pyarrow: only here, once

    ContentStore(uri).ensure_layout()
    return root


@contextmanager
def open_catalog(root: Path, uri: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the store's catalog; `uri` is the store's `s3://` URI when
    `root` is its work folder (default: CONTENT_STORE_DIR's, when `root` is its work folder).

    DuckDB refuses a read-only open while another process holds the file read-write (the DuckDB
    CLI, say); the same views are then built in memory instead, which locks nothing.
    """
    if uri is None:
        uri = object_store(None)
        uri = uri if uri is not None and store_dir(None) == root else None
    storage = ObjectStorage(uri) if uri is not None else None
    try:
        connection = duckdb.connect(str(StoreLayout(root).catalog), read_only=True)
        if storage is not None:  # the views read s3:// URLs: httpfs and a secret from AWS_*
            storage.prepare(connection)
    except duckdb.IOException:
        from content_core.store.catalog import connect_views  # imports pyarrow: only here

        connection = connect_views(storage or root)
    try:
        yield connection
    finally:
        connection.close()


def _table(relation: duckdb.DuckDBPyRelation, full: bool) -> str:
    buffer = io.StringIO()
    # DuckDB prints the rendered table through Python's sys.stdout.
    with redirect_stdout(buffer):
        if full:
            relation.show(max_width=_UNLIMITED, max_rows=_UNLIMITED, max_col_width=_UNLIMITED)
        else:
            relation.show()
    return buffer.getvalue()


def _json_rows(relation: duckdb.DuckDBPyRelation) -> list[str]:
    """Each row as DuckDB's own JSON object (the types as `COPY ... (FORMAT json)` writes them)."""
    rows = relation.set_alias(_ROW_ALIAS).select(f"to_json({_ROW_ALIAS})").fetchall()
    return [row[0] for row in rows]


def _text_rows(relation: duckdb.DuckDBPyRelation) -> list[tuple[str | None, ...]]:
    """Each value as DuckDB's text form (a BLOB as `\\xNN` escapes, a list as `[a, b]`)."""
    if not relation.columns:
        return []
    return relation.select("CAST(COLUMNS(*) AS VARCHAR)").fetchall()


def _markdown_cell(value: str | None) -> str:
    # A pipe would end the cell and a line break the row; a backslash escapes in Markdown.
    if value is None:
        return ""
    text = value.replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def render(relation: duckdb.DuckDBPyRelation, fmt: str, *, full: bool = True) -> str:
    """The result of `relation` in `fmt` (one of FORMATS); `full` keeps every value whole in a
    table (otherwise DuckDB fits it to the terminal)."""
    if fmt == "table":
        return _table(relation, full)
    if fmt == "json":
        rows = _json_rows(relation)
        return "[\n" + ",\n".join(rows) + "\n]\n" if rows else "[]\n"
    if fmt == "jsonl":
        return "".join(row + "\n" for row in _json_rows(relation))
    values = _text_rows(relation)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(relation.columns)
        writer.writerows(values)
        return buffer.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(map(_markdown_cell, relation.columns)) + " |"]
        lines.append("|" + "---|" * len(relation.columns))
        lines += ["| " + " | ".join(map(_markdown_cell, row)) + " |" for row in values]
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def write_output(relation: duckdb.DuckDBPyRelation, path: Path) -> None:
    """Write the result to `path`, in the format its suffix names (one of OUTPUT_SUFFIXES):
    Parquet and CSV by DuckDB's writers, JSON as one array of DuckDB's JSON objects."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        relation.to_parquet(str(path))
    elif suffix == ".csv":
        relation.to_csv(str(path), header=True)
    elif suffix == ".json":
        path.write_text(render(relation, "json"), encoding="utf-8")
    else:
        raise ValueError(f"--output {path.name}: the suffix must be one of {OUTPUT_SUFFIXES}")


def run_query(
    root: Path,
    sql: str,
    fmt: str,
    *,
    full: bool,
    output: Path | None,
    out: TextIO,
    uri: str | None = None,
) -> None:
    """Run `sql` on the catalog at `root` (the work folder of the `s3://` store `uri`, if
    given); print the result to `out` or write it to `output`.

    Raises:
        duckdb.Error: the query failed (a user's error, shown as such by the CLI).
    """
    attempt = 1
    while True:
        try:
            with open_catalog(root, uri) as connection:
                relation = connection.sql(sql)
                if relation is None:  # a statement with no result
                    return
                if output is not None:
                    write_output(relation, output)
                else:
                    out.write(render(relation, fmt, full=full))
                return
        except duckdb.IOException:
            if attempt >= _ATTEMPTS:
                raise
        attempt += 1
        time.sleep(0.05 * attempt)


def query_command(
    sql: str, store: Path | str | None, fmt: str, output: Path | None, full: bool | None
) -> int:
    """The `query` subcommand; returns the exit code (1: bad query, 2: no store)."""
    try:
        root = existing_store(store)
    except StoreNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if output is not None and output.suffix.lower() not in OUTPUT_SUFFIXES:
        print(f"error: --output must end in one of {', '.join(OUTPUT_SUFFIXES)}", file=sys.stderr)
        return 2
    if full is None:
        full = not sys.stdout.isatty()  # a pipe or a file gets every value whole
    try:
        run_query(
            root, sql, fmt, full=full, output=output, out=sys.stdout, uri=object_store(store)
        )
    except duckdb.Error as exc:  # a bad query is the user's to read, not a crash
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if output is not None:
        print(f"wrote {output}", file=sys.stderr)
    return 0
