"""Fixtures shared by the asset tests."""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
import pytest


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    """A throwaway instance that can hold dynamic partitions (an ephemeral one cannot)."""
    with dg.instance_for_test() as test_instance:
        yield test_instance
