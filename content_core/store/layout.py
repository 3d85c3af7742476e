"""Names of the store's layout that readers need before anything heavy is imported (the
`content-pipeline query` path imports this module, not pyarrow)."""

from __future__ import annotations

__all__ = ["CATALOG_FILE", "DEFAULT_STORE_DIR"]

# The DuckDB catalog at the store's root: one view per table.
CATALOG_FILE = "content.duckdb"
# Where the CLI and the Dagster resources put the store when CONTENT_STORE_DIR is not set.
DEFAULT_STORE_DIR = "content_store"
