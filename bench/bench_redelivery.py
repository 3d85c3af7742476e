"""How long a killed worker's task waits before another worker runs it, with the workers'
default visibility timeout (or `--visibility-s`), and that a live worker's task longer than
that timeout runs once. Two workers of the real app on a private redis-server:

    .venv/bin/python bench/bench_redelivery.py [--visibility-s 90]

Prints the seconds from the SIGKILL to the other worker's start of the same task.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from celery import Celery  # noqa: E402

from tests.support.distributed import running_workers  # noqa: E402
from tests.support.services import running_redis  # noqa: E402

SLOW_TASK = "tests.slow_task"


def _lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def _wait_lines(log: Path, count: int, timeout_s: float) -> float:
    deadline = time.monotonic() + timeout_s
    while len(_lines(log)) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{log}: {count} start(s) not seen in {timeout_s} s")
        time.sleep(0.1)
    return time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--visibility-s", type=float, default=None, help="default: the app's")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_redis() as redis:
        work = Path(tmp)
        env = {**os.environ, "PYTHONPATH": str(REPO), "CONTENT_CELERY_BROKER": redis.url(0),
               "CONTENT_WORKERS": "1"}
        env.pop("DAGSTER_HOME", None)
        env.pop("CONTENT_CELERY_VISIBILITY_TIMEOUT_S", None)
        if args.visibility_s is not None:
            env["CONTENT_CELERY_VISIBILITY_TIMEOUT_S"] = str(args.visibility_s)
        visibility_s = args.visibility_s or 90.0
        client = Celery(broker=redis.url(0), backend=redis.url(0))
        log = work / "starts.log"
        with running_workers(
            ["w1", "w2"], env, work / "logs", app="tests.support.slow_tasks"
        ) as workers:
            long_s = visibility_s * 2.5
            result = client.send_task(SLOW_TASK, args=[long_s, str(log)], queue="dagster")
            result.get(timeout=long_s * 3)
            print(f"live worker, task of {long_s:.0f} s (timeout {visibility_s:.0f} s): "
                  f"started {len(_lines(log))} time(s)")
            log = work / "killed.log"
            result = client.send_task(SLOW_TASK, args=[5.0, str(log)], queue="dagster")
            _wait_lines(log, 1, 120)
            time.sleep(5.0 * 0.5)  # mid-task
            killed_at = time.monotonic()
            {w.name: w for w in workers}[_lines(log)[0]].kill()
            again_at = _wait_lines(log, 2, visibility_s * 3)
            result.get(timeout=60)
            print(f"killed worker: the other worker started its task "
                  f"{again_at - killed_at:.1f} s after the kill")


if __name__ == "__main__":
    main()
