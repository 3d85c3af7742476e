"""process_files: normalise raw files and extract their text, isolated per file.

This is the library entry point behind the `normalised_artifacts` asset. Each raw file is
normalised (sniff, guards, conversions, unpacking) and every document artifact gets its text,
in a worker process with a memory cap and a time limit. A file, or a member of one, that fails
becomes a record with `error_type` set; the rest of the batch goes on. The records themselves
(`ArtifactRecord`) are made in `content_core.pipeline.stages.normalised_artifacts.records`.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from content_core.binary import media_types as mt
from content_core.binary.artifact import kind_for
from content_core.binary.config import BinaryConfig
from content_core.binary.normalizer import BinaryNormalizer, failure_id
from content_core.binary.office import OfficeConverter, build_office_converter
from content_core.binary.pdf_handles import PdfHandles
from content_core.binary.sniff import sniff_file, sniff_media_type
from content_core.errors import ContentError, EmptyFileError
from content_core.logs import configure_logging, library_notes
from content_core.ocr import OcrConfig, OcrRun, PageClaimed, VlmBudget, new_budget_file
from content_core.pipeline.config import WORKER_PRELOAD, ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.records import (
    TEXT_STATUSES,
    ArtifactRecord,
    error_record,
    records_of,
)
from content_core.sandbox import (
    TaskFailure,
    run_task,
    shared_pool,
    workers_can_start,
)
from content_core.store import StoreLayout
from content_core.store.blobs import BlobStore, sha256_hex
from content_core.store.storage import open_storage

__all__ = [
    "TEXT_STATUSES",
    "ArtifactRecord",
    "FileInput",
    "process_files",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

class FileInput(BaseModel):
    """One raw file to process: the caller's key, where its bytes are, and hints.

    `sha256` and `media_type` are what the caller already knows of the bytes (the `raw_files`
    row has both): given, they are carried onto the records and never worked out again; the
    raw file's record is then identified by `sha256` even when its worker dies.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    path: Path
    filename: str
    declared_type: str | None = None
    sha256: str | None = None
    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class _Task:
    item: FileInput
    binary: BinaryConfig
    blob_root: Path
    ocr: OcrConfig = OcrConfig()
    timeout_s: float = ProcessingConfig().timeout_s
    # The object-store root the blobs are PUT to (`s3://...`), when the store is on one.
    blob_remote: str | None = None
    # Come back to the file later (`_Deferred`) rather than wait for a page another process
    # is reading (OcrRun.defer_claimed).
    defer_claimed: bool = False
    # The caller's log level, which a worker process takes on (so the CLI's -v reaches it);
    # None when the task runs in the caller's process, whose logging is the caller's.
    log_level: int | None = None
    # The batch's count of requests to the vision-language model, when that route is on.
    vlm_budget: VlmBudget | None = None


@dataclass(frozen=True, slots=True)
class _Deferred:
    """A task's answer when its file met a page that another process was reading."""


def process_files(
    inputs: Sequence[FileInput],
    config: ProcessingConfig,
    *,
    blob_store: BlobStore,
) -> list[list[ArtifactRecord]]:
    """Return, for each input in order, its records: the raw file first, then its renditions,
    members and attachments (recursively).

    Every artifact's bytes are written to `blob_store`. Never raises for a bad file: the file
    (or member) becomes records with `error_type` set. With `config.isolate` each file runs in
    a worker process of a warm pool under `memory_mb` and `timeout_s`; a worker that is killed
    turns into a "worker"-stage failure record for that file only.
    """
    binary = _within_file_limit(config)
    remote = blob_store.remote.location if blob_store.remote is not None else None
    if not inputs:
        return []
    isolate = config.isolate
    if isolate and not workers_can_start():
        # A daemonic process or an unguarded script (see `workers_can_start`): run here.
        _log.debug("process_files: no worker processes here, running without isolation")
        isolate = False
    log_level = logging.getLogger().getEffectiveLevel() if isolate else None
    budget = None
    if config.ocr.vlm.enabled:
        # One count per call, so a batch's worker processes share the cap on requests.
        folder = StoreLayout.of_blobs(Path(blob_store.root)).cache("ocr")
        budget = VlmBudget(new_budget_file(folder), config.ocr.vlm.max_pages_per_batch)
    tasks = [_Task(item, binary, Path(blob_store.root), config.ocr, config.timeout_s, remote,
                   defer_claimed=True, log_level=log_level, vlm_budget=budget)
             for item in inputs]
    try:
        return _run_tasks(tasks, config, isolate)
    finally:
        if budget is not None:
            budget.path.unlink(missing_ok=True)


