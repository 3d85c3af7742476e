"""Where the content store and the Dagster instance live, resolved the same way for every
command and for the definitions the UI loads.

In order: what the command is given (`--store`, `--home`), else the environment
(CONTENT_STORE_DIR, DAGSTER_HOME), else the project's own folders when the current folder is
inside this checkout (`content_store/` and the checkout itself, whose dagster.yaml configures
the instance), else per-user folders (platformdirs: `~/.local/share/content-pipeline/` on
Linux). State never lands in whatever folder a command happens to be run from.

A Dagster home that this module makes, or finds empty, gets a dagster.yaml that turns
Dagster's telemetry and its first-visit dialog off; a home that has its own dagster.yaml is
left as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from content_core.store.layout import DEFAULT_STORE_DIR

__all__ = ["default_home", "default_store", "dagster_home", "project_root", "user_dir"]

_APP = "content-pipeline"
# The checkout this package is imported from (an editable install); it counts only when it is
# the project, with its instance configuration beside the packages.
_CHECKOUT = Path(__file__).resolve().parents[1]

INSTANCE_YAML = """\
# Written by content-pipeline for a Dagster home it made: Dagster's defaults (SQLite storage
# in this folder), without telemetry and without the UI's first-visit dialog.
telemetry:
  enabled: false
nux:
  enabled: false
"""


def project_root() -> Path | None:
    """This checkout when the current folder is inside it, else None."""
    if not (_CHECKOUT / "dagster.yaml").is_file() or not (_CHECKOUT / "pyproject.toml").is_file():
        return None
    here = Path.cwd().resolve()
    return _CHECKOUT if here == _CHECKOUT or _CHECKOUT in here.parents else None


def user_dir() -> Path:
    """The per-user folder for state made outside the project."""
    return platformdirs.user_data_path(_APP)


def default_store() -> Path:
    """The store when neither `--store` nor CONTENT_STORE_DIR names one."""
    root = project_root()
    return (root if root is not None else user_dir()) / DEFAULT_STORE_DIR


def default_home() -> Path:
    """The Dagster home when neither `--home` nor DAGSTER_HOME names one."""
    root = project_root()
    return root if root is not None else user_dir() / "dagster_home"


def dagster_home(given: Path | None = None) -> Path:
    """The Dagster home (`given`, else DAGSTER_HOME, else `default_home()`), made if missing
    and configured if empty; DAGSTER_HOME is set to it for Dagster to read."""
    configured = os.environ.get("DAGSTER_HOME")
    home = (given or (Path(configured) if configured else default_home())).expanduser().resolve()
    # Dagster refuses a home that does not exist yet (a traceback): make it.
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists() and not any(home.iterdir()):
        (home / "dagster.yaml").write_text(INSTANCE_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return home
