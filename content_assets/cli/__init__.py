"""content-pipeline: ingest a source (a folder, an s3:// prefix) through the Dagster instance,
query or search the store, show the state of its batches and retry the failed ones.

Only the chosen subcommand's module is imported: `query` loads neither Dagster nor pyarrow,
`search` no Dagster. Exit codes follow the shell's conventions: 0 done, 1 failed, 2 a usage
or setting error, 130 interrupted (Ctrl-C), 141 the reader closed the pipe (`| head`).
"""

import argparse
import io
import logging
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from content_assets.cli.query import FORMATS, query_command, store_arg, store_location
from content_core.discovery import DiscoveryConfig
from content_core.logs import configure_logging

__all__ = ["main"]


_DESCRIPTION = """\
Turn a folder (or an s3:// prefix) of files into LLM-ready content in a DuckDB store:
ingest it, then query, search and inspect the store."""

_EXAMPLES = """\
examples:
  content-pipeline ingest examples/inbox
  content-pipeline query "SELECT path, text_status FROM current_normalised_artifacts"
  content-pipeline search "archive migration" --k 5
  content-pipeline show CHUNK_ID --png chunk.png
  content-pipeline status

run `content-pipeline COMMAND --help` for a command's options and examples."""

_COMMAND_EXAMPLES = {
    "ingest": """\
examples:
  content-pipeline ingest examples/inbox
  content-pipeline ingest ~/papers --store ~/stores/papers
  content-pipeline ingest s3://bucket/inbox --source-id inbox
  content-pipeline ingest s3://bucket/inbox --executor celery   # on the Celery workers""",
    "query": """\
examples:
  content-pipeline query "SELECT path, text_status FROM current_normalised_artifacts"
  content-pipeline query "SELECT * FROM current_chunks LIMIT 5" --format jsonl
  content-pipeline query "SELECT * FROM current_merged_extractions" -o merged.parquet""",
    "search": """\
examples:
  content-pipeline search "archive migration"
  content-pipeline search "quarterly revenue" --mode bm25 --k 3
  content-pipeline search "scope" --path-prefix reports/ --page 1-3 --format jsonl""",
    "show": """\
examples:
  content-pipeline show 3f2a...c1
  content-pipeline show 3f2a...c1 --png chunk.png""",
    "status": """\
examples:
  content-pipeline status
  content-pipeline status --store ~/stores/papers""",
    "retry": """\
examples:
  content-pipeline retry
  content-pipeline retry BATCH_ID""",
}


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples laid out as written, and each option's default in its help unless the help
    says it already (or there is none to say)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            not action.option_strings
            or "default" in text
            or action.default in (None, False, argparse.SUPPRESS)
        ):
            return text
        return f"{text} (default: %(default)s)"


def _version() -> str:
    try:
        return version("content-pipeline")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="content-pipeline",
        description=_DESCRIPTION,
        epilog=_EXAMPLES,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    store_help = "the content store, {where} (default: $CONTENT_STORE_DIR, else ./content_store)"

    ingest = commands.add_parser(
        "ingest", help="ingest a source: a folder, file://, s3://bucket/prefix or a plug-in's URI"
    )
    ingest.add_argument(
        "source",
        help="a folder path, file:///path, s3://bucket/prefix (endpoint and keys from AWS_*), "
        "or a URI of a scheme an installed plug-in adds (each one is a source)",
    )
    ingest.add_argument("--source-id", default=None, help="default: derived from the location")
    ingest.add_argument(
        "--max-batch-files",
        type=int,
        default=DiscoveryConfig().max_batch_files,
        metavar="N",
        help="files per batch: a larger source is ingested as several batches, one run each",
    )

    query = commands.add_parser("query", help="run SQL against the store's views")
    query.add_argument(
        "sql", help="a DuckDB query over the store's tables and views (see the README's list)"
    )
    query.add_argument("--format", "-f", choices=FORMATS, default="table", help="output format")
    query.add_argument(
        "--output", "-o", type=Path, default=None, help="write to FILE (.parquet, .csv, .json)"
    )
    query.add_argument(
        "--full",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="every value whole in a table (default: yes unless stdout is a terminal)",
    )

    from content_assets.cli.search import add_search_parser

    add_search_parser(commands)

    from content_assets.cli.show import add_show_parser

    add_show_parser(commands)

    commands.add_parser("status", help="batches per source, files and rows, last sensor tick")

    retry = commands.add_parser("retry", help="run the failed batches again")
    retry.add_argument(
        "batch_ids",
        nargs="*",
        metavar="BATCH_ID",
        help="batches to run again (default: every failed batch)",
    )

    for command in (ingest, retry):
        command.add_argument(
            "--executor",
            choices=("in_process", "celery"),
            default=None,
            help="where the batch runs execute: in this process, or submitted to the Dagster "
            "instance's run queue for the daemon to launch on the Celery workers (default: "
            "$CONTENT_EXECUTOR, else in_process)",
        )
    for command in (ingest, commands.choices["status"], retry):
        command.add_argument(
            "--home",
            type=Path,
            default=None,
            help="the Dagster instance's folder (default: $DAGSTER_HOME, else this project's "
            "folder when run inside it, else a per-user folder)",
        )
    for name, command in commands.choices.items():
        command.formatter_class = _HelpFormatter
        command.epilog = _COMMAND_EXAMPLES[name]
        # search reads the index in a store's folder; it has none for an s3:// store
        where = "a folder" if name in ("search", "show") else "a folder or s3://bucket/prefix"
        command.add_argument(
            "--store", type=store_arg, default=None, help=store_help.format(where=where)
        )
        command.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="show every log line: Dagster's debug log, the libraries' messages (without "
            "it, a library's warning about a file is only in that file's row, as notes)",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `content-pipeline` command; returns its exit code."""
    # Paths are printed in their text form (valid UTF-8); a terminal in a narrower encoding
    # gets escapes for what it cannot show instead of a crash.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    # Before anything is imported that might set up logging on its own: the command prints its
    # progress and results; libraries' records below WARNING only with -v.
    configure_logging(logging.DEBUG if args.verbose else logging.WARNING)
    try:
        return _command(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more can be written, and Python's own flush
        # of stdout at exit would fail again; point stdout at nothing, as Python's documentation
        # of SIGPIPE advises, and end as a process killed by SIGPIPE would, quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141


def _command(args: argparse.Namespace) -> int:
    if args.command == "query":
        return query_command(args.sql, args.store, args.format, args.output, args.full)
    if args.command == "search":
        from content_assets.cli.search import search_command

        return search_command(args, args.store)
    if args.command == "show":
        from content_assets.cli.show import show_command

        return show_command(args, args.store)
    import pydantic

    try:
        return _orchestrated(args)
    except pydantic.ValidationError as exc:
        # A CONTENT_* variable a resource refuses: the definitions are built from the
        # environment when they are imported, before any work starts.
        print(f"error: invalid setting: {exc}", file=sys.stderr)
        return 2


def _orchestrated(args: argparse.Namespace) -> int:
    """The subcommands that go through the Dagster instance (they import Dagster)."""
    if args.home is not None:
        os.environ["DAGSTER_HOME"] = str(args.home)
    if args.command == "ingest":
        from content_assets.cli.ingest import ingest

        return ingest(
            args.source,
            args.source_id,
            args.max_batch_files,
            store_location(args.store),
            args.verbose,
            args.executor,
        )
    from content_assets.cli import batches

    if args.command == "status":
        return batches.status_command(args.store)
    return batches.retry_command(args.store, args.batch_ids, args.verbose, args.executor)


if __name__ == "__main__":
    sys.exit(main())
