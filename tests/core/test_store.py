"""The content store: atomic per-batch tables, idempotent rewrites, views, blobs."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from content_core.store import (
    CHUNKS,
    NORMALISED_ARTIFACTS,
    RAW_FILES,
    ROW_MODELS,
    SCHEMAS,
    ChunkRow,
    ContentStore,
    FurnitureLine,
    NormalisedArtifactRow,
    RawFileRow,
    compact_store,
    rows_from_table,
)
from content_core.store.row_arrow import columns_markdown, duckdb_type


def _raw_row(batch: str, path: str, seq: int, change: str = "added") -> RawFileRow:
    deleted = change == "deleted"
    return RawFileRow(
        batch_id=batch,
        source_id="src",
        path=path,
        path_bytes=path.encode(),
        batch_seq=seq,
        change=change,
        size_bytes=None if deleted else 1,
        sha256=None if deleted else hashlib.sha256(path.encode()).hexdigest(),
        media_type=None if deleted else "text/plain",
        declared_type=None,
        fetched_at=None,
    )


def _chunk_row(batch: str, path: str, content: str) -> ChunkRow:
    return ChunkRow(
        batch_id=batch,
        source_id="src",
        path=path,
        path_bytes=path.encode(),
        artifact_id="x",
        chunk_id="c",
        index=0,
        total_chunks=1,
        content=content,
        source_start=0,
        source_end=len(content),
        token_count=1,
        overlap_tokens=0,
        page_start=None,
        page_end=None,
        breadcrumb=None,
        chunker="text",
        chunker_fingerprint="f",
        metadata="{}",
    )


def test_views_exist_and_are_empty_before_any_batch(store: ContentStore) -> None:
    store.ensure_layout()
    for view in ("batches", "raw_files", "chunks", "current_merged_extractions"):
        assert store.query(f"SELECT count(*) AS n FROM {view}").to_pylist() == [{"n": 0}]


def test_rewriting_a_batch_replaces_its_rows(store: ContentStore) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1), _raw_row("b1", "b.txt", 1)])
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1), _raw_row("b1", "b.txt", 1)])
    assert store.query("SELECT count(*) AS n FROM raw_files").to_pylist() == [{"n": 2}]
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1)])
    assert store.query("SELECT path FROM raw_files").to_pylist() == [{"path": "a.txt"}]


def test_current_views_keep_latest_version_and_drop_deleted(store: ContentStore) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1), _raw_row("b1", "b.txt", 1)])
    store.write_rows(
        RAW_FILES,
        "b2",
        [_raw_row("b2", "a.txt", 2, "modified"), _raw_row("b2", "b.txt", 2, "deleted")],
    )
    store.write_rows(CHUNKS, "b1", [_chunk_row("b1", "a.txt", "hi")])
    store.write_rows(CHUNKS, "b2", [_chunk_row("b2", "a.txt", "hi")])
    current = store.query("SELECT path, batch_id, change FROM current_raw_files").to_pylist()
    assert current == [{"path": "a.txt", "batch_id": "b2", "change": "modified"}]
    assert store.query("SELECT batch_id FROM current_chunks").to_pylist() == [{"batch_id": "b2"}]


def test_catalog_file_is_not_rewritten_while_views_are_unchanged(store: ContentStore) -> None:
    store.ensure_layout()
    before = store.catalog_path.stat().st_mtime_ns
    ContentStore(store.root).ensure_layout()
    assert store.catalog_path.stat().st_mtime_ns == before
    connection = duckdb.connect(str(store.catalog_path), read_only=True)
    views = {r[0] for r in connection.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    connection.close()
    assert {"raw_files", "current_raw_files", "current_chunks"} <= views


def test_no_temporary_file_is_left_or_visible(store: ContentStore) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1)])
    leftovers = [p for p in store.root.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_blobs_are_content_addressed_and_idempotent(store: ContentStore, tmp_path: Path) -> None:
    blob_id = store.blobs.put(b"hello")
    assert blob_id == hashlib.sha256(b"hello").hexdigest()
    assert store.blobs.put(b"hello") == blob_id
    source = tmp_path / "file.bin"
    source.write_bytes(b"x" * 3_000_000)
    streamed, size = store.blobs.put_file(source)
    assert size == 3_000_000 and store.blobs.get(streamed) == source.read_bytes()
    assert streamed == hashlib.sha256(source.read_bytes()).hexdigest()


def test_compaction_keeps_every_query_result_and_reruns_win(store: ContentStore) -> None:
    for seq in range(1, 6):
        batch = f"b{seq}"
        store.write_rows(
            RAW_FILES,
            batch,
            [_raw_row(batch, f"f{seq}.txt", seq), _raw_row(batch, "all.txt", seq, "modified")],
        )
    query = "SELECT path, batch_id, change FROM current_raw_files ORDER BY path"
    before = store.query(query).to_pylist()
    everything = store.query("SELECT * FROM raw_files ORDER BY batch_id, path").to_pylist()
    reports = {r.table: r for r in compact_store(store)}
    assert reports[RAW_FILES].files_before == 5 and reports[RAW_FILES].files_after == 1
    assert store.query(query).to_pylist() == before
    assert store.query("SELECT * FROM raw_files ORDER BY batch_id, path").to_pylist() == everything
    assert store.read_rows(RAW_FILES, "b3").num_rows == 2
    # A rerun of a compacted batch replaces its rows instead of adding to them.
    store.write_rows(RAW_FILES, "b3", [_raw_row("b3", "f3.txt", 3)])
    assert store.query("SELECT count(*) AS n FROM raw_files WHERE batch_id = 'b3'").to_pylist() == [
        {"n": 1}
    ]
    # A second compaction folds the first one's file and the rerun.
    compact_store(store)
    assert store.query("SELECT count(*) AS n FROM raw_files WHERE batch_id = 'b3'").to_pylist() == [
        {"n": 1}
    ]
    assert store.query("SELECT count(*) AS n FROM raw_files").to_pylist() == [{"n": 9}]


def test_a_crash_after_writing_the_compacted_file_doubles_nothing(store: ContentStore) -> None:
    """The state a SIGKILL between the new file's rename and the deletions leaves behind."""
    for seq in range(1, 4):
        store.write_rows(RAW_FILES, f"b{seq}", [_raw_row(f"b{seq}", f"f{seq}.txt", seq)])
    compact_store(store)
    packed = next((store.root / "tables" / RAW_FILES / "compacted").glob("part-*.parquet"))
    shutil.copy(packed, packed.with_name("part-99999999999999999999.parquet"))  # newer copy
    store.write_rows(RAW_FILES, "b2", [_raw_row("b2", "f2.txt", 2)])  # an undeleted fresh file
    assert store.query("SELECT count(*) AS n FROM raw_files").to_pylist() == [{"n": 3}]


