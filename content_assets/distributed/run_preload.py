"""Imported once by the run launcher's fork server (deploy/dagster-postgres.yaml names it in
`preload_modules`), and by a Celery worker when it is ready (content_assets.distributed.workers):
what every distributed batch run loaded on its own before its first step, about 0.2
CPU-seconds of each run (measured with cProfile in the run processes). Every run the server
starts inherits it.

- the clients: Postgres (dagster-postgres, psycopg2), Redis (kombu's transport, Celery's result
  backend), and the Celery app and task modules dagster-celery builds its app from;
- the path library Dagster's instance reference uses (universal-pathlib and fsspec);
- the job's definitions, loaded through Dagster's own loading path, so that the module it
  imports on every load is loaded here too.

A module that is not installed is skipped, and a load that fails is logged: the fork server
must start anyway, and a run then loads what it needs itself, or fails with its own error.
"""

import importlib
import logging

from dagster._core.definitions.reconstruct import ReconstructableRepository

_MODULES = (
    "dagster_postgres",
    "psycopg2.extras",
    "kombu.transport.redis",
    "celery.backends.redis",
    "celery.fixups.django",
    "celery.loaders.app",
    "celery.worker",
    "dagster_celery.tasks",
    "upath.core",
    "upath.implementations.local",
)

for _name in _MODULES:
    try:
        importlib.import_module(_name)
    except ImportError:  # an extra that is not installed: the runs that need it fail alone
        continue
try:
    ReconstructableRepository.for_module("content_assets.definitions", "defs").get_definition()
except Exception:  # noqa: BLE001
    logging.getLogger(__name__).warning("the run preload could not load the definitions",
                                        exc_info=True)
