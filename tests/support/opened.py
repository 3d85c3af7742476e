"""Which files a block of code opens, seen through Python's audit events (nothing is patched).

A test that wants "this pass is cheap" asserts on the work done (files opened), not on how
long it took: a wall-clock bound fails on a loaded machine and proves little on an idle one.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["files_opened_under"]

_sinks: list[tuple[str, list[Path]]] = []
_lock = threading.Lock()
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    # `open` is raised by open(), io.open() and os.open(), from any thread of this process.
    if event != "open" or not _sinks or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    with _lock:
        for prefix, sink in _sinks:
            if path.startswith(prefix):
                sink.append(Path(path))


@contextmanager
def files_opened_under(folder: Path) -> Iterator[list[Path]]:
    """Collect, while the block runs, every file under `folder` that this process opens.

    Only this process: a child process (for example GNU find listing the folder) is not seen,
    and listing or stat-ing a folder is not opening a file.
    """
    global _installed
    with _lock:
        if not _installed:  # an audit hook cannot be removed: install one, shared
            sys.addaudithook(_hook)
            _installed = True
        entry: tuple[str, list[Path]] = (os.path.abspath(folder) + os.sep, [])
        _sinks.append(entry)
    try:
        yield entry[1]
    finally:
        with _lock:
            _sinks.remove(entry)