def test_a_row_with_a_missing_or_unknown_column_raises(store: ContentStore) -> None:
    row = _raw_row("b1", "a.txt", 1)
    fields = {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}
    with pytest.raises(TypeError, match="media_type"):  # forgotten: never a silent null
        RawFileRow(**{k: v for k, v in fields.items() if k != "media_type"})
    with pytest.raises(TypeError, match="mime_type"):  # not a column: never silently dropped
        RawFileRow(**fields, mime_type="text/plain")
    with pytest.raises(TypeError, match="RawFileRow"):  # a dict, or another table's row
        store.write_rows(RAW_FILES, "b1", [fields])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="ChunkRow"):
        store.write_rows(CHUNKS, "b1", [row])
    assert not store.table_path(RAW_FILES, "b1").exists()


def test_every_schema_is_its_row_models_fields() -> None:
    for table, model in ROW_MODELS.items():
        fields = [f.name for f in dataclasses.fields(model)]
        assert SCHEMAS[table].names == fields, table
        assert fields[:4] == ["batch_id", "source_id", "path", "path_bytes"], table


def test_views_have_exactly_the_models_columns(store: ContentStore) -> None:
    """No view adds a column (DuckDB reads `batch=<id>` folders as a Hive `batch` column
    unless told not to), before and after compaction."""

    def columns(view: str) -> list[str]:
        return [r["column_name"] for r in store.query(f"DESCRIBE {view}").to_pylist()]

    store.ensure_layout()
    for table, model in ROW_MODELS.items():
        expected = sorted(f.name for f in dataclasses.fields(model))
        assert sorted(columns(table)) == expected, table
        if table != "batches":
            assert sorted(columns(f"current_{table}")) == expected, table
    for seq in (1, 2):
        store.write_rows(RAW_FILES, f"b{seq}", [_raw_row(f"b{seq}", "a.txt", seq)])
    compact_store(store)
    assert columns(RAW_FILES) == SCHEMAS[RAW_FILES].names


