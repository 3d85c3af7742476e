"""Submitting the batch job's runs to the instance's run queue (`ingest --executor celery`):
the daemon launches them, as it launches the sensor's, and their steps go to the Celery workers.

This is what `dagster job launch -m content_assets.definitions -j ingest_batch_job` does
(dagster._cli.job.execute_launch_command: create the run with the job's code origin, then
`DagsterInstance.submit_run`), without loading a workspace: that command starts a code server
for the module only to read back the origins built here. The origins name the code location
as the daemon's workspace does (`-m content_assets.definitions`, or workspace.yaml's module),
so a run submitted here is one the daemon dequeues and the UI shows like any other. The public
alternative, dagster-graphql's `DagsterGraphQLClient.submit_job_execution`, needs a running
webserver and its address; this needs only the instance, which the CLI has already.
"""

from collections.abc import Mapping

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableRepository
from dagster._core.remote_origin import (
    InProcessCodeLocationOrigin,
    RemoteJobOrigin,
    RemoteRepositoryOrigin,
)
from dagster._core.run_coordinator import QueuedRunCoordinator
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._daemon.controller import get_daemon_statuses

# Where the daemon (and every run's process) loads the definitions from: workspace.yaml's
# python_module, whose location Dagster names after the module.
DEFINITIONS_MODULE = "content_assets.definitions"
DEFINITIONS_ATTRIBUTE = "defs"
# The repository Dagster makes of a module's `Definitions`.
_REPOSITORY = "__repository__"
# The daemon that takes runs from the queue (QueuedRunCoordinatorDaemon.daemon_type()).
_QUEUE_DAEMON = "QUEUED_RUN_COORDINATOR"


class RunQueueError(RuntimeError):
    """The instance has no run queue for a daemon to take submitted runs from."""


def check_run_queue(instance: dg.DagsterInstance) -> None:
    """Raise RunQueueError unless `instance` queues submitted runs (QueuedRunCoordinator, as
    deploy/dagster-postgres.yaml configures) and a daemon takes them from there (its recent
    heartbeat in the instance, as the UI's "Daemons" page reads it): else the runs would wait
    in the queue for nobody."""
    where = instance.root_directory
    if not isinstance(instance.run_coordinator, QueuedRunCoordinator):
        raise RunQueueError(
            f"the Dagster instance in {where} has no run queue "
            f"({type(instance.run_coordinator).__name__}): --executor celery needs one, as "
            "deploy/dagster-postgres.yaml configures, and a running dagster-daemon"
        )
    status = get_daemon_statuses(instance, [_QUEUE_DAEMON], ignore_errors=True)[_QUEUE_DAEMON]
    if not status.healthy:
        raise RunQueueError(
            f"no dagster-daemon takes runs from the run queue of the Dagster instance in {where} "
            "(no recent heartbeat): start `dagster-daemon run -m content_assets.definitions` "
            "with the same DAGSTER_HOME and CONTENT_EXECUTOR=celery"
        )


def submit_batch_run(
    instance: dg.DagsterInstance,
    job: dg.JobDefinition,
    batch_id: str,
    run_config: Mapping[str, object],
) -> str:
    """Create the run of `job` for partition `batch_id` and put it on `instance`'s run queue;
    its id. The daemon launches it with its own environment: the store and the source the run
    uses are the ones `run_config` names (resource config), the executor the daemon's
    CONTENT_EXECUTOR."""
    recon_job = ReconstructableRepository.for_module(
        DEFINITIONS_MODULE, DEFINITIONS_ATTRIBUTE
    ).get_reconstructable_job(job.name)
    location = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name=DEFINITIONS_MODULE, attribute=DEFINITIONS_ATTRIBUTE),
        location_name=DEFINITIONS_MODULE,
    )
    remote_origin = RemoteJobOrigin(
        repository_origin=RemoteRepositoryOrigin(location, _REPOSITORY), job_name=job.name
    )
    run = instance.create_run_for_job(
        job_def=job,
        run_config=run_config,
        tags={"dagster/partition": batch_id},
        remote_job_origin=remote_origin,
        job_code_origin=recon_job.get_python_origin(),
    )
    # The queued coordinator only records the run as queued; it never reads the workspace
    # (the daemon loads its own when it dequeues the run).
    instance.submit_run(run.run_id, workspace=None)  # type: ignore[arg-type]
    return run.run_id
