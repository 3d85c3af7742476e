"""`content-pipeline ingest`: discover a source (a folder, an `s3://` prefix, a plug-in's URI),
then materialise every pending batch through the Dagster instance, with progress and a
summary."""

import os
import shutil
import sys
from datetime import UTC
from pathlib import Path

import dagster as dg

from content_assets.cli.progress import IngestView, embeddings_line
from content_assets.cli.query import render
from content_assets.cli.runs import (
    STAGES,
    batch_job,
    check_executor,
    chosen_executor,
    current_rows,
    run_batches,
)
from content_assets.distributed.executors import EXECUTOR_ENV
from content_assets.partitions import INGEST_BATCHES
from content_assets.state import dagster_home
from content_core.discovery import (
    ChangeReport,
    describe_changes,
    discover_pending,
    last_discovery,
)
from content_core.embeddings import EmbedderConfig
from content_core.errors import SourceError
from content_core.paths import os_path_text
from content_core.sources import LocalFolderSource, open_source
from content_core.store import CHUNK_EMBEDDINGS, ContentStore


def sample_query(source_id: str) -> str:
    """The query printed after an ingest: the first artifacts of that source only."""
    literal = "'" + source_id.replace("'", "''") + "'"
    return (
        "SELECT source_id, path, filename, kind, page_count, length(text) AS chars, error_type "
        f"FROM current_normalised_artifacts WHERE source_id = {literal} "
        "ORDER BY path, filename LIMIT 12"
    )


def ingest(
    uri: str,
    source_id: str | None,
    max_batch_files: int,
    store_dir: Path | str,
    verbose: bool,
    executor_flag: str | None = None,
) -> int:
    """Discover the source `uri` names (`open_source`), then materialise every pending batch
    through the Dagster instance into the store `store_dir` (a folder or an `s3://` URI): in
    this process, or submitted to the instance's run queue (`--executor celery`)."""
    try:
        executor = chosen_executor(executor_flag, os.environ)
        source = open_source(uri, source_id=source_id)
    except (SourceError, ValueError) as exc:  # an unknown scheme, a malformed URI
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if isinstance(source, LocalFolderSource) and not source.root.is_dir():
        print(f"error: {os_path_text(source.root)} is not a folder", file=sys.stderr)
        return 2
    home = dagster_home()
    if executor != "in_process":  # refused before anything is written
        with dg.DagsterInstance.get() as instance:
            refused = check_executor(instance, executor)
        if refused is not None:
            print(f"error: {refused}", file=sys.stderr)
            return 2
    # The job's definitions name the same source (a folder by its absolute path), so a
    # CONTENT_SOURCE of the environment never stands in for the one given here.
    where = str(source.root) if isinstance(source, LocalFolderSource) else uri
    environ = {
        **os.environ,
        "CONTENT_STORE_DIR": str(store_dir),
        "CONTENT_SOURCE": where,
        EXECUTOR_ENV: executor,
    }
    job = batch_job(environ)
    if isinstance(store_dir, Path) and not store_dir.exists():
        print(f"new store: {os_path_text(store_dir)}", flush=True)
    store = ContentStore(store_dir)
    print(f"source {source.source_id}: {source.location}", flush=True)
    with dg.DagsterInstance.get() as instance:
        try:
            found = discover_pending(
                source,
                store,
                set(instance.get_dynamic_partitions(INGEST_BATCHES)),
                max_batch_files=max_batch_files,
                time_budget_s=float("inf"),
                # One shot, asked for now: no later pass to leave a just-copied file to (a
                # file that changes while it is read is still refused), see DiscoveryConfig.
                settle_s=0.0,
            )
        except SourceError as exc:  # the source cannot be listed: no such bucket, refused
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"scanned {found.scanned} files; {len(found.batch_ids)} batch(es) to run", flush=True)
        if not found.batch_ids:
            print(nothing_changed(store, source.source_id), flush=True)
        else:
            print_changes(describe_changes(store, found.batch_ids))
        if found.new_batch_ids:
            instance.add_dynamic_partitions(INGEST_BATCHES, list(found.new_batch_ids))
        files = sum(store.read_manifest(b).num_rows for b in found.batch_ids)
        view = IngestView(STAGES, files)
        try:
            outcomes = run_batches(
                instance,
                job,
                store,
                list(found.batch_ids),
                view,
                verbose=verbose,
                executor=executor,
                environ=environ,
            )
        finally:
            view.close()
    store.ensure_layout()
    embedder = EmbedderConfig.from_environ(environ)
    if outcomes:
        totals = current_rows(store, source.source_id)
        if embedder.resolved_kind() == "off":  # the stage ran and wrote nothing: say why
            totals[CHUNK_EMBEDDINGS] = f"{totals.get(CHUNK_EMBEDDINGS, 0)} (embeddings off)"
        view.summary(totals)
    print()
    print(embeddings_line(embedder))
    print_locations(store, home)
    sql = sample_query(source.source_id)
    print(f'sample:   {invoked_as()} query "{sql}"')
    if not outcomes:  # nothing ran: the table is the one the last ingest printed
        return 0
    connection = store.connect()
    try:
        print(render(connection.sql(sql), "table", full=not sys.stdout.isatty()), end="")
    finally:
        connection.close()
    return 1 if any(not o.success for o in outcomes) else 0


