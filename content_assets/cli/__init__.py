"""content-pipeline: ingest a source (a folder, an s3:// prefix) through the Dagster instance,
query or search the store, show the state of its batches and retry the failed ones.

Only the chosen subcommand's module is imported: `query` loads neither Dagster nor pyarrow,
`search` no Dagster.
"""

import argparse
import io
import logging
import sys
from pathlib import Path

from content_assets.cli.query import FORMATS, query_command, store_arg, store_location
from content_core.discovery import DiscoveryConfig
from content_core.logs import configure_logging

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="content-pipeline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    store_help = (
        "the content store, a folder or s3://bucket/prefix "
        "(default: $CONTENT_STORE_DIR, else ./content_store)"
    )

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
        "--max-batch-files", type=int, default=DiscoveryConfig().max_batch_files
    )

    query = commands.add_parser("query", help="run SQL against the store's views")
    query.add_argument("sql")
    query.add_argument("--format", "-f", choices=FORMATS, default="table")
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

    commands.add_parser("status", help="batches per source, files and rows, last sensor tick")

    retry = commands.add_parser("retry", help="run the failed batches again")
    retry.add_argument("batch_ids", nargs="*", help="default: every failed batch")

    for command in (ingest, query, commands.choices["search"], commands.choices["status"], retry):
        command.add_argument("--store", type=store_arg, default=None, help=store_help)
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
    args = _parser().parse_args(argv)
    # Before anything is imported that might set up logging on its own: the command prints its
    # progress and results; libraries' records below WARNING only with -v.
    configure_logging(logging.DEBUG if args.verbose else logging.WARNING)
    if args.command == "query":
        return query_command(args.sql, args.store, args.format, args.output, args.full)
    if args.command == "search":
        from content_assets.cli.search import search_command

        return search_command(args, args.store)
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
    if args.command == "ingest":
        from content_assets.cli.ingest import ingest

        return ingest(
            args.source,
            args.source_id,
            args.max_batch_files,
            store_location(args.store),
            args.verbose,
        )
    from content_assets.cli import batches

    if args.command == "status":
        return batches.status_command(args.store)
    return batches.retry_command(args.store, args.batch_ids, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
