"""Shared fixtures: the sample inbox copied to a temp folder, a store under tmp_path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from content_core.store import ContentStore

# Hypothesis times each example (deadline, 200 ms) and its data generation (too_slow): both
# wall-clock checks that a loaded machine fails. Off for every property test of the suite.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

REPO = Path(__file__).resolve().parent.parent
SAMPLE_INBOX = REPO / "examples" / "inbox"


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    """A private copy of the sample inbox that a test may change."""
    target = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, target)
    return target


@pytest.fixture
def store(tmp_path: Path) -> ContentStore:
    """An empty content store under tmp_path."""
    return ContentStore(tmp_path / "store")


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden` rewrites the expected outputs under tests/golden/ (review the diff)."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files in tests/golden/ from the current output",
    )
