"""Locks between processes that write one store: an `flock` on a file under `<store>/state`."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from content_core.store.layout import StoreLayout

__all__ = ["state_lock"]


@contextmanager
def state_lock(root: Path, name: str) -> Iterator[None]:
    """Hold `<root>/state/<name>.lock` exclusively: one holder per name across processes.

    An flock dies with its process, so a writer killed mid-way never leaves it held.
    """
    lock_path = StoreLayout(Path(root)).state(f"{name}.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
