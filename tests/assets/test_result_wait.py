"""A distributed run's orchestrator notices a finished step through the Redis result channel
Celery publishes on, instead of reading every step in flight on a timer (ResultWait), on a
real Redis server with Celery's own clients on both sides."""

from __future__ import annotations

import time

import pytest
import redis

from content_assets.executors import BROKER_ENV, TICK_S, ResultWait, worker_app_args
from tests.support.services import RedisServer

pytestmark = pytest.mark.timeout(120)

_WAIT_S = 30.0


def _get_calls(client: redis.Redis) -> int:
    """GET commands the server has run so far (how a result is read from the backend)."""
    return int(client.info("commandstats").get("cmdstat_get", {}).get("calls", 0))


def _subscribers(client: redis.Redis, channel: str) -> int:
    return int(dict(client.pubsub_numsub(channel)).get(channel.encode(), 0))


def test_a_finished_step_is_read_from_its_result_channel(redis_server: RedisServer) -> None:
    from celery import Celery
    from dagster_celery import core_execution_loop

    wait = ResultWait.install()
    assert ResultWait.install() is wait, "a second install must not wrap the loop again"
    args = worker_app_args({BROKER_ENV: redis_server.url(3)})
    # The app the orchestration loop makes (through the wrapped make_app), and the worker's.
    app = core_execution_loop.make_app(args)  # type: ignore[attr-defined]
    worker = Celery("worker", **args)
    client = redis.Redis.from_url(redis_server.url(3), socket_timeout=_WAIT_S)

    step = app.send_task("content.test_step", queue="content-test")
    channel = f"celery-task-meta-{step.id}"
    assert _subscribers(client, channel) == 1, "the orchestrator listens for the step's result"

    reads = _get_calls(client)
    wait.sleep(0.2)  # the step is still queued: the wait reads nothing
    assert _get_calls(client) == reads

    worker.backend.store_result(step.id, "done", "SUCCESS")  # what the worker does at the end
    wait.sleep(TICK_S)
    # Celery lets go of a channel once it has read a ready result from it: only the wait read.
    deadline = time.monotonic() + _WAIT_S
    while _subscribers(client, channel) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _subscribers(client, channel) == 0, "the published result was not read"
    assert step.ready()
    assert step.get(timeout=_WAIT_S) == "done"
    app.close()
    worker.close()

