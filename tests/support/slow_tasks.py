"""The workers' Celery app (its settings, and its hold on the tasks a worker runs) with one
more task that only takes time, to tell a slow step from a dead worker:

    celery -A tests.support.slow_tasks worker --queues dagster ...
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from content_assets.distributed.workers import app

SLOW_TASK = "tests.slow_task"


# Any: Celery's bound task. Celery's decorator is untyped.
@app.task(bind=True, name=SLOW_TASK)  # type: ignore[untyped-decorator]
def slow_task(self: Any, seconds: float, log: str) -> str:
    """Append this worker's name to `log`, wait `seconds`, return the name."""
    name = str(self.request.hostname).split("@")[0]
    with Path(log).open("a", encoding="utf-8") as out:
        out.write(name + "\n")
    time.sleep(seconds)
    return name
