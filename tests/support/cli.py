"""Running the real `content-pipeline` command in tests: a sample folder with a long value,
and the command in a subprocess whose stdout is a pipe."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SAMPLE_INBOX

REPO = Path(__file__).resolve().parents[2]
# Longer than any terminal column, with the characters CSV and Markdown must escape.
LONG_TEXT = (
    "QCLI-LONG-START "
    + ", ".join(f'item {n} "quoted" | piped' for n in range(40))
    + " QCLI-LONG-END"
)


def make_folder(root: Path, name: str) -> Path:
    """A copy of the sample inbox plus `long.txt` holding LONG_TEXT."""
    folder = root / name
    shutil.copytree(SAMPLE_INBOX, folder)
    (folder / "long.txt").write_text(LONG_TEXT + "\n", encoding="utf-8")
    return folder


def run_cli(
    *args: str, home: Path, store: Path | None, cwd: Path = REPO, **env: str
) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess whose stdout is a pipe (not a terminal); `store` is
    CONTENT_STORE_DIR (unset when None), `home` DAGSTER_HOME, `env` more variables."""
    environ = {k: v for k, v in os.environ.items() if k != "CONTENT_STORE_DIR"}
    environ.update(PYTHONPATH=str(REPO), DAGSTER_HOME=str(home), **env)
    if store is not None:
        environ["CONTENT_STORE_DIR"] = str(store)
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "content_assets.cli", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        encoding="utf-8",
        timeout=600,
    )


def status_of(store: Path, home: Path) -> str:
    """What `content-pipeline status` prints (it must succeed)."""
    done = run_cli("status", home=home, store=store)
    assert done.returncode == 0, done.stderr
    return done.stdout


def main_imports(argv: list[str], modules: tuple[str, ...]) -> str:
    """`<exit code> [<those of modules imported>]` after `main(argv)` in a fresh interpreter."""
    code = (
        "import sys\n"
        "from content_assets.cli import main\n"
        f"code = main({argv!r})\n"
        f"print(code, sorted(m for m in {modules!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        encoding="utf-8",
        timeout=300,
    )
    lines = done.stdout.splitlines()
    return lines[-1] if lines else done.stdout + done.stderr
