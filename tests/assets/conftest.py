"""Fixtures shared by the asset tests."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import dagster as dg
import pytest

from tests.support.services import RedisServer, redis_server_bin, running_redis


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    """A throwaway instance that can hold dynamic partitions (an ephemeral one cannot)."""
    with dg.instance_for_test() as test_instance:
        yield test_instance


@pytest.fixture(autouse=True)
def _fresh_defs_state_storage() -> Iterator[None]:
    """Each test starts with no current definitions-state storage, and leaves none behind.

    Entering a DagsterInstance makes its storage current through a context variable, and
    exiting resets the variable to what it was at entry. A context built without an instance
    (Dagster then enters an ephemeral one) exits it only when the context is garbage collected:
    if that happens during a later test, the reset brings back a storage whose instance is gone,
    and the next `Definitions` resolved outside an instance fails with "Attempted to resolve
    undefined DagsterInstance weakref". Collecting at the end of each test runs such exits
    while the test that caused them is still the current one.
    """
    # The setter is not exported by dagster; its module is the one place the variable lives.
    from dagster._core.storage.defs_state.base import set_defs_state_storage

    with set_defs_state_storage(None):
        yield
        gc.collect()


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A private `redis-server` on 127.0.0.1 for the module's tests."""
    if redis_server_bin() is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    with running_redis() as server:
        yield server
