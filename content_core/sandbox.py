"""Run untrusted-input work in long-lived worker processes with a memory cap and a time limit.

A `WorkerPool` keeps `workers` processes (forkserver context, so they start from a clean
interpreter without the caller's threads or open files). Each task runs in one worker; the
worker's address space is capped with RLIMIT_AS. A task that passes its time limit, or whose
worker dies (out of memory, a segfault in a C parser), becomes a typed error for that task only:
the worker is replaced and the other tasks go on.

A task's time limit is a budget per step, not per task: a task made of many steps (the chunks
of a long document) calls `report_progress()` after each, and each call gives it its limit
again. So no budget is ever multiplied by a count, and every wait and limit is clamped to
`MAX_TASK_S`, whatever a caller asks for.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import functools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from content_core.errors import ContentError, ConversionError, LimitExceededError

__all__ = [
    "TaskFailure",
    "available_cores",
    "WorkerCrashedError",
    "WorkerPool",
    "WorkerTimeoutError",
    "MAX_TASK_S",
    "is_process_alive",
    "report_progress",
    "run_isolated",
    "run_task",
    "workers_can_start",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# The longest any one step of a task may be given (a day), whatever a caller configures; and
# the longest one look at the workers waits before the pool looks at its clocks again
# (`multiprocessing.connection.wait` turns its timeout into milliseconds for poll(), which
# overflows past about 24 days).
MAX_TASK_S = 86_400.0
_MAX_LOOK_S = 60.0
# A worker's progress reports closer together than this are one report: a task of many
# tiny steps does not flood the pipe; its limit is renewed at most this late.
_PROGRESS_EVERY_S = 0.2

# In a worker process: the pipe to the pool, for `report_progress`.
_progress_pipe: multiprocessing.connection.Connection | None = None
_progress_lock = threading.Lock()
_progress_sent = 0.0


def report_progress() -> None:
    """Tell the pool that the task running in this worker finished one step, which gives the
    task its time limit again from now. Outside a pool's worker it does nothing, so code that
    runs both in a worker and in the caller's process can call it freely."""
    global _progress_sent
    pipe = _progress_pipe
    if pipe is None:
        return
    now = time.monotonic()
    with _progress_lock:
        if now - _progress_sent < _PROGRESS_EVERY_S:
            return
        _progress_sent = now
        with contextlib.suppress(OSError, ValueError):
            pipe.send(("beat", None))


class WorkerTimeoutError(LimitExceededError):
    """A task ran past its time limit (`timeout_s`); its worker was killed. Recorded by name
    with stage "worker", so the row is retried rather than reused."""


class WorkerCrashedError(ConversionError):
    """The worker process died while running a task (memory cap, crash in native code)."""


@dataclass(frozen=True, slots=True)
class TaskFailure:
    """Why one task produced no result: the error class name and its message."""

    error_type: str
    message: str


def run_task(function: Callable[[T], R], argument: T) -> R | TaskFailure:
    """`function(argument)`, or the failure a worker reports for what it raised: the error of
    a `ContentError`, the memory cap, too deep a nesting, or any other exception by name."""
    try:
        return function(argument)
    except ContentError as exc:
        return TaskFailure(exc.error_type, exc.message)
    except MemoryError:
        return TaskFailure("WorkerMemoryError", "the task ran out of its memory cap")
    except RecursionError as exc:
        return TaskFailure("LimitExceededError", f"input nests too deeply ({exc})")
    except Exception as exc:  # noqa: BLE001 - the process boundary: report, never die
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return TaskFailure(f"UnexpectedError.{type(exc).__name__}", detail[:2000])


def _worker_main(
    connection: multiprocessing.connection.Connection, memory_bytes: int | None
) -> None:
    """Worker loop: receive (function, argument), send back ("ok", value) or ("err", ...),
    after any number of ("beat", None) progress reports."""
    global _progress_pipe
    _progress_pipe = connection
    if memory_bytes is not None:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        # Soft limit only: a child process (soffice) may lift it for itself.
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers stop
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        function, argument = message
        outcome = run_task(function, argument)
        reply: tuple[str, Any] = (  # Any: whatever the task returns
            ("err", (outcome.error_type, outcome.message))
            if isinstance(outcome, TaskFailure)
            else ("ok", outcome)
        )
        try:
            connection.send(reply)
        except (OSError, ValueError, TypeError) as exc:  # unpicklable or pipe gone
            with contextlib.suppress(OSError, ValueError):
                connection.send(("err", ("WorkerCrashedError", f"result not sendable: {exc}")))


