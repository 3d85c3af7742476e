"""The Dagster UI in a real browser: Debian's headless Chromium, driven by Playwright, opens the
asset graph of the repository's definitions served by the real webserver on a Dagster home
configured as the CLI configures a new one (no first-visit dialog), reads an asset's row counts
and its column schema with each column's description, and launches one partition whose run
must succeed.

Screenshots of each step go to $CONTENT_TEST_ARTIFACTS/ui (else test-artifacts/ui), which CI
keeps. Playwright never downloads a browser here: it drives /usr/bin/chromium (or
$CONTENT_CHROMIUM), which `.ci/run` installs from Debian.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from content_assets.assets import ROWS_CURRENT, ROWS_WRITTEN
from content_assets.definitions import build_definitions
from content_assets.state import INSTANCE_YAML as NEW_HOME_YAML
from content_core.store import PIPELINE_TABLES, SCHEMAS, ContentStore, column_docs, row_model
from tests.support.sensors import tick_sensor
from tests.support.webserver import running_webserver

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("CONTENT_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(os.environ.get("CONTENT_TEST_ARTIFACTS") or REPO / "test-artifacts") / "ui"

# Generous, for a loaded 2-core machine: a page or an element (ms), and the launched run (ms).
STEP_TIMEOUT_MS = 120_000
RUN_TIMEOUT_MS = 480_000

# The home the CLI writes for a new instance (content_assets.state: telemetry and the
# first-visit dialog off), plus one setting: runs launched from the UI start at once (the
# default coordinator queues them for a daemon, which this test does not start, so the sensor
# stays quiet too).
INSTANCE_YAML = NEW_HOME_YAML + """\
run_coordinator:
  module: dagster._core.run_coordinator
  class: DefaultRunCoordinator
"""
# The first-visit dialog's heading (Dagster's CommunityNux), which would open over the page and
# take the clicks meant for the launch dialog.
NUX_HEADING = "Join the Dagster community"
# Chunk columns whose descriptions hold no Markdown (the UI renders descriptions as Markdown).
DESCRIBED = ("chunk_id", "source_start", "token_count")


def _missing_browser() -> str | None:
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM}: `apt-get install chromium` (as .ci/run does)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: `pip install -e '.[dev]'`"
    return None


def _require_browser() -> None:
    """Skip without Chromium or Playwright, except in CI, where the test fails instead."""
    missing = _missing_browser()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the UI browser test cannot run in CI: {missing}")
    pytest.skip(f"{missing} (CI is not set, so this test may skip here)")


@contextmanager
def _chromium() -> Iterator[Any]:
    """Headless Debian Chromium under Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield browser
        finally:
            browser.close()


def _ingest(inbox: Path, home: Path, store: ContentStore) -> str:
    """Discover `inbox` into one batch and materialise it on the instance at `home`."""
    defs = build_definitions(
        {
            "CONTENT_STORE_DIR": str(store.root),
            "CONTENT_SOURCE_DIR": str(inbox),
            "CONTENT_SOURCE_SETTLE_S": "0",
        }
    )
    with dg.DagsterInstance.from_config(str(home)) as instance:
        batch = tick_sensor(defs, instance, None).run_requests[0].partition_key
        job = defs.resolve_job_def("ingest_batch_job")
        assert job.execute_in_process(instance=instance, partition_key=batch).success
    return str(batch)


def _launched_run(instance: dg.DagsterInstance, earlier: set[str]) -> str:
    """The id of the one run the UI created since `earlier` was listed (waits for it)."""
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        new = [run.run_id for run in instance.get_runs() if run.run_id not in earlier]
        if new:
            assert len(new) == 1, new
            return new[0]
        time.sleep(1)
    raise AssertionError("no run was launched from the UI")


