"""Discovery: what changed in a source since the last batch, pinned as batch manifests (the
file list, content hashes and change kinds one run ingests), shared by the sensor, the schedule,
the CLI and `RAG.index`. Names resolve lazily: the definitions import this package in every run
process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from content_core._lazy import lazy_exports

if TYPE_CHECKING:
    from content_core.discovery.changes import ChangeReport as ChangeReport
    from content_core.discovery.changes import Rename as Rename
    from content_core.discovery.changes import describe_changes as describe_changes
    from content_core.discovery.changes import last_discovery as last_discovery
    from content_core.discovery.config import DiscoveryConfig as DiscoveryConfig
    from content_core.discovery.discover import BatchManifest as BatchManifest
    from content_core.discovery.discover import ManifestEntry as ManifestEntry
    from content_core.discovery.discover import PendingBatches as PendingBatches
    from content_core.discovery.discover import discover_pending as discover_pending
    from content_core.discovery.discover import record_bytes as record_bytes

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals())
