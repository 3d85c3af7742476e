"""A distributed run's orchestrator notices a finished step through the Redis result channel
Celery publishes on, instead of reading every step in flight on a timer (ResultWait), on a
real Redis server with Celery's own clients on both sides; and the executor that waits so is
the one CONTENT_EXECUTOR=celery builds (CONTENT_CELERY_RESULT_WAIT=poll: dagster-celery's)."""

from __future__ import annotations

import time

import dagster as dg
import pytest
import redis

from content_assets.distributed.executors import (
    BROKER_ENV,
    EXECUTOR_ENV,
    RESULT_WAIT_ENV,
    build_executor,
    worker_app_args,
)
from content_assets.distributed.result_wait import TICK_S, ChannelCeleryExecutor, ResultWait
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
    from dagster_celery.make_app import make_app

    args = worker_app_args({BROKER_ENV: redis_server.url(3)})
    # The app the orchestration loop makes (dagster-celery's make_app), and the worker's.
    app = make_app(args)
    wait = ResultWait(app)
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


@pytest.mark.parametrize(
    ("wait", "channel"), [("", True), ("channel", True), ("poll", False)],
    ids=["default", "channel", "poll"],
)
def test_the_celery_executor_waits_as_configured(wait: str, channel: bool) -> None:
    from dagster_celery.executor import CeleryExecutor

    environ = {EXECUTOR_ENV: "celery", BROKER_ENV: "redis://127.0.0.1:1/0", RESULT_WAIT_ENV: wait}
    definition = build_executor(environ)
    assert definition.executor_creation_fn is not None
    with dg.instance_for_test() as instance:
        # What Dagster passes once it has applied the configured executor's config.
        context = dg.InitExecutorContext(
            job=dg.reconstructable(_job),
            executor_def=definition,
            executor_config={"broker": "redis://127.0.0.1:1/0", "retries": {"enabled": {}}},
            instance=instance,
        )
        executor = definition.executor_creation_fn(context)
    assert isinstance(executor, ChannelCeleryExecutor if channel else CeleryExecutor)
    assert executor.retries.enabled


@dg.job
def _job() -> None:
    """A job for the executor's init context (never run)."""


def test_an_unknown_result_wait_is_refused() -> None:
    with pytest.raises(ValueError, match=RESULT_WAIT_ENV):
        build_executor({EXECUTOR_ENV: "celery", RESULT_WAIT_ENV: "sometimes"})