@pytest.mark.slow
@pytest.mark.timeout(1200)  # webserver start 240 s, pages 120 s each, the launched run 480 s
def test_ui_shows_assets_schema_and_runs_a_partition(inbox: Path, tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import expect

    # The project's own instance file turns the dialog off as the CLI's new homes do.
    project = yaml.safe_load((REPO / "dagster.yaml").read_text(encoding="utf-8"))
    assert project["nux"] == yaml.safe_load(INSTANCE_YAML)["nux"] == {"enabled": False}
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(INSTANCE_YAML)
    store = ContentStore(tmp_path / "store")
    batch = _ingest(inbox, home, store)
    chunk_rows = store.query("SELECT count(*) AS n FROM chunks").to_pylist()[0]["n"]
    assert chunk_rows > 0

    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CONTENT_", "OPENAI_"))},
        "DAGSTER_HOME": str(home),
        "CONTENT_STORE_DIR": str(store.root),
        "CONTENT_SOURCE_DIR": str(inbox),
        "CONTENT_SOURCE_SETTLE_S": "0",
    }
    with (
        running_webserver(env, log=ARTIFACTS / "webserver.log") as (base_url, _),
        dg.DagsterInstance.from_config(str(home)) as instance,
        _chromium() as browser,
    ):
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        # A trace of every step (open with `playwright show-trace`) beside the screenshots.
        context.tracing.start(screenshots=True, snapshots=True)
        page = context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        page.set_default_navigation_timeout(STEP_TIMEOUT_MS)
        try:
            # The UI asks the instance whether to show the first-visit dialog on its first
            # page; the answer decides it (a page on 127.0.0.1 that never dismissed it).
            with page.expect_response(
                lambda r: "ShouldShowNux" in (r.request.post_data or "")
            ) as nux:
                page.goto(f"{base_url}/asset-groups", wait_until="domcontentloaded")
            assert nux.value.json()["data"]["shouldShowNux"] is False
            for table in PIPELINE_TABLES:
                expect(page.get_by_text(table, exact=True).first).to_be_visible()
            expect(page.get_by_text(NUX_HEADING)).to_have_count(0)
            page.screenshot(path=ARTIFACTS / "1-asset-graph.png")

            page.goto(f"{base_url}/assets/chunks", wait_until="domcontentloaded")
            expect(page.get_by_text("Columns", exact=True).first).to_be_visible()
            for column in SCHEMAS["chunks"].names:
                expect(page.get_by_text(column, exact=True).first).to_be_visible()
            docs = column_docs(row_model("chunks"))
            for column in DESCRIBED:
                expect(page.get_by_text(docs[column], exact=True).first).to_be_visible()
            expect(page.get_by_text("content.main.chunks").first).to_be_visible()
            expect(page.get_by_text(NUX_HEADING)).to_have_count(0)
            page.screenshot(path=ARTIFACTS / "2-asset-chunks.png", full_page=True)

            # The latest materialisation's counts, named for what they count.
            page.goto(f"{base_url}/assets/chunks?view=events", wait_until="domcontentloaded")
            expect(page.get_by_text(ROWS_WRITTEN, exact=True).first).to_be_visible()
            body = page.inner_text("body")
            for label in (ROWS_WRITTEN, ROWS_CURRENT):
                shown = re.search(re.escape(label) + r"\s+([\d,]+)", body)
                assert shown and int(shown.group(1).replace(",", "")) == chunk_rows, label
            page.screenshot(path=ARTIFACTS / "3-asset-chunks-events.png", full_page=True)

            earlier_runs = {run.run_id for run in instance.get_runs()}
            page.goto(f"{base_url}/asset-groups", wait_until="domcontentloaded")
            page.get_by_role("button", name="Materialize all…").click()
            dialog = page.get_by_role("dialog")
            dialog.get_by_text("Select a partition or create one").click()
            # The list draws each name twice, once hidden to measure it.
            page.get_by_text(batch, exact=True).filter(visible=True).first.click()
            page.keyboard.press("Escape")  # closes the partition list, not the dialog
            expect(page.get_by_text(NUX_HEADING)).to_have_count(0)
            page.screenshot(path=ARTIFACTS / "4-launch-dialog.png")
            dialog.get_by_role("button", name="Launch 1 run").click()
            run_id = _launched_run(instance, earlier_runs)

            page.goto(f"{base_url}/runs/{run_id}", wait_until="domcontentloaded")
            expect(page.get_by_text(f"partition: {batch}").first).to_be_visible()
            expect(page.get_by_text("Success", exact=True).first).to_be_visible(
                timeout=RUN_TIMEOUT_MS
            )
            page.screenshot(path=ARTIFACTS / "5-run-succeeded.png")
        finally:
            page.screenshot(path=ARTIFACTS / "last-page.png")
            context.tracing.stop(path=ARTIFACTS / "trace.zip")
            context.close()
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert run.tags["dagster/partition"] == batch
