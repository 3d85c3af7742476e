"""Installing an example plug-in (examples/*_plugin) the way a user does, with pip, into a
private folder that a subprocess then puts on its PYTHONPATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(args: list[str], *, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`args` in a subprocess, its output captured, within ten minutes."""
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def pip_install_example(name: str, tmp_path: Path) -> Path:
    """Install `examples/<name>` into `<tmp_path>/site` and return that folder."""
    target = tmp_path / "site"
    # Built from a copy: setuptools writes build/ and *.egg-info next to the sources.
    source = shutil.copytree(REPO / "examples" / name, tmp_path / name)
    # No network and no build isolation: the venv's setuptools builds the example, and it
    # goes to a private folder instead of the shared environment.
    installed = run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--target", str(target), str(source)],
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert list(target.glob("*.dist-info/entry_points.txt"))
    return target
