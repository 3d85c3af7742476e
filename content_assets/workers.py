"""The Celery app of the batch job's workers, configured from the same environment variables
as the job's executor (content_assets.executors):

    celery -A content_assets.workers worker --hostname w1@%h --queues dagster

Every worker needs what a step needs: this package, the Dagster instance's settings
(DAGSTER_HOME, the DAGSTER_POSTGRES_* variables), the store (CONTENT_STORE_DIR, a path every
worker reaches) and the resources' variables and secrets (OPENAI_API_KEY, ...), because a step
loads content_assets.definitions in the worker from the worker's own environment.
"""

import os

from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from content_assets.executors import worker_app_args

# dagster-celery's functions carry no annotations; these are the calls its own `app` module makes.
executor = CeleryExecutor.for_cli(**worker_app_args(os.environ))  # type: ignore[no-untyped-call]
app = make_app(executor.app_args())  # type: ignore[no-untyped-call]
execute_plan = create_task(app)  # type: ignore[no-untyped-call]
