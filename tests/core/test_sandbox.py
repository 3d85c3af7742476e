"""WorkerPool: isolation, time limits, memory caps, crashes, and warm reuse."""

from __future__ import annotations

import os
import signal
import time

import pytest

from content_core.errors import EncryptedPdfError
from content_core.sandbox import TaskFailure, WorkerPool, report_progress, run_isolated


# Task functions live at module level: workers import them by name.
def square(value: int) -> int:
    return value * value


def pid_of_worker(_: int) -> int:
    return os.getpid()


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def raise_typed(_: int) -> None:
    raise EncryptedPdfError("locked.pdf: needs a password")


def raise_bug(_: int) -> None:
    raise KeyError("a bug, not a content error")


def die_hard(_: int) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def started_at(_: int) -> int:
    return time.monotonic_ns()


def steps(task: tuple[int, float, bool]) -> int:
    """`count` steps of `seconds` each, reporting each one done when `report` is set."""
    count, seconds, report = task
    for _ in range(count):
        time.sleep(seconds)
        if report:
            report_progress()
    return count


def allocate(mebibytes: int) -> int:
    block = bytearray(mebibytes * 1024 * 1024)
    return len(block)


@pytest.fixture(scope="module")
def pool() -> WorkerPool:
    with WorkerPool(workers=2, memory_mb=512, timeout_s=20) as shared:
        yield shared


def test_results_come_back_in_input_order(pool: WorkerPool) -> None:
    assert pool.map(square, list(range(20))) == [n * n for n in range(20)]


def test_largest_tasks_start_first_and_results_keep_input_order() -> None:
    # One worker runs the tasks one after another, in the order the pool hands them out.
    sizes = [3.0, 50.0, 1.0, 20.0]
    with WorkerPool(workers=1, memory_mb=512, timeout_s=20) as single:
        starts = single.map(started_at, [0, 1, 2, 3], sizes=sizes)
    times = [start for start in starts if isinstance(start, int)]
    assert len(times) == 4, starts
    assert sorted(range(4), key=times.__getitem__) == [1, 3, 0, 2]


def test_content_errors_become_typed_failures(pool: WorkerPool) -> None:
    [failure, value] = pool.map(raise_typed, [0]) + pool.map(square, [3])
    assert failure == TaskFailure("EncryptedFileError", "locked.pdf: needs a password")
    assert value == 9


def test_unexpected_exceptions_are_reported_not_fatal(pool: WorkerPool) -> None:
    [failure] = pool.map(raise_bug, [0])
    assert isinstance(failure, TaskFailure) and failure.error_type == "UnexpectedError.KeyError"


def test_timeout_kills_only_that_task(pool: WorkerPool) -> None:
    # The long task would sleep an hour: its WorkerTimeoutError (not 3600.0), within this
    # test's time limit, shows the pool killed it instead of waiting. The limit of 10 s leaves
    # the quick tasks room on a loaded machine.
    results = pool.map(sleep_for, [0.0, 3600.0, 0.1, 0.0], timeout_s=10.0)
    assert isinstance(results[1], TaskFailure) and results[1].error_type == "WorkerTimeoutError"
    assert results[0] == 0.0 and results[2] == 0.1 and results[3] == 0.0


def test_a_limit_is_per_step_for_a_task_that_reports_its_steps(pool: WorkerPool) -> None:
    # Six steps of 1 s under a 3 s limit: the task that reports each step done is given its
    # limit again each time and finishes; the one that does not is stopped at 3 s.
    reported, silent = pool.map(steps, [(6, 1.0, True), (6, 1.0, False)], timeout_s=3.0)
    assert reported == 6
    assert isinstance(silent, TaskFailure) and silent.error_type == "WorkerTimeoutError"


def test_any_limit_is_clamped_to_what_a_wait_can_take(pool: WorkerPool) -> None:
    # 300 s per chunk times 16,000 chunks: a wait of millions of seconds overflowed poll()
    # (OverflowError: timeout is too large) and failed the whole batch.
    assert pool.map(square, [2, 3], timeout_s=300.0 * 16_000 * 1_000) == [4, 9]
    assert report_progress() is None  # outside a worker: nothing to tell


def test_a_dead_worker_is_replaced(pool: WorkerPool) -> None:
    results = pool.map(die_hard, [0]) + pool.map(square, [4, 5])
    assert isinstance(results[0], TaskFailure)
    assert results[0].error_type == "WorkerCrashedError"
    assert "SIGKILL" in results[0].message
    assert results[1:] == [16, 25]


def test_memory_cap_is_enforced(pool: WorkerPool) -> None:
    [over, under] = pool.map(allocate, [2048, 16])
    assert isinstance(over, TaskFailure)
    assert over.error_type in ("WorkerMemoryError", "WorkerCrashedError")
    assert under == 16 * 1024 * 1024


def test_workers_are_long_lived(pool: WorkerPool) -> None:
    first = set(pool.map(pid_of_worker, list(range(8))))
    second = set(pool.map(pid_of_worker, list(range(8))))
    assert first == second and os.getpid() not in first and len(first) <= 2


def test_many_small_tasks_share_the_warm_workers(pool: WorkerPool) -> None:
    """Small tasks are cheap because no task starts a process: 500 of them run on the pool's
    two workers (counted, not timed)."""
    pids = pool.map(pid_of_worker, list(range(500)))
    assert len(pids) == 500 and len(set(pids)) <= 2 and os.getpid() not in pids


def test_run_isolated() -> None:
    assert run_isolated(square, 7, timeout_s=30) == 49
