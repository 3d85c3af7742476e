"""The worker pool's configuration, shared by every stage that uses the pool: what normalisation
runs under (limits, OCR, the per-file time and memory) and how many worker processes it has."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

from content_core.binary.config import BinaryConfig
from content_core.ocr import OcrConfig
from content_core.sandbox import available_cores

__all__ = ["WORKER_PRELOAD", "ProcessingConfig"]

# What the pool's fork server imports once, so that every worker starts with it: the normalise
# stage's worker side,
# the text stages that run in the same pool after it (content_core.pipeline.pool), and the
# parsers, tokeniser and embedding model they load (content_core.pipeline._worker_preload).
WORKER_PRELOAD = (
    "content_core.pipeline.stages.normalised_artifacts.worker",
    "content_core.pipeline.pool",
    "content_core.pipeline._worker_preload",
)

class ProcessingConfig(BaseModel):
    """How raw files are processed: normalisation limits plus isolation settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    binary: BinaryConfig = BinaryConfig()
    ocr: OcrConfig = OcrConfig()
    timeout_s: float = Field(default=60.0, gt=0)
    memory_mb: int = Field(default=2048, ge=256)
    # One worker process per core the process is given.
    workers: int = Field(default_factory=available_cores, ge=1)
    isolate: bool = True

    def fingerprint(self) -> str:
        """Return a short hash of the settings that can change the output records.

        `workers` and `isolate` only change how the work is scheduled, so they are left out.
        """
        payload = self.model_dump_json(include={"binary", "ocr", "timeout_s", "memory_mb"})
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
