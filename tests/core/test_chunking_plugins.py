"""A third-party chunker installed beside the project is loaded through the entry point group
`content_pipeline.chunkers`: the pipeline accepts its name, the launchpad offers it, its own options
model checks its options, and a plug-in that cannot load is logged and skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "tests" / "fixtures" / "chunker_plugin"

PROBE = r"""
import json
import logging

logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s %(message)s")

from content_assets.resources import ChunkerResource
from content_core.chunking import ChunkingConfig, build_chunker, get_chunker, list_chunkers

config = ChunkingConfig(chunker="lines", options={"lines_per_chunk": 2})
chunks = build_chunker(config).chunk("one\ntwo\nthree\nfour\nfive\n")
try:
    ChunkingConfig(chunker="lines", options={"lines_per_chunk": "many"})
    bad_option = None
except ValueError as exc:
    bad_option = str(exc)
launchpad = ChunkerResource.to_config_schema().as_field().config_type.fields["chunker"]
choices = [v.config_value for v in launchpad.config_type.inner_type.enum_values]
print(json.dumps({
    "names": list_chunkers(),
    "launchpad": choices,
    "chunks": [c.content for c in chunks],
    "keyword_form": [
        c.content for c in get_chunker("lines", lines_per_chunk=3).chunk("a\nb\nc\nd\n")
    ],
    "resource": ChunkerResource(chunker="lines").to_core().chunker,
    "bad_option": bad_option,
}))
"""


def install(package: Path, target: Path) -> None:
    """Lay `package` out in `target` as `pip install --target` does: its module and a
    dist-info folder whose entry_points.txt comes from the package's pyproject.toml."""
    project = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for module in tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["py-modules"]:
        shutil.copy(package / f"{module}.py", target / f"{module}.py")
    dist = target / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {value}" for name, value in entries.items())
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.mark.timeout(600)  # a Dagster import in a fresh process on a loaded machine
def test_an_installed_chunker_plugin_is_offered_and_used(tmp_path: Path) -> None:
    target = tmp_path / "site"
    target.mkdir()
    install(PLUGIN, target)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["names"][-1] == "lines" and "broken" not in report["names"]
    assert report["launchpad"] == report["names"]
    assert report["chunks"] == ["one\ntwo\n", "three\nfour\n", "five\n"]
    assert report["keyword_form"] == ["a\nb\nc\n", "d\n"]
    assert report["resource"] == "lines"
    assert "lines_per_chunk" in report["bad_option"]
    # The broken plug-in is named in the log, and the others still load.
    assert "chunker plug-in 'broken'" in done.stderr and "skipped" in done.stderr


def test_without_plugins_only_the_built_in_chunkers_are_offered() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from content_core.chunking import list_chunkers; print(list_chunkers())",
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert "lines" not in done.stdout and "markdown" in done.stdout
