"""DiscoveryConfig: how much one discovery pins into a batch and how long an entry must stay
unchanged before it is read (the one home of both defaults)."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DiscoveryConfig"]


class DiscoveryConfig(BaseModel):
    """Discovery settings, read by `discover_pending`, the source resources and the CLI.

    `settle_s` is 2 s for every discovery of a live source: a sensor or a schedule polls a
    folder that someone may still be copying into, and an entry whose status changed less than
    `settle_s` ago is left for the next pass instead of being pinned half-written. A one-shot
    caller that knows its files are complete (the `ingest` command, a script that has just
    written them) passes `settle_s=0` explicitly: it has no next pass to leave an entry to, and
    an entry that changes while it is read is refused either way.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_batch_files: int = Field(default=2000, ge=1)
    settle_s: float = Field(default=2.0, ge=0.0)

    def fingerprint(self) -> str:
        """A short hash of every setting."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()[:16]