def _run_tasks(
    tasks: list[_Task], config: ProcessingConfig, isolate: bool
) -> list[list[ArtifactRecord]]:
    """Each task's records, in order: run in the pool (or here), deferred files once more."""

    def run(todo: list[_Task]) -> list[list[ArtifactRecord] | _Deferred | TaskFailure]:
        if not isolate:
            # The same boundary as a worker process: what a file raises becomes its failure.
            return [run_task(_process_task, task) for task in todo]
        pool = shared_pool(
            workers=config.workers,
            memory_mb=config.memory_mb,
            preload=WORKER_PRELOAD,
        )
        # In input order, not largest first: copies of one scan sit apart, so the second
        # finds the first's OCR readings in the cache instead of reading the pages alongside.
        return pool.map(_process_task, todo, timeout_s=config.timeout_s)

    results = run(tasks)
    # A file with a page that another process (a worker of another batch) was reading went
    # to the back; by now that reading is usually in the cache. This time it waits for it.
    again = [index for index, result in enumerate(results) if isinstance(result, _Deferred)]
    if again:
        retried = run([replace(tasks[index], defer_claimed=False) for index in again])
        for index, result in zip(again, retried, strict=True):
            results[index] = result
    out: list[list[ArtifactRecord]] = []
    for task, result in zip(tasks, results, strict=True):
        assert not isinstance(result, _Deferred), "a file is deferred once at most"
        if isinstance(result, TaskFailure):
            out.append([_worker_failure(task.item, result)])
        else:
            out.append(result)
    return out


def _within_file_limit(config: ProcessingConfig) -> BinaryConfig:
    """Give Office renderers at most 3/4 of the per-file limit, so that a slow rendering fails
    as a recorded rendition failure while the document keeps its natively extracted text,
    instead of the worker being killed with everything in it."""
    budget = config.timeout_s * 0.75
    binary = config.binary
    if binary.libreoffice_timeout_s <= budget and binary.gotenberg_timeout_s <= budget:
        return binary
    return binary.model_copy(update={
        "libreoffice_timeout_s": min(binary.libreoffice_timeout_s, budget),
        "gotenberg_timeout_s": min(binary.gotenberg_timeout_s, budget),
    })


# ------------------------------------------------------------------------------ worker side

_CONVERTERS: dict[str, OfficeConverter] = {}


def _converter(config: BinaryConfig) -> OfficeConverter:
    """One converter per config per process: LibreOffice keeps its warm profile."""
    key = config.fingerprint()
    if key not in _CONVERTERS:
        _CONVERTERS[key] = build_office_converter(config)
    return _CONVERTERS[key]


def _process_task(task: _Task) -> list[ArtifactRecord] | _Deferred:
    """Process one raw file (runs in a worker); raises only for errors about the raw file
    that leave nothing to record but the error. What libraries log or warn meanwhile (a
    parser's complaints about the file) becomes notes of the raw file's record."""
    if task.log_level is not None:
        configure_logging(task.log_level)
    with library_notes() as heard:
        records = _process_file(task)
    if isinstance(records, _Deferred) or not records or not heard.notes:
        return records  # a deferred file is heard again when it is processed
    first = records[0]
    return [first.model_copy(update={"notes": first.notes + heard.notes}), *records[1:]]