def test_docs_list_every_tables_columns(request: pytest.FixtureRequest) -> None:
    """The docs' table of views (docs/reference/tables.md, between its `columns:` comments) is
    the text the row models generate; `pytest --update-golden` writes it there."""
    page = Path(__file__).parents[2] / "docs" / "reference" / "tables.md"
    generated = columns_markdown(list(ROW_MODELS.values()))
    text = page.read_text(encoding="utf-8")
    begin = text.index("<!-- columns:begin")
    start = text.index("\n", begin) + 1
    end = text.index("<!-- columns:end -->", start)
    if request.config.getoption("--update-golden"):
        text = text[:start] + generated + text[end:]
        page.write_text(text, encoding="utf-8")
        end = start + len(generated)
    assert text[start:end] == generated, (
        f"{page} is out of date; rewrite it with: pytest {__file__} --update-golden"
    )


def test_rows_written_with_the_old_mime_type_column_read_as_media_type(
    store: ContentStore,
) -> None:
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1)])
    path = store.table_path(RAW_FILES, "b1")
    pq.write_table(pq.read_table(path).rename_columns(
        ["mime_type" if n == "media_type" else n for n in SCHEMAS[RAW_FILES].names]
    ), path)
    assert store.read_rows(RAW_FILES, "b1").column("media_type").to_pylist() == ["text/plain"]


def test_rows_read_back_are_the_rows_written(store: ContentStore) -> None:
    row = _chunk_row("b1", "a.txt", "hi")
    store.write_rows(CHUNKS, "b1", [row])
    assert rows_from_table(ChunkRow, store.read_rows(CHUNKS, "b1")) == [row]


def test_an_older_stores_views_gain_the_current_columns(store: ContentStore) -> None:
    """A store whose empty files predate a column (here raw_files.media_type) gets them
    rewritten, so a query naming every current column works over its old batches too."""
    store.ensure_layout()
    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "a.txt", 1)])
    for path in (store.root / "tables" / RAW_FILES).rglob("*.parquet"):
        pq.write_table(pq.read_table(path).drop_columns(["media_type"]), path)
    reopened = ContentStore(store.root)
    columns = ", ".join(SCHEMAS[RAW_FILES].names)
    rows = reopened.query(f"SELECT {columns} FROM raw_files").to_pylist()
    assert [(r["path"], r["media_type"]) for r in rows] == [("a.txt", None)]


def test_duckdb_type_names_types_as_duckdb_does() -> None:
    """Worked out without DuckDB scanning a table: quoted keywords and odd names, nested lists
    and structs, every scalar the row models use."""
    odd = pa.struct(
        [("order", pa.int32()), ("Name", pa.string()), ("a b", pa.float32()), ("ok_1", pa.bool_())]
    )
    schema = pa.schema(
        [
            ("nested", pa.list_(odd)),
            ("blob", pa.large_binary()),
            ("text", pa.large_string()),
            ("vector", pa.list_(pa.float32())),
            ("at", pa.timestamp("us")),
            ("at_utc", pa.timestamp("us", tz="UTC")),
        ]
    )
    connection = duckdb.connect(":memory:")
    expected = [str(t) for t in connection.from_arrow(schema.empty_table()).types]
    connection.close()
    assert [duckdb_type(field.type) for field in schema] == expected
    with pytest.raises(TypeError, match="no DuckDB type name"):
        duckdb_type(pa.dictionary(pa.int8(), pa.string()))


