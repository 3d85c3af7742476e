"""describe_changes and last_discovery: what discoveries found, read back from the manifests as
a person is told (renames paired by content, over several batches), and since when."""

from __future__ import annotations

from pathlib import Path

from content_core.discovery import (
    ChangeReport,
    Rename,
    describe_changes,
    discover_pending,
    last_discovery,
)
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore


def _discover(folder: Path, store: ContentStore, max_batch_files: int = 100) -> tuple[str, ...]:
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="t")
    found = discover_pending(source, store, set(), settle_s=0.0, max_batch_files=max_batch_files)
    return found.discovered


def test_changes_by_kind_with_renames_paired_by_content(tmp_path: Path) -> None:
    folder, store = tmp_path / "in", ContentStore(tmp_path / "store")
    folder.mkdir()
    assert describe_changes(store, []) == ChangeReport()
    assert last_discovery(store, "t") is None  # no batch yet
    for name, text in (("a.txt", "QCHG alpha"), ("b.txt", "QCHG bravo"), ("c.txt", "QCHG c")):
        (folder / name).write_text(text, encoding="utf-8")
    first = _discover(folder, store)
    assert describe_changes(store, first) == ChangeReport(added=("a.txt", "b.txt", "c.txt"))
    at = last_discovery(store, "t")
    assert at is not None and at.tzinfo is not None

    (folder / "a.txt").rename(folder / "z.txt")  # same bytes, new path: a rename
    (folder / "b.txt").write_text("QCHG bravo, longer now", encoding="utf-8")
    (folder / "c.txt").unlink()
    (folder / "d.txt").write_text("QCHG delta", encoding="utf-8")
    # One change per batch: the rename's deletion and addition land in different batches and
    # are still paired, since the report reads all of them.
    later = _discover(folder, store, max_batch_files=1)
    assert len(later) == 5  # a rename is a deletion and an addition in the manifests
    assert describe_changes(store, later) == ChangeReport(
        added=("d.txt",),
        modified=("b.txt",),
        deleted=("c.txt",),
        renamed=(Rename(old="a.txt", new="z.txt"),),
    )
    assert describe_changes(store, later).total == 4
    newest = last_discovery(store, "t")
    assert newest is not None and newest >= at