def _process_file(task: _Task) -> list[ArtifactRecord] | _Deferred:
    started = time.monotonic()
    item = task.item
    try:
        size = item.path.stat().st_size
        if size > task.binary.max_bytes:
            # Refused before reading: identified by a streamed hash and a sniffed prefix.
            return [_worker_failure(item, TaskFailure(
                "LimitExceededError",
                f"{item.filename}: {size} bytes, over max_bytes={task.binary.max_bytes}",
            ), override_stage="sniff")]
        data = item.path.read_bytes()
    except OSError as exc:
        return [error_record(failure_id("", item.key, str(exc)), (), mt.OCTET_STREAM,
                              item.filename, "SourceError", f"cannot read {item.path}: {exc}",
                              "sniff")]
    raw_id = item.sha256 or sha256_hex(data)
    if not data:
        empty = EmptyFileError(f"{item.filename}: 0 bytes, nothing to extract")
        return [error_record(raw_id, (), mt.EMPTY, item.filename, empty.error_type,
                              empty.message, "sniff", kind=kind_for(mt.EMPTY))]
    store = BlobStore(
        task.blob_root, open_storage(task.blob_remote) if task.blob_remote else None
    )
    normalizer = BinaryNormalizer(config=task.binary, office=_converter(task.binary))
    # The PDFs the guard opens are read by the extraction from these handles (one parse per
    # document); whatever is still open when the file is done or fails is closed here.
    with PdfHandles() as pdfs:
        try:
            artifacts = _run_coroutine(
                normalizer.normalise(
                    data,
                    declared_media_type=item.declared_type,
                    filename=item.filename,
                    media_type=item.media_type,
                    sha256=raw_id,
                    pdfs=pdfs,
                )
            )
        except ContentError as exc:
            media_type = item.media_type or sniff_media_type(data, filename=item.filename)
            store.put(data, blob_id=raw_id)
            return [error_record(raw_id, (), media_type, item.filename, exc.error_type,
                                  exc.message, "normalise", kind=kind_for(media_type))]
        # OCR readings are cached beside the agents' cache (`<store>/cache/ocr`). Like Office
        # rendering, OCR gets 3/4 of the file's time limit, so a long scan keeps what was read.
        ocr = OcrRun(task.ocr, StoreLayout.of_blobs(task.blob_root).cache("ocr"),
                     started + 0.75 * task.timeout_s, defer_claimed=task.defer_claimed,
                     vlm_budget=task.vlm_budget)
        try:
            return records_of(artifacts, store, raw_id, task.binary, ocr, pdfs=pdfs)
        except PageClaimed:
            return _Deferred()


# Any: what a coroutine yields to and is sent by its loop, which only the loop sees.
def _run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on an event loop of its own, as `asyncio.run` does, minus the SIGINT
    handler `asyncio.run` puts up in a main thread: taking it down makes Python 3.11's
    `signal.getsignal` repr the handler, finished task and result included, and the result
    here holds every byte of the file's artifacts (2 ms a file on small PDFs, measured)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


# ------------------------------------------------------------------------------ parent side


@functools.cache
def _content_error_names() -> frozenset[str]:
    names: set[str] = set()
    pending: list[type[ContentError]] = [ContentError]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return frozenset(name for name in names if not name.startswith("Worker"))


def _identity(item: FileInput, failure: TaskFailure) -> tuple[str, str]:
    """The id and media type of a raw file nobody could process: the caller's when it gave
    them, else worked out here from the file (hashed in blocks, nothing parsed)."""
    artifact_id, media_type = item.sha256, item.media_type
    try:
        if artifact_id is None:
            with item.path.open("rb") as handle:
                artifact_id = hashlib.file_digest(handle, "sha256").hexdigest()
        if media_type is None:
            media_type = sniff_file(item.path, item.filename)
    except OSError:
        artifact_id = artifact_id or failure_id("", item.key, failure.message)
        media_type = media_type or mt.OCTET_STREAM
    return artifact_id, media_type


def _worker_failure(
    item: FileInput, failure: TaskFailure, *, override_stage: str | None = None
) -> ArtifactRecord:
    """The record of a file whose worker timed out or died (or that is over `max_bytes`),
    identified by what the caller knows of it, or else from its bytes without parsing."""
    artifact_id, media_type = _identity(item, failure)
    # Our own errors are facts about the file. Anything else (a time limit, a dead worker, an
    # exception nobody translated, a full disk) is marked "worker": callers treat those rows
    # as transient and retry them instead of caching them.
    stage = "normalise" if failure.error_type in _content_error_names() else "worker"
    stage = override_stage or stage
    return error_record(
        artifact_id, (), media_type, item.filename, failure.error_type, failure.message, stage,
        kind=kind_for(media_type),
    )
