"""Private PostgreSQL and Redis servers for tests, from Debian's packages (`postgresql`,
`redis-server`): each on 127.0.0.1 and a free port, with its data in a temporary folder,
started with a timeout on every wait and stopped on exit.

PostgreSQL refuses to run as root, so as root `initdb` and `postgres` run as the `postgres`
user that Debian's package creates (subprocess's `user=`), in a folder owned by it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.webserver import free_port

__all__ = [
    "PostgresServer",
    "RedisServer",
    "postgres_bin",
    "redis_server_bin",
    "running_postgres",
    "running_redis",
]

_START_TIMEOUT_S = 120.0
_STOP_TIMEOUT_S = 60.0
_PG_USER = "postgres"


def postgres_bin() -> Path | None:
    """The folder of `initdb` and `postgres`: on PATH, else Debian's newest
    /usr/lib/postgresql/N/bin (Debian keeps them off PATH); None when not installed."""
    found = shutil.which("initdb")
    if found and shutil.which("postgres"):
        return Path(found).resolve().parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3])
    )
    return Path(versions[-1]).parent if versions else None


def redis_server_bin() -> Path | None:
    """`redis-server`, or None when not installed."""
    found = shutil.which("redis-server")
    return Path(found) if found else None


@dataclass(frozen=True, slots=True)
class PostgresServer:
    """A running server: where it listens and the superuser that may create databases."""

    host: str
    port: int
    user: str
    password: str

    def env(self, db_name: str) -> dict[str, str]:
        """The DAGSTER_POSTGRES_* variables deploy/dagster-postgres.yaml reads."""
        return {
            "DAGSTER_POSTGRES_HOST": self.host,
            "DAGSTER_POSTGRES_PORT": str(self.port),
            "DAGSTER_POSTGRES_USER": self.user,
            "DAGSTER_POSTGRES_PASSWORD": self.password,
            "DAGSTER_POSTGRES_DB": db_name,
        }

    def create_database(self, name: str) -> None:
        """Create an empty database `name`."""
        import psycopg2

        connection = psycopg2.connect(
            host=self.host, port=self.port, user=self.user, password=self.password,
            dbname="postgres", connect_timeout=10,
        )
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            connection.close()


@dataclass(frozen=True, slots=True)
class RedisServer:
    """A running Redis: its URL for a given database number."""

    port: int

    def url(self, db: int = 0) -> str:
        """redis://127.0.0.1:PORT/DB."""
        return f"redis://127.0.0.1:{self.port}/{db}"


def _as_postgres() -> dict[str, object]:
    # Root may not run PostgreSQL; any other user runs it as itself.
    if os.geteuid() != 0:
        return {}
    return {"user": _PG_USER, "group": pwd.getpwnam(_PG_USER).pw_gid}


def _stop(process: subprocess.Popen[bytes], stop: signal.Signals) -> None:
    if process.poll() is None:
        process.send_signal(stop)
        try:
            process.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=_STOP_TIMEOUT_S)


@contextmanager
def _serving(
    command: list[str],
    ready: Callable[[], bool],
    log: Path,
    stop: signal.Signals = signal.SIGTERM,
    **user: object,
) -> Iterator[None]:
    """Run `command` (its output to `log`) until the block ends, once `ready()` says so; then
    send it `stop`."""
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, **user  # type: ignore[call-overload]
        )
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not ready():
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited {process.returncode}: {log.read_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} not ready in {_START_TIMEOUT_S} s")
            time.sleep(0.2)
        yield
    finally:
        _stop(process, stop)


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """initdb into a fresh folder, start `postgres` on 127.0.0.1 and a free port (no fsync:
    test data), wait until it accepts a login, stop it on exit."""
    import psycopg2

    bindir = postgres_bin()
    assert bindir is not None, "PostgreSQL is not installed"
    # Not under pytest's tmp_path: its parent is private to root, and postgres must enter it.
    root = Path(tempfile.mkdtemp(prefix="content-pg-"))
    as_postgres = _as_postgres()
    try:
        if as_postgres:
            shutil.chown(root, user=_PG_USER, group=_PG_USER)
        password = "content-test"
        (root / "pwfile").write_text(password + "\n")
        if as_postgres:
            shutil.chown(root / "pwfile", user=_PG_USER, group=_PG_USER)
        server = PostgresServer("127.0.0.1", free_port(), "content", password)
        subprocess.run(
            [str(bindir / "initdb"), "-D", str(root / "data"), "-U", server.user, "-E", "UTF8",
             "--pwfile", str(root / "pwfile"), "--auth", "scram-sha-256", "--no-sync"],
            check=True, capture_output=True, timeout=_START_TIMEOUT_S,
            **as_postgres,  # type: ignore[arg-type]
        )

        def ready() -> bool:
            try:
                psycopg2.connect(
                    host=server.host, port=server.port, user=server.user,
                    password=server.password, dbname="postgres", connect_timeout=5,
                ).close()
            except psycopg2.OperationalError:
                return False
            return True

        command = [
            str(bindir / "postgres"), "-D", str(root / "data"), "-h", server.host,
            "-p", str(server.port), "-k", str(root), "-c", "fsync=off",
            "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            "-c", "max_connections=200",
        ]
        # SIGINT: PostgreSQL's fast shutdown, which ends the sessions still open (a SIGTERM
        # waits for every client to disconnect).
        with _serving(command, ready, root / "postgres.log", signal.SIGINT, **as_postgres):
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def running_redis() -> Iterator[RedisServer]:
    """Start `redis-server` on 127.0.0.1 and a free port without persistence, wait for PING,
    stop it on exit."""
    import redis

    binary = redis_server_bin()
    assert binary is not None, "redis-server is not installed"
    root = Path(tempfile.mkdtemp(prefix="content-redis-"))
    server = RedisServer(free_port())
    command = [
        str(binary), "--bind", "127.0.0.1", "--port", str(server.port), "--save", "",
        "--appendonly", "no", "--dir", str(root), "--daemonize", "no",
    ]

    def ready() -> bool:
        try:
            return bool(redis.Redis.from_url(server.url(), socket_timeout=5).ping())
        except redis.RedisError:
            return False

    try:
        with _serving(command, ready, root / "redis.log"):
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)
