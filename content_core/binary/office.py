"""Office converters: render word-processing, spreadsheet and presentation files to PDF.

`LibreOfficeConverter` runs `soffice --headless` in a private scratch folder with a timeout;
`GotenbergConverter` posts to a Gotenberg sidecar; `NoOpOfficeConverter` converts nothing (the
original passes through and native text extraction still applies).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing.util
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Protocol, runtime_checkable

from content_core.binary.config import BinaryConfig
from content_core.errors import MissingDependencyError, OfficeConversionError
from content_core.formats import NormaliseStep, default_formats
from content_core.sandbox import is_process_alive

__all__ = [
    "OFFICE_MEDIA_TYPES",  # noqa: F822 - derived in __getattr__
    "GotenbergConverter",
    "LibreOfficeConverter",
    "NoOpOfficeConverter",
    "OfficeConverter",
    "build_office_converter",
]

def __getattr__(name: str) -> frozenset[str]:
    # OFFICE_MEDIA_TYPES (a seed name) is derived from the formats that declare the
    # render-to-PDF step, so it is computed on first use rather than kept by hand.
    if name == "OFFICE_MEDIA_TYPES":
        return default_formats().media_types(NormaliseStep.RENDER_OFFICE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _office_extension(media_type: str) -> str | None:
    """The extension a renderer needs to pick its import filter: inputs are named by their
    sniffed type, never by the (untrusted) file name."""
    fmt = default_formats().get(media_type)
    if fmt is None or fmt.normalise is not NormaliseStep.RENDER_OFFICE:
        return None
    return fmt.extension


@runtime_checkable
class OfficeConverter(Protocol):
    """Renders an Office document to PDF bytes; returns None when it does not convert."""

    name: str

    async def convert(
        self, data: bytes, *, media_type: str, filename: str | None = None
    ) -> bytes | None:
        """Return PDF bytes for `data`, or None for a pass-through converter."""
        ...


class NoOpOfficeConverter:
    """The default: no rendering, the Office file passes through unchanged."""

    name = "none"

    async def convert(
        self, data: bytes, *, media_type: str, filename: str | None = None
    ) -> bytes | None:
        """Return None: nothing is converted."""
        return None


class LibreOfficeConverter:
    """Convert with a local `soffice --headless`, one process per document, with a timeout.

    Each converter keeps one LibreOffice profile folder (first start-up of a fresh profile costs
    seconds) and runs one conversion at a time, since soffice processes sharing a profile
    interfere. Inputs and outputs live in a private temporary folder that is always removed.
    """

    name = "libreoffice"

    def __init__(self, *, soffice_path: str = "soffice", timeout_s: float = 120.0) -> None:
        self.soffice_path = soffice_path
        self.timeout_s = timeout_s
        self._profile: Path | None = None
        self._locks: dict[int, asyncio.Lock] = {}

    def available(self) -> bool:
        """True when the soffice executable can be found."""
        return shutil.which(self.soffice_path) is not None

    async def convert(
        self, data: bytes, *, media_type: str, filename: str | None = None
    ) -> bytes | None:
        """Return the PDF rendering of `data`.

        Raises:
            MissingDependencyError: soffice is not installed.
            OfficeConversionError: soffice failed, produced nothing, or ran past the timeout.
        """
        executable = shutil.which(self.soffice_path)
        if executable is None:
            raise MissingDependencyError(
                f"LibreOffice ({self.soffice_path}) is not installed; "
                "apt-get install libreoffice-writer libreoffice-calc libreoffice-impress"
            )
        extension = _office_extension(media_type)
        if extension is None:
            raise OfficeConversionError(f"{filename or media_type}: not an Office type")
        loop_key = id(asyncio.get_running_loop())
        lock = self._locks.setdefault(loop_key, asyncio.Lock())
        async with lock:
            return await self._run(executable, data, extension, filename or "document")

    async def _run(self, executable: str, data: bytes, extension: str, name: str) -> bytes:
        if self._profile is None or not self._profile.exists():
            _sweep_stale_folders()
            self._profile = Path(tempfile.mkdtemp(prefix=f"{_PROFILE_PREFIX}{os.getpid()}-"))
            # Worker processes end through os._exit, which skips atexit; multiprocessing's
            # finalizers do run there.
            multiprocessing.util.Finalize(
                self,
                shutil.rmtree,
                args=(str(self._profile),),
                kwargs={"ignore_errors": True},
                exitpriority=10,
            )
        scratch = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-"))
        try:
            source = scratch / f"input{extension}"
            source.write_bytes(data)
            out_dir = scratch / "out"
            out_dir.mkdir()
            command = [
                *_child_setup_prefix(),
                executable,
                "--headless",
                "--norestore",
                "--nologo",
                "--nodefault",
                "--nolockcheck",
                "--nofirststartwizard",
                f"-env:UserInstallation={self._profile.as_uri()}",
                "--convert-to",
                "pdf",
                "--outdir",
                str(out_dir),
                str(source),
            ]
            env = {**os.environ, "HOME": str(scratch)}
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=scratch,
                env=env,
                start_new_session=True,
            )
            try:
                _, stderr = await asyncio.wait_for(process.communicate(), self.timeout_s)
            except TimeoutError as exc:
                _kill_group(process.pid)
                await process.wait()
                raise OfficeConversionError(
                    f"{name}: LibreOffice ran past {self.timeout_s:.0f} s"
                ) from exc
            finally:
                if process.returncode is None:
                    _kill_group(process.pid)
            produced = out_dir / "input.pdf"
            if process.returncode != 0 or not produced.is_file():
                detail = stderr.decode("utf-8", "replace").strip()[-300:]
                raise OfficeConversionError(
                    f"{name}: LibreOffice failed (exit {process.returncode}): {detail or 'no PDF'}"
                )
            return produced.read_bytes()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def close(self) -> None:
        """Remove the profile folder."""
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: best effort only
            self.close()


_PROFILE_PREFIX = "cc-soffice-profile-"
_SCRATCH_PREFIX = "cc-soffice-scratch-"


def _sweep_stale_folders() -> None:
    """Remove profile and scratch folders left by processes that were killed (a worker past
    its time limit gets SIGKILL and cannot clean up)."""
    root = Path(tempfile.gettempdir())
    for prefix in (_PROFILE_PREFIX, _SCRATCH_PREFIX):
        for folder in root.glob(f"{prefix}*"):
            owner = folder.name[len(prefix) :].split("-", 1)[0]
            if not owner.isdigit() or is_process_alive(int(owner)):
                continue
            shutil.rmtree(folder, ignore_errors=True)


def _child_setup_prefix() -> list[str]:
    """Commands that soffice is exec'ed through: util-linux `prlimit` lifts the worker's soft
    memory cap (LibreOffice maps far more address space than it uses) and `setpriv` makes it
    die with its parent. Exec wrappers instead of a `preexec_fn`, which would run Python in a
    child forked from a process that may run threads (and could deadlock there). A missing
    tool is skipped: the timeout still kills the process group, the sweep its folders."""
    import resource

    prefix: list[str] = []
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    prlimit = shutil.which("prlimit")
    if soft != hard and prlimit is not None:
        limit = "unlimited" if hard == resource.RLIM_INFINITY else str(hard)
        prefix += [prlimit, f"--as={limit}:{limit}", "--"]
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        prefix += [setpriv, "--pdeathsig", "KILL", "--"]
    return prefix


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class GotenbergConverter:
    """Convert through a Gotenberg server (`POST /forms/libreoffice/convert`)."""

    name = "gotenberg"

    def __init__(self, *, url: str = "http://127.0.0.1:3000", timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    async def convert(
        self, data: bytes, *, media_type: str, filename: str | None = None
    ) -> bytes | None:
        """Return the PDF Gotenberg renders for `data`.

        Raises:
            OfficeConversionError: the server is unreachable, times out, answers with an error
                or with something that is not a PDF.
        """
        import httpx

        extension = _office_extension(media_type)
        if extension is None:
            raise OfficeConversionError(f"{filename or media_type}: not an Office type")
        name = filename or "document"
        files = {"files": (f"document{extension}", data, media_type)}
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, trust_env=False) as client:
                response = await client.post(f"{self.url}/forms/libreoffice/convert", files=files)
        except httpx.TimeoutException as exc:
            raise OfficeConversionError(f"{name}: Gotenberg timed out ({exc})") from exc
        except httpx.HTTPError as exc:
            raise OfficeConversionError(f"{name}: Gotenberg unreachable ({exc})") from exc
        if response.status_code != 200:
            raise OfficeConversionError(
                f"{name}: Gotenberg answered {response.status_code}: {response.text[:200]}"
            )
        if not response.content.startswith(b"%PDF-"):
            raise OfficeConversionError(f"{name}: Gotenberg did not return a PDF")
        return response.content


def build_office_converter(config: BinaryConfig) -> OfficeConverter:
    """Return the converter named by `config.office_converter`."""
    if config.office_converter == "gotenberg":
        return GotenbergConverter(url=config.gotenberg_url, timeout_s=config.gotenberg_timeout_s)
    if config.office_converter == "libreoffice":
        return LibreOfficeConverter(
            soffice_path=config.libreoffice_path, timeout_s=config.libreoffice_timeout_s
        )
    return NoOpOfficeConverter()
