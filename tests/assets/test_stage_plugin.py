"""The example stage plug-in, installed with pip the way a user installs it: its `word_counts`
table is an asset of the definitions with its checks, in the ingest job, written by a real
`content-pipeline ingest`, and read through its `current_word_counts` view."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import duckdb
import pytest

from content_core.store import ContentStore
from tests.support.plugins import REPO, pip_install_example, run

pytestmark = pytest.mark.timeout(900)


def test_pip_installed_stage_is_an_asset_and_a_table_the_cli_writes(tmp_path: Path) -> None:
    target = pip_install_example("stage_plugin", tmp_path)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(target), str(REPO)]),
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "CONTENT_STORE_DIR": str(tmp_path / "store"),
    }
    (tmp_path / "dagster_home").mkdir()

    # The definitions have the asset, after the table it reads, with its checks, in the job.
    described = run(
        [sys.executable, "-c",
         "import json\n"
         "from content_assets.definitions import defs\n"
         "graph = defs.resolve_asset_graph()\n"
         "key = next(k for k in graph.get_all_asset_keys()\n"
         "           if k.to_user_string() == 'word_counts')\n"
         "node = graph.get(key)\n"
         "job = defs.resolve_job_def('ingest_batch_job')\n"
         "print(json.dumps({'deps': sorted(p.to_user_string() for p in node.parent_keys),\n"
         "  'checks': sorted(c.name for c in node.check_keys),\n"
         "  'in_job': 'word_counts' in {n.name for n in job.nodes}}))"],
        env=env, cwd=REPO,
    )
    assert described.returncode == 0, described.stderr
    asset = json.loads(described.stdout.strip().splitlines()[-1])
    assert asset == {
        "deps": ["normalised_artifacts"],
        "checks": [
            "word_counts_cover_documents",
            "word_counts_failure_ratio",
            "word_counts_unique_keys",
        ],
        "in_job": True,
    }

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "three.txt").write_text("one two three\n", encoding="utf-8")
    (inbox / "five.md").write_text("# Title\n\nfour more words here\n", encoding="utf-8")
    ingest = run([sys.executable, "-m", "content_assets.cli", "ingest", str(inbox)],
                  env=env, cwd=REPO)
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    assert "word_counts" in ingest.stdout

    # The view is there for whoever has the plug-in installed: the CLI's query here.
    query = run(
        [sys.executable, "-m", "content_assets.cli", "query", "--format", "csv",
         "SELECT path, words FROM current_word_counts ORDER BY path"],
        env=env, cwd=REPO,
    )
    assert query.returncode == 0, query.stderr
    assert query.stdout.split() == ["path,words", "five.md,6", "three.txt,3"]
    # And the catalog file a DuckDB client opens holds it too.
    catalog = ContentStore(tmp_path / "store").root / "content.duckdb"
    views = duckdb.connect(str(catalog), read_only=True).execute(
        "SELECT view_name FROM duckdb_views() WHERE view_name LIKE '%word_counts'"
    ).fetchall()
    assert sorted(v[0] for v in views) == ["current_word_counts", "word_counts"]
