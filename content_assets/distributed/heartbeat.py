"""A live worker's hold on the tasks it has taken: how a killed worker's step goes to another
worker within the visibility timeout (90 s by default) while a live worker's long step is
never handed out a second time.

Redis keeps every task a worker has taken and not yet acknowledged (late acks) in a sorted set,
scored with the time it was taken (kombu's `unacked_index`); every few seconds a worker gives
back the tasks whose score is older than the visibility timeout. That timeout alone cannot tell
a dead worker from a slow step: short, and a step longer than it runs twice; long (kombu's
hour), and a dead worker's step waits that long. So each worker renews the score of the tasks
it holds every sixth of the timeout, from a thread of its own: a live worker's task stays
young however long its step runs, and a dead worker's task ages out one timeout after its
last renewal. Renewal only updates a task that is still held (ZADD XX), so a task given back
or acknowledged meanwhile is never brought back.
"""

import logging
import threading
import time
from typing import Any

from celery import Celery
from redis.exceptions import RedisError

# Renewals per visibility timeout: a missed one or two (a busy Redis) hand nothing out.
RENEWALS_PER_TIMEOUT = 6

_log = logging.getLogger(__name__)


class TaskHold:
    """The delivery tags this worker holds, renewed in Redis until each task has run."""

    def __init__(self, app: Celery, visibility_timeout_s: float) -> None:
        self._app = app
        self._interval_s = visibility_timeout_s / RENEWALS_PER_TIMEOUT
        self._tags: dict[str, str] = {}  # task id -> delivery tag
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def hold(self, task_id: str, delivery_tag: str) -> None:
        """Renew `delivery_tag` until `release(task_id)`."""
        with self._lock:
            self._tags[task_id] = delivery_tag

    def release(self, task_id: str) -> None:
        """Stop renewing the task's tag (it has run; the ack follows)."""
        with self._lock:
            self._tags.pop(task_id, None)

    def start(self) -> None:
        """Start the renewing thread (a daemon thread: it dies with the worker)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._renew, name="task-hold", daemon=True)
            self._thread.start()

    def _renew(self) -> None:
        # A connection of this thread's own: kombu's are not shared between threads.
        with self._app.connection_for_write() as connection:
            channel: Any = connection.default_channel  # Any: kombu's Redis channel is untyped
            if not hasattr(channel, "unacked_index_key"):
                return  # not a Redis broker: nothing to renew
            while True:
                time.sleep(self._interval_s)
                with self._lock:
                    tags = list(self._tags.values())
                if not tags:
                    continue
                try:
                    now = time.time()
                    channel.client.zadd(
                        channel.unacked_index_key, dict.fromkeys(tags, now), xx=True
                    )
                except (RedisError, OSError):  # a Redis hiccup: the next renewal retries
                    _log.warning("could not renew the hold on %d task(s)", len(tags))
