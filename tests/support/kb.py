"""A small knowledge base for the `data` part tests: files ingested up to chunks into a store."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from content_core.chunking import ChunkingConfig
from content_core.discovery import discover_pending
from content_core.pipeline import build_chunks, build_normalised_artifacts, build_raw_files
from content_core.pipeline.config import ProcessingConfig
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore


def ingest_files(root: Path, files: Mapping[str, Path], source_id: str = "docs") -> ContentStore:
    """A store under `root` holding `files` (name in the source: file to copy) as one batch of
    source `source_id`, through raw_files, normalised_artifacts and chunks."""
    folder = root / source_id
    for name, path in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, folder / name)
    store = ContentStore(root / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id=source_id)
    (batch_id,) = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0).batch_ids
    build_raw_files(store, batch_id)
    build_normalised_artifacts(store, batch_id, ProcessingConfig(isolate=False))
    build_chunks(store, batch_id, ChunkingConfig())
    return store
