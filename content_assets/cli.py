"""content-pipeline: ingest a folder through the Dagster instance, or query the store."""

import argparse
import io
import os
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb

from content_assets.assets import ALL_ASSETS
from content_assets.definitions import DEFAULT_STORE_DIR, build_definitions
from content_assets.jobs import ingest_batch_job
from content_assets.partitions import INGEST_BATCHES
from content_assets.triggers import worker_tags
from content_core.ingest import discover_pending
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig, os_path_text
from content_core.store import ContentStore

SAMPLE_QUERY = (
    "SELECT path, filename, kind, page_count, length(text) AS chars, error_type "
    "FROM current_normalised_artifacts ORDER BY path, filename LIMIT 12"
)


def _dagster_home() -> Path:
    """DAGSTER_HOME, else the project folder when it holds dagster.yaml, else ./.dagster_home."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = Path.cwd() if (Path.cwd() / "dagster.yaml").is_file() else Path.cwd() / ".dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home.resolve())
    return home


def _store_dir() -> Path:
    return Path(os.environ.get("CONTENT_STORE_DIR") or DEFAULT_STORE_DIR).resolve()


def ingest(folder: Path, source_id: str | None, max_batch_files: int) -> int:
    """Discover `folder`, then materialise every pending batch through the Dagster instance."""
    if not folder.is_dir():
        print(f"error: {os_path_text(folder)} is not a folder", file=sys.stderr)
        return 2
    home = _dagster_home()
    store_dir = _store_dir()
    environ = {**os.environ, "CONTENT_STORE_DIR": str(store_dir), "CONTENT_SOURCE_DIR": str(folder)}
    definitions = build_definitions(environ)
    job = definitions.resolve_job_def(ingest_batch_job.name)
    store = ContentStore(store_dir)
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id=source_id)
    print(f"source {source.source_id}: {os_path_text(source.root)}")
    with dg.DagsterInstance.get() as instance:
        found = discover_pending(
            source,
            store,
            set(instance.get_dynamic_partitions(INGEST_BATCHES)),
            max_batch_files=max_batch_files,
            time_budget_s=float("inf"),
        )
        print(f"scanned {found.scanned} files; {len(found.batch_ids)} batch(es) to run")
        if found.new_batch_ids:
            instance.add_dynamic_partitions(INGEST_BATCHES, list(found.new_batch_ids))
        failed = 0
        for number, batch_id in enumerate(found.batch_ids, start=1):
            counts = store.read_manifest(batch_id).column("change").to_pylist()
            summary = ", ".join(f"{counts.count(c)} {c}" for c in ("added", "modified", "deleted"))
            print(f"[{number}/{len(found.batch_ids)}] batch {batch_id}: {summary}")
            started = time.monotonic()
            # Tagged with this process: if it dies mid-run, the sensor fails the run and retries.
            result = job.execute_in_process(
                instance=instance, partition_key=batch_id, raise_on_error=False, tags=worker_tags()
            )
            for asset in ALL_ASSETS:
                for materialization in result.asset_materializations_for_node(asset.key.path[-1]):
                    meta = materialization.metadata
                    rows, failures = meta["dagster/row_count"].value, meta["failures"].value
                    note = f" ({failures} failed)" if failures else ""
                    print(f"    {asset.key.to_user_string():<22} {rows:>7} rows{note}")
            status = "ok" if result.success else "FAILED"
            print(f"    run {result.run_id[:8]} {status} in {time.monotonic() - started:.1f}s")
            failed += 0 if result.success else 1
    _print_summary(store, home)
    return 1 if failed else 0


def _print_summary(store: ContentStore, home: Path) -> None:
    store.ensure_layout()
    print()
    home_text = os_path_text(home.resolve())
    print(f"store:    {os_path_text(store.root)}")
    catalog = os_path_text(store.catalog_path)
    print(f"catalog:  {catalog}  (open it with the DuckDB CLI, or query below)")
    print(f"dagster:  {home_text}  (DAGSTER_HOME={home_text} dg dev -m content_assets.definitions)")
    counts = store.query(
        "SELECT 'current_raw_files' AS view, count(*) AS rows FROM current_raw_files UNION ALL "
        "SELECT 'current_normalised_artifacts', count(*) FROM current_normalised_artifacts "
        "UNION ALL SELECT 'current_chunks', count(*) FROM current_chunks UNION ALL "
        "SELECT 'current_merged_extractions', count(*) FROM current_merged_extractions"
    ).to_pylist()
    for row in counts:
        print(f"  {row['view']:<30} {row['rows']:>7} rows")
    print()
    print(f'sample:   content-pipeline query "{SAMPLE_QUERY}"')
    print(query_text(store, SAMPLE_QUERY))


def query_text(store: ContentStore, sql: str) -> str:
    """Run `sql` on the store's views and render the result as a text table."""
    result = store.query(sql)
    if result.num_columns == 0:
        return "(no result)"
    return str(duckdb.from_arrow(result))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `content-pipeline` command."""
    # Paths are printed in their text form (valid UTF-8); a terminal in a narrower encoding
    # gets escapes for what it cannot show instead of a crash.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(prog="content-pipeline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    ingest_cmd = commands.add_parser("ingest", help="ingest a folder (each folder is a source)")
    ingest_cmd.add_argument("path", type=Path)
    ingest_cmd.add_argument("--source-id", default=None, help="default: derived from the path")
    ingest_cmd.add_argument("--max-batch-files", type=int, default=2000)
    query_cmd = commands.add_parser("query", help="run SQL against the store's views")
    query_cmd.add_argument("sql")
    args = parser.parse_args(argv)
    if args.command == "ingest":
        return ingest(args.path.resolve(), args.source_id, args.max_batch_files)
    try:
        print(query_text(ContentStore(_store_dir()), args.sql))
    except duckdb.Error as exc:  # a bad query is the user's to read, not a crash
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
