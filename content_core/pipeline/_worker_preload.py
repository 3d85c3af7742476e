"""Imported once by the worker pool's fork server (`processing.WORKER_PRELOAD`), and by nothing
else: every worker the server forks starts with what this module loads, shared copy-on-write,
instead of loading its own copy during its first tasks.

It loads every format's handler module, the parsers those handlers import on first use, the
tokeniser, the default chunker and estimator, and the offline embedding model. Each worker
used to spend about 0.65 CPU-seconds on these per run (`bench/bench_ingest.py`). A parser from
an extra that is not installed is skipped here, and fails where a task needs it, as before.
"""

import importlib
import logging
from collections.abc import Callable

from content_core.embeddings import EmbedderConfig
from content_core.errors import MissingDependencyError
from content_core.formats import default_formats
from content_core.pipeline.pool import warm_worker

# The parsers the format handlers import inside their functions (cheap imports for the
# process that only plans); the ones every ingest of mixed files meets.
_PARSERS = (
    "charset_normalizer",
    "extract_msg",
    "lxml.etree",
    "markdown_it",
    "numpy",
    "olefile",
    "pillow_heif",
    "pypdf",
    "pypdfium2",
    "resvg_py",
)


def _parsers() -> None:
    for name in _PARSERS:
        try:
            importlib.import_module(name)
        except ImportError:  # an extra that is not installed
            continue


def _models() -> None:
    try:
        warm_worker(EmbedderConfig(kind="wordllama"))
    except MissingDependencyError:  # no embeddings extra: the tokeniser is loaded all the same
        warm_worker(None)


_STEPS: tuple[Callable[[], object], ...] = (default_formats, _parsers, _models)

for _step in _STEPS:
    # The fork server must start whatever fails here (a broken install): the task that needs
    # the piece then fails with its own typed error, as it did before anything was preloaded.
    try:
        _step()
    except Exception:  # noqa: BLE001
        logging.getLogger(__name__).warning("worker preload step failed", exc_info=True)