# Paths named per kind of change before the rest is counted.
_NAMED = 10


def nothing_changed(store: ContentStore, source_id: str) -> str:
    """The line of an ingest that found nothing to run: since when nothing changed."""
    at = last_discovery(store, source_id)
    if at is None:
        return "nothing to ingest: the source holds no file"
    when = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"nothing changed since {when} (the last batch of {source_id})"


def _shown(path: str) -> str:
    """A path on one line: control characters as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


def print_changes(changes: ChangeReport) -> None:
    """The changed paths per kind: the first ten, then how many more."""
    kinds: list[tuple[str, list[str]]] = [
        ("added", [_shown(p) for p in changes.added]),
        ("modified", [_shown(p) for p in changes.modified]),
        ("deleted", [_shown(p) for p in changes.deleted]),
        ("renamed", [f"{_shown(r.old)} -> {_shown(r.new)}" for r in changes.renamed]),
    ]
    counts = ", ".join(f"{len(names)} {kind}" for kind, names in kinds if names)
    print(f"changes:  {counts}")
    for kind, names in kinds:
        for name in names[:_NAMED]:
            print(f"  {kind:<9} {name}")
        if len(names) > _NAMED:
            print(f"  {kind:<9} and {len(names) - _NAMED} more")
    sys.stdout.flush()


def invoked_as() -> str:
    """This command as it can be typed again from here: `content-pipeline` when that is what
    the shell finds, else the path it was run by (`.venv/bin/content-pipeline` before the venv
    is activated), or the interpreter with `-m` when it was run as a module."""
    script = Path(sys.argv[0])
    if script.name != "content-pipeline":
        return f"{os_path_text(Path(sys.executable))} -m content_assets.cli"
    found = shutil.which("content-pipeline")
    if found is not None and Path(found).resolve() == script.resolve():
        return "content-pipeline"
    try:
        return os_path_text(script.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:  # not below the current folder
        return os_path_text(script.resolve())


def print_locations(store: ContentStore, home: Path) -> None:
    """Where the store, its catalog and the Dagster instance are."""
    print()
    home_text = os_path_text(home.resolve())
    where = store.location if store.location.startswith("s3://") else os_path_text(store.root)
    print(f"store:    {where}")
    catalog = os_path_text(store.catalog_path)
    print(f"catalog:  {catalog}  (open it with the DuckDB CLI, or query below)")
    print(f"dagster:  {home_text}")
    # Runs as printed: dg from this interpreter's environment, on this store and instance.
    dg_command = os_path_text(Path(sys.executable).parent / "dg")
    print(
        f"ui:       DAGSTER_HOME={home_text} CONTENT_STORE_DIR={where} {dg_command} dev "
        "-m content_assets.definitions  (then open http://127.0.0.1:3000)"
    )
