"""The example format plug-in, installed with pip the way a user installs it, plugs `*.lorem`
files into a real CLI ingest: their text (after the `LOREM` line) is in
`current_normalised_artifacts`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from content_core.store import ContentStore
from tests.support.plugins import REPO, pip_install_example, run


def test_pip_installed_plugin_format_is_ingested_by_the_cli(tmp_path: Path) -> None:
    target = pip_install_example("format_plugin", tmp_path)

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "notes.lorem").write_bytes(
        b"LOREM\nlorem ipsum QLP1 dolor sit amet\nsecond line QLP2\n"
    )
    (inbox / "plain.txt").write_bytes(b"LOREMIPSUM is not the magic line QLP3\n")
    home = tmp_path / "dagster_home"
    home.mkdir()
    store_dir = tmp_path / "store"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(target), str(REPO)]),
        "DAGSTER_HOME": str(home),
        "CONTENT_STORE_DIR": str(store_dir),
    }
    ingest = run([sys.executable, "-m", "content_assets.cli", "ingest", str(inbox)],
                  env=env, cwd=REPO)
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    assert "FAILED" not in ingest.stdout

    rows = ContentStore(store_dir).query(
        "SELECT path, kind, media_type, text, error_type FROM current_normalised_artifacts "
        "ORDER BY path"
    ).to_pylist()
    by_path = {row["path"]: row for row in rows}
    lorem = by_path["notes.lorem"]
    assert (lorem["kind"], lorem["media_type"], lorem["error_type"]) == (
        "lorem", "text/x-lorem", None
    )
    assert lorem["text"] == "lorem ipsum QLP1 dolor sit amet\nsecond line QLP2"
    assert "LOREM\n" not in lorem["text"]
    # A first line that merely starts with LOREM is not the format: plain text, kept whole.
    plain = by_path["plain.txt"]
    assert (plain["kind"], plain["text"]) == ("text", "LOREMIPSUM is not the magic line QLP3")
