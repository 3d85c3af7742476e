"""A CPU-time budget for work a test does in its own process.

"Refused before the expensive part" and "stays linear" are claims about work, and CPU time
measures work: other processes loading the machine do not add to it, so unlike a wall-clock
bound it holds on a busy 2-core CI box. It counts every thread of this process and nothing
done in child processes or servers, so use it only around in-process calls.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cpu_budget"]


@contextmanager
def cpu_budget(seconds: float) -> Iterator[None]:
    """Fail when the block uses more than `seconds` of this process's CPU time (checked
    also when the block raises, so it may sit inside `pytest.raises`)."""
    start = time.process_time()
    try:
        yield
    finally:
        used = time.process_time() - start
        assert used < seconds, f"used {used:.2f} s of CPU time, budget {seconds:g} s"
