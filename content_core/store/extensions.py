"""DuckDB extensions loaded from their registry packages, never downloaded.

DuckDB fetches a missing extension from its own server (`INSTALL`, or autoloading on first
use); neither works offline or behind a registry mirror. The `duckdb-extension-<name>`
packages ship each extension file for exactly one DuckDB version, and `LOAD '<file>'` loads
it with no network: the `duckdb` extra pins them and the `duckdb` module to the same version.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import duckdb

from content_core.errors import MissingDependencyError

__all__ = ["extension_path", "load_extension"]

_EXTRA = "duckdb"
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def extension_path(name: str) -> Path:
    """The file of DuckDB extension `name` (`fts`, `httpfs`, ...) shipped by the
    `duckdb-extension-<name>` package for the DuckDB this process runs.

    Raises:
        ValueError: `name` is not an extension name.
        MissingDependencyError: the package is not installed, or ships no file for this DuckDB.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a DuckDB extension name: {name!r}")
    package = f"duckdb-extension-{name}"
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"DuckDB extension {name!r} needs the package {package}", extra=_EXTRA
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "extensions"
    version = f"v{duckdb.__version__}"
    path = folder / version / f"{name}.duckdb_extension"
    if not path.is_file():
        shipped = sorted(p.parent.name for p in folder.glob(f"*/{name}.duckdb_extension"))
        raise MissingDependencyError(
            f"DuckDB extension {name!r}: {package} ships it for {', '.join(shipped) or 'none'}"
            f" but the duckdb module is {version}; install the same version of both",
            extra=_EXTRA,
        )
    return path


def load_extension(connection: duckdb.DuckDBPyConnection, name: str) -> Path:
    """Load DuckDB extension `name` into `connection` from its package file; return the file.

    Loading a file never downloads, whatever the connection's `autoinstall_known_extensions`.

    Raises:
        ValueError: `name` is not an extension name.
        MissingDependencyError: the package is missing, or DuckDB refused its file.
    """
    path = extension_path(name)
    try:
        connection.execute("LOAD '" + str(path).replace("'", "''") + "'")
    except duckdb.Error as exc:
        raise MissingDependencyError(
            f"DuckDB extension {name!r}: DuckDB refused {path}: {exc}", extra=_EXTRA
        ) from exc
    return path
