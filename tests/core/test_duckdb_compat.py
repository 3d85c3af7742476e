"""What every DuckDB client relies on: the catalog file's storage format, and extensions that
load from their registry packages with every download path closed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from content_core.errors import MissingDependencyError
from content_core.store import CATALOG_STORAGE_VERSION, ContentStore, load_extension
from content_core.store.catalog import catalog_statements


def _offline_connection(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """A connection that cannot fetch an extension: no autoinstall or autoload, an empty
    extension folder, and a repository on a closed loopback port."""
    connection = duckdb.connect(
        ":memory:",
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "extension_directory": str(tmp_path / "no-extensions"),
        },
    )
    connection.execute("SET custom_extension_repository = 'http://127.0.0.1:9'")
    return connection


def _loaded(connection: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = connection.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [name]
    ).fetchone()
    return bool(row and row[0])


def test_fts_loads_offline_from_its_package_and_searches(tmp_path: Path) -> None:
    connection = _offline_connection(tmp_path)
    connection.execute("CREATE TABLE docs (id INTEGER, body VARCHAR)")
    connection.execute(
        "INSERT INTO docs VALUES (1, 'the duck swims on the pond'), "
        "(2, 'a parquet file holds columns'), (3, 'ducks and geese fly south')"
    )
    with pytest.raises(duckdb.Error):  # not there before: nothing was fetched behind our back
        connection.execute("PRAGMA create_fts_index('docs', 'id', 'body')")
    path = load_extension(connection, "fts")
    assert path.name == "fts.duckdb_extension" and f"v{duckdb.__version__}" in path.parts
    assert _loaded(connection, "fts")
    assert not any((tmp_path / "no-extensions").rglob("*.duckdb_extension"))
    connection.execute("PRAGMA create_fts_index('docs', 'id', 'body')")
    hits = connection.execute(
        "SELECT id FROM (SELECT id, fts_main_docs.match_bm25(id, 'duck') AS score FROM docs) "
        "WHERE score IS NOT NULL ORDER BY score DESC, id"
    ).fetchall()
    assert hits == [(1,), (3,)]  # the stemmer matches "ducks" too


def test_httpfs_loads_offline_from_its_package(tmp_path: Path) -> None:
    connection = _offline_connection(tmp_path)
    load_extension(connection, "httpfs")
    assert _loaded(connection, "httpfs")


def test_a_missing_package_is_a_missing_dependency_error(tmp_path: Path) -> None:
    with pytest.raises(MissingDependencyError) as caught:
        load_extension(_offline_connection(tmp_path), "nosuchextension")
    assert caught.value.extra == "duckdb"
    assert "duckdb-extension-nosuchextension" in str(caught.value)
    assert "content-pipeline[duckdb]" in str(caught.value)


def test_an_extension_name_is_never_a_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a DuckDB extension name"):
        load_extension(_offline_connection(tmp_path), "../fts")


def _package(root: Path, name: str, version: str, content: bytes) -> None:
    """An installed-looking duckdb-extension-<name> package shipping one file for `version`."""
    package = root / f"duckdb_extension_{name}"
    (package / "extensions" / version).mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "extensions" / version / f"{name}.duckdb_extension").write_bytes(content)


def test_a_package_for_another_duckdb_names_both_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path / "site", "elsewhen", "v0.9.2", b"\0" * 64)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(MissingDependencyError) as caught:
        load_extension(_offline_connection(tmp_path), "elsewhen")
    assert "v0.9.2" in str(caught.value) and f"v{duckdb.__version__}" in str(caught.value)


def test_a_file_duckdb_refuses_is_a_missing_dependency_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path / "site", "broken", f"v{duckdb.__version__}", b"not an extension" * 64)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(MissingDependencyError, match="DuckDB refused") as caught:
        load_extension(_offline_connection(tmp_path), "broken")
    assert isinstance(caught.value.__cause__, duckdb.Error)


def _storage_version(store: ContentStore) -> object:
    """The storage format the catalog file is in, as DuckDB reports it (`v1.2.0+`)."""
    connection = duckdb.connect(str(store.catalog_path), read_only=True)
    try:
        [(tags,)] = connection.execute(
            "SELECT tags FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchall()
    finally:
        connection.close()
    return tags.get("storage_version")


def test_the_catalog_file_is_written_in_the_oldest_supported_format(
    store: ContentStore,
) -> None:
    store.ensure_layout()
    assert _storage_version(store) == f"{CATALOG_STORAGE_VERSION}+"


def test_a_catalog_left_in_a_newer_format_is_rewritten(store: ContentStore) -> None:
    # What the releases before CATALOG_STORAGE_VERSION left: the same views in the writer's
    # newest format, and a version file keyed by the views alone.
    store.ensure_layout()
    statements = catalog_statements(store.root)
    store.catalog_path.unlink()
    connection = duckdb.connect(
        str(store.catalog_path), config={"storage_compatibility_version": "latest"}
    )
    for statement in statements:
        connection.execute(statement)
    connection.close()
    (store.root / "catalog.version").write_text(
        hashlib.sha256("\n".join(statements).encode()).hexdigest()
    )
    assert _storage_version(store) != f"{CATALOG_STORAGE_VERSION}+"
    ContentStore(store.root).ensure_layout()
    assert _storage_version(store) == f"{CATALOG_STORAGE_VERSION}+"
