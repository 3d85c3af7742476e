"""Discovery: what changed in a source since the last batch, pinned as batch manifests (the
file list, content hashes and change kinds one run ingests), shared by the sensor, the schedule,
the CLI and `RAG.index`. Names resolve lazily: the definitions import this package in every run
process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.discovery.config import DiscoveryConfig
    from content_core.discovery.discover import (
        BatchManifest,
        ManifestEntry,
        PendingBatches,
        discover_pending,
        record_bytes,
    )

_EXPORTS: dict[str, str] = {
    "BatchManifest": "content_core.discovery.discover",
    "DiscoveryConfig": "content_core.discovery.config",
    "ManifestEntry": "content_core.discovery.discover",
    "PendingBatches": "content_core.discovery.discover",
    "discover_pending": "content_core.discovery.discover",
    "record_bytes": "content_core.discovery.discover",
}

__all__ = [
    "BatchManifest",
    "DiscoveryConfig",
    "ManifestEntry",
    "PendingBatches",
    "discover_pending",
    "record_bytes",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
