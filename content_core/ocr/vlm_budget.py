"""VlmBudget: the requests to the vision-language model a batch may still send, shared by
the batch's worker processes through a file."""

from __future__ import annotations

import fcntl
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["VlmBudget", "new_budget_file"]


@dataclass(frozen=True, slots=True)
class VlmBudget:
    """Requests a batch may still send, counted in the file at `path` under an `flock`, so
    the batch's worker processes share it. The file starts empty (no request sent)."""

    path: Path
    limit: int

    def take(self) -> bool:
        """Count one request; False (nothing counted) when `limit` are counted already."""
        with self.path.open("a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            handle.seek(0)
            used = len(handle.read())
            if used >= self.limit:
                return False
            # One byte per request: appending is the whole update.
            handle.write(".")
            return True


def new_budget_file(folder: Path) -> Path:
    """A fresh, empty budget file in `folder` (its name starts with "." so that the cache
    never reads it as an entry); the caller removes it when the batch is done."""
    folder.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=".vlm-budget-", dir=folder)
    os.close(descriptor)
    return Path(name)