def test_artifact_rows_written_before_the_title_column_read_back_untitled(
    store: ContentStore,
) -> None:
    """normalised_artifacts.title came after rows were written: an older batch's rows read
    back (views, current views, row models) with a null title beside the new rows' titles."""
    def artifact(batch: str, path: str, title: str | None) -> NormalisedArtifactRow:
        return NormalisedArtifactRow(
            batch_id=batch, source_id="src", path=path, path_bytes=path.encode(),
            artifact_id=path, derived_from=(), kind="html", media_type="text/html",
            filename=path, title=title, page_count=None, text="t", pages=(), text_status="ok",
            raw_sha256=path, fingerprint="f",
        )

    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "old.html", 1)])
    store.write_rows(RAW_FILES, "b2", [_raw_row("b2", "new.html", 2)])
    store.write_rows(NORMALISED_ARTIFACTS, "b1", [artifact("b1", "old.html", "dropped")])
    for path in (store.root / "tables" / NORMALISED_ARTIFACTS).rglob("*.parquet"):
        pq.write_table(pq.read_table(path).drop_columns(["title"]), path)
    reopened = ContentStore(store.root)
    reopened.write_rows(NORMALISED_ARTIFACTS, "b2", [artifact("b2", "new.html", "Kept")])
    for view in (NORMALISED_ARTIFACTS, f"current_{NORMALISED_ARTIFACTS}"):
        rows = reopened.query(f"SELECT path, title FROM {view} ORDER BY path").to_pylist()
        assert rows == [{"path": "new.html", "title": "Kept"}, {"path": "old.html", "title": None}]
    (old,) = rows_from_table(NormalisedArtifactRow, reopened.read_rows(NORMALISED_ARTIFACTS, "b1"))
    assert old.title is None and old.text == "t"


def test_artifact_rows_written_before_the_page_furniture_column_read_back_without_any(
    store: ContentStore,
) -> None:
    """normalised_artifacts.page_furniture came after rows were written: an older batch's rows
    read back (views, current views, row models) with no furniture beside the new rows'."""
    def artifact(
        batch: str, path: str, furniture: tuple[FurnitureLine, ...]
    ) -> NormalisedArtifactRow:
        return NormalisedArtifactRow(
            batch_id=batch, source_id="src", path=path, path_bytes=path.encode(),
            artifact_id=path, derived_from=(), kind="pdf", media_type="application/pdf",
            filename=path, page_count=1, text="t", pages=(), text_status="ok",
            page_furniture=furniture, raw_sha256=path, fingerprint="f",
        )  # fmt: skip

    store.write_rows(RAW_FILES, "b1", [_raw_row("b1", "old.pdf", 1)])
    store.write_rows(RAW_FILES, "b2", [_raw_row("b2", "new.pdf", 2)])
    dropped = (FurnitureLine(1, "page_number", "1"),)
    store.write_rows(NORMALISED_ARTIFACTS, "b1", [artifact("b1", "old.pdf", dropped)])
    for path in (store.root / "tables" / NORMALISED_ARTIFACTS).rglob("*.parquet"):
        pq.write_table(pq.read_table(path).drop_columns(["page_furniture"]), path)
    reopened = ContentStore(store.root)
    kept = (FurnitureLine(2, "header", "Annual Report"),)
    reopened.write_rows(NORMALISED_ARTIFACTS, "b2", [artifact("b2", "new.pdf", kept)])
    for view in (NORMALISED_ARTIFACTS, f"current_{NORMALISED_ARTIFACTS}"):
        rows = reopened.query(f"SELECT path, page_furniture FROM {view} ORDER BY path").to_pylist()
        new = [{"page": 2, "kind": "header", "text": "Annual Report"}]
        assert rows == [
            {"path": "new.pdf", "page_furniture": new},
            {"path": "old.pdf", "page_furniture": None},
        ]
    (old,) = rows_from_table(NormalisedArtifactRow, reopened.read_rows(NORMALISED_ARTIFACTS, "b1"))
    assert old.page_furniture == () and old.text == "t"