class _Worker:
    def __init__(self, context: Any, memory_bytes: int | None) -> None:  # Any: mp context
        parent, child = context.Pipe(duplex=True)
        self.connection = parent
        self.process = context.Process(target=_worker_main, args=(child, memory_bytes), daemon=True)
        self.process.start()
        child.close()
        self.task: int | None = None
        self.deadline = 0.0

    def kill(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.process.kill()
        self.process.join(timeout=5)
        with contextlib.suppress(OSError):
            self.connection.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError, BrokenPipeError):
            self.connection.send(None)
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.kill()
        with contextlib.suppress(OSError):
            self.connection.close()


class WorkerPool:
    """A pool of long-lived worker processes running one task each at a time.

    Args:
        workers: number of processes.
        memory_mb: address-space cap per worker, or None for none.
        timeout_s: wall-clock limit per task, renewed by each `report_progress()` of the task
            (at most `MAX_TASK_S`).
        preload: modules the forkserver imports once, so new workers start warm.
    """

    def __init__(
        self,
        *,
        workers: int = 2,
        memory_mb: int | None = 2048,
        timeout_s: float = 60.0,
        preload: Sequence[str] = (),
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        self.timeout_s = timeout_s
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context(
            "forkserver" if "forkserver" in methods else "spawn"
        )
        if preload and self._context.get_start_method() == "forkserver":
            self._context.set_forkserver_preload(list(preload))
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self._owner_pid = os.getpid()

    def map(
        self,
        function: Callable[[T], R],
        items: Sequence[T],
        *,
        timeout_s: float | None = None,
        sizes: Sequence[float] | None = None,
    ) -> list[R | TaskFailure]:
        """Run `function(item)` for every item; return results in input order, a
        `TaskFailure` where a task raised, timed out or lost its worker.

        `timeout_s` bounds each task from its start and again from each of its
        `report_progress()` calls; it is clamped to `MAX_TASK_S`.

        With `sizes` (one per item, a guess of its cost), the largest tasks start first, so
        that the workers finish together instead of one running the last big task alone.
        `function` must be a module-level callable; items and results must be picklable.
        """
        if self._closed:
            raise RuntimeError("the pool is closed")
        limit = min(self.timeout_s if timeout_s is None else timeout_s, MAX_TASK_S)
        if limit <= 0:
            raise ValueError("timeout_s must be positive")
        order = list(range(len(items)))
        if sizes is not None:
            if len(sizes) != len(order):
                raise ValueError("sizes must have one entry per item")
            order.sort(key=lambda index: -sizes[index])
        with self._lock:
            return self._run(function, list(items), limit, order)

    def _run(
        self, function: Callable[[T], R], items: list[T], limit: float, order: list[int]
    ) -> list[R | TaskFailure]:
        results: list[R | TaskFailure | None] = [None] * len(items)
        pending = deque(order)
        busy: list[_Worker] = []
        wanted = min(self.workers, len(items))
        while len(self._idle) < wanted and len(self._idle) + len(busy) < wanted:
            self._idle.append(_Worker(self._context, self.memory_bytes))
        while pending or busy:
            while pending and self._idle:
                worker = self._idle.pop()
                if not worker.process.is_alive():
                    worker.kill()
                    worker = _Worker(self._context, self.memory_bytes)
                index = pending.popleft()
                try:
                    worker.connection.send((function, items[index]))
                except (OSError, ValueError, BrokenPipeError) as exc:
                    worker.kill()
                    self._idle.append(_Worker(self._context, self.memory_bytes))
                    results[index] = TaskFailure("WorkerCrashedError", f"cannot start task: {exc}")
                    continue
                worker.task = index
                worker.deadline = time.monotonic() + limit
                busy.append(worker)
            if not busy:
                continue
            now = time.monotonic()
            wait_s = min(_MAX_LOOK_S, max(0.0, min(w.deadline for w in busy) - now))
            ready = multiprocessing.connection.wait(
                [w.connection for w in busy] + [w.process.sentinel for w in busy],
                timeout=wait_s,
            )
            now = time.monotonic()
            for worker in list(busy):
                task_index = worker.task
                assert task_index is not None
                if worker.connection in ready:
                    try:
                        status, payload = worker.connection.recv()
                    except (EOFError, OSError):
                        status, payload = "dead", None
                    if status == "beat":
                        worker.deadline = now + limit
                        continue
                    if status == "ok":
                        results[task_index] = payload
                    elif status == "err":
                        results[task_index] = TaskFailure(*payload)
                    else:
                        results[task_index] = self._crash_failure(worker)
                        busy.remove(worker)
                        worker.kill()
                        self._idle.append(_Worker(self._context, self.memory_bytes))
                        continue
                    busy.remove(worker)
                    worker.task = None
                    self._idle.append(worker)
                elif worker.process.sentinel in ready:
                    results[task_index] = self._crash_failure(worker)
                    busy.remove(worker)
                    worker.kill()
                    self._idle.append(_Worker(self._context, self.memory_bytes))
                elif now >= worker.deadline:
                    _log.warning("task %d ran past %.1f s; killing its worker", task_index, limit)
                    results[task_index] = TaskFailure(
                        "WorkerTimeoutError", f"ran past the time limit of {limit:g} s"
                    )
                    busy.remove(worker)
                    worker.kill()
                    self._idle.append(_Worker(self._context, self.memory_bytes))
        return [
            r if r is not None else TaskFailure("WorkerCrashedError", "no result") for r in results
        ]

    @staticmethod
    def _crash_failure(worker: _Worker) -> TaskFailure:
        worker.process.join(timeout=1)
        code = worker.process.exitcode
        if code is not None and code < 0:
            reason = f"killed by signal {signal.Signals(-code).name}"
        else:
            reason = f"exit code {code}"
            if code == 1:
                # The usual cause: a script without an `if __name__ == "__main__":` guard,
                # which each forkserver/spawn worker re-imports and re-runs.
                reason += "; if every task fails so, guard the calling script's entry point"
        return TaskFailure("WorkerCrashedError", f"the worker process died ({reason})")

    def close(self) -> None:
        """Stop every worker."""
        self._closed = True
        while self._idle:
            self._idle.pop().stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_POOLS: dict[tuple[int, int | None, tuple[str, ...]], WorkerPool] = {}
_POOLS_LOCK = threading.Lock()


def workers_can_start() -> bool:
    """Whether this process can start worker processes that run only what they are sent.

    Not in a daemonic process (it may have no children), and not under a main script without
    an `if __name__ == "__main__":` guard: a new worker (forkserver or spawn) runs the
    calling script again from its top, so an unguarded script would redo its own work in
    each worker, and its call into the pool would kill the worker. Callers then run their
    tasks in this process, without the pool's time limits and memory cap (a warning says
    so once, and how to get them back). An interactive session, `python -c` and a module run
    with `python -m` whose file has the guard are fine.
    """
    if multiprocessing.current_process().daemon:
        _warn_once(
            "a daemonic process may not start worker processes: running in this process, "
            "without the per-file time limit and memory cap"
        )
        return False
    return _main_is_guarded(_main_script())


@functools.cache
def _warn_once(message: str) -> None:
    _log.warning("%s", message)


def _main_script() -> str | None:
    """The file a new worker would run as the main module, or None for none."""
    main = sys.modules.get("__main__")
    if main is None:
        return None
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if name is not None:
        # `python -m package` runs `package.__main__`, which workers never run again.
        if name == "__main__" or name.endswith(".__main__"):
            return None
        origin = getattr(spec, "origin", None)
        return origin if isinstance(origin, str) else None
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return os.path.abspath(path)


@functools.lru_cache(maxsize=8)
def _main_is_guarded(path: str | None) -> bool:
    if path is None:
        return True
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return True  # nothing a worker could run again (a frozen or compiled entry point)
    if any(_is_main_guard(node) for node in tree.body):
        return True
    _warn_once(
        f"{path} has no `if __name__ == \"__main__\":` guard, so worker processes cannot be "
        "started for it (each would run the script again): running in this process, without "
        "the per-file time limit and memory cap. Put the script's calls under the guard to "
        "get them."
    )
    return False


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either side of the comparison)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity: a container's cpuset, `taskset`),
    which is what a worker pool can use; all of the machine's where affinity is unknown."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def is_process_alive(pid: int) -> bool:
    """True when a process with `pid` exists on this host (owned by anyone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, but belongs to another user
        return True
    return True


def shared_pool(*, workers: int, memory_mb: int | None, preload: Sequence[str] = ()) -> WorkerPool:
    """Return a process-wide pool for these settings, started on first use and kept warm
    between calls (closed at interpreter exit)."""
    key = (workers, memory_mb, tuple(preload))
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool._closed or pool._owner_pid != os.getpid():
            pool = WorkerPool(workers=workers, memory_mb=memory_mb, preload=preload)
            _POOLS[key] = pool
        return pool


def _close_pools() -> None:
    for pool in list(_POOLS.values()):
        if pool._owner_pid == os.getpid():
            pool.close()
    _POOLS.clear()


atexit.register(_close_pools)


def run_isolated(
    function: Callable[[T], R],
    item: T,
    *,
    timeout_s: float = 60.0,
    memory_mb: int | None = 2048,
) -> R | TaskFailure:
    """Run one task in a fresh single-worker pool (a convenience for one-off calls)."""
    with WorkerPool(workers=1, memory_mb=memory_mb, timeout_s=timeout_s) as pool:
        return pool.map(function, [item])[0]
