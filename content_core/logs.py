"""Logging of the pipeline's processes: the console set-up the CLI and the pool's workers ask
for, and what libraries log or warn while one file is processed, kept as that file's notes.

Nothing here runs on import: a library leaves the root logger to the program that uses it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator

__all__ = ["LibraryNotes", "configure_logging", "library_notes", "root_logging_kept"]

# Records of these loggers are ours: they go to the console as configured, never to notes.
_OWN_LOGGERS = ("content_core",)
# Warnings raised from files under this folder are ours too.
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_FORMAT = "%(levelname)s:%(name)s:%(message)s"
# A broken file can make a parser log a line per object (pypdf: "Object 17 0 not defined."
# for each object of a lost xref table); a row keeps the first few, each cut to a line.
MAX_NOTES = 8
MAX_NOTE_CHARS = 300


def configure_logging(level: int) -> None:
    """Show log records at `level` and above on stderr: the root logger takes `level`, and a
    stderr handler when it has none. Libraries' records below WARNING are shown only when
    `level` asks for them (the CLI's `-v`); their warnings about a file go to its notes."""
    root = logging.getLogger()
    root.setLevel(level)
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(handler)


@contextlib.contextmanager
def root_logging_kept() -> Iterator[None]:
    """Undo what the block does to the root logger's handlers and level: for importing a
    library that configures logging when imported (wordllama calls `logging.basicConfig`
    at INFO, which would print every library's INFO records)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


class LibraryNotes:
    """What libraries logged (WARNING and above) or warned in one `library_notes` block, as
    notes for the row of the file (or artifact) being processed: de-duplicated, at most
    `MAX_NOTES`, the last one saying how many more were left out."""

    def __init__(self, *, echo: bool) -> None:
        self.echo = echo
        self._seen: set[str] = set()
        self._kept: list[str] = []
        self._dropped = 0

    def add(self, note: str) -> None:
        """Keep `note` (on one line, cut to `MAX_NOTE_CHARS`) unless it is already kept."""
        # Parsers quote raw bytes: NULs and lone surrogates are refused by the store.
        line = "".join(c if c.isprintable() else "\ufffd" for c in " ".join(note.split()))
        if len(line) > MAX_NOTE_CHARS:
            line = line[: MAX_NOTE_CHARS - 3] + "..."
        if line in self._seen:
            return
        self._seen.add(line)
        if len(self._kept) < MAX_NOTES:
            self._kept.append(line)
        else:
            self._dropped += 1

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes, in the order they were heard."""
        if not self._dropped:
            return tuple(self._kept)
        return (*self._kept, f"... and {self._dropped} more library messages")


class _Blocks(threading.local):
    """The open `library_notes` blocks of a thread, innermost last."""

    def __init__(self) -> None:
        self.stack: list[LibraryNotes] = []


_BLOCKS = _Blocks()
_LOCK = threading.Lock()
_OPEN = 0  # open blocks in every thread: the handler and filter are installed while > 0


def _is_library(record: logging.LogRecord) -> bool:
    name = record.name
    return not any(name == own or name.startswith(own + ".") for own in _OWN_LOGGERS)


class _NoteHandler(logging.Handler):
    """Adds libraries' records to the innermost open block of the thread that logs them."""

    def emit(self, record: logging.LogRecord) -> None:
        stack = _BLOCKS.stack
        library = _is_library(record)
        if stack and library:
            try:
                message = record.getMessage()
            except (TypeError, ValueError, KeyError):  # a library's bad format arguments
                self.handleError(record)
                return
            stack[-1].add(f"{record.name} {record.levelname.lower()}: {message}")
        shown = not library or not stack or stack[-1].echo
        if shown and logging.lastResort is not None and logging.getLogger().handlers == [self]:
            # Without this handler the root would have none, and Python would print the
            # record through its last resort: what is shown must stay shown.
            logging.lastResort.handle(record)


class _OffConsole(logging.Filter):
    """Keeps a library's record off the other handlers while a block that does not echo is
    open in the thread that logs it: the record is that file's note instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        stack = _BLOCKS.stack
        return not stack or stack[-1].echo or not _is_library(record)


_HANDLER = _NoteHandler(logging.WARNING)
_FILTER = _OffConsole()


def _install() -> None:
    root = logging.getLogger()
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    for handler in root.handlers:
        if handler is not _HANDLER and _FILTER not in handler.filters:
            handler.addFilter(_FILTER)


def _uninstall() -> None:
    root = logging.getLogger()
    root.removeHandler(_HANDLER)
    for handler in root.handlers:
        handler.removeFilter(_FILTER)


@contextlib.contextmanager
def library_notes() -> Iterator[LibraryNotes]:
    """Collect what libraries log at WARNING and above, and the warnings they raise, while the
    block runs in this thread: the notes of the file (or artifact) the block processes.

    A nested block takes what is logged inside it, not its outer block. Collected records and
    warnings stay off the console unless the root logger is set below WARNING (`-v`), when
    they are shown as well. Our own records and warnings are left as they are. Warnings are
    caught process-wide (`warnings.catch_warnings`): blocks belong in single-threaded work.
    """
    global _OPEN
    heard = LibraryNotes(echo=logging.getLogger().getEffectiveLevel() < logging.WARNING)
    with _LOCK:
        _OPEN += 1
        _install()
    _BLOCKS.stack.append(heard)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield heard
    finally:
        _BLOCKS.stack.pop()
        with _LOCK:
            _OPEN -= 1
            if _OPEN == 0:
                _uninstall()
        for warning in caught:
            _sort_warning(warning, heard)


def _sort_warning(warning: warnings.WarningMessage, heard: LibraryNotes) -> None:
    """A warning caught in a block: a library's becomes a note (and is printed when the block
    echoes); ours is shown again as if never caught (to an outer block, which shows it)."""
    if os.path.abspath(warning.filename).startswith(_OWN_DIR):
        warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
        return
    heard.add(f"{warning.category.__name__}: {warning.message}")
    if heard.echo:
        # Straight to stderr, as Python prints a warning: an outer block must not note it again.
        sys.stderr.write(
            warnings.formatwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
        )
