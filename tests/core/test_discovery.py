"""Discovery: every change found once, batches capped, state kept in the store."""

from __future__ import annotations

import os
from pathlib import Path

from content_core.ingest.discovery import discover, discover_pending
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore


def _source(folder: Path) -> LocalFolderSource:
    return LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="t")


def _changes(store: ContentStore, batch_id: str) -> dict[str, str]:
    rows = store.read_manifest(batch_id).to_pylist()
    return {row["path"]: row["change"] for row in rows}


def test_first_pass_adds_everything_and_second_finds_nothing(
    inbox: Path, store: ContentStore
) -> None:
    first = discover(_source(inbox), store)
    assert first.batch is not None
    assert set(_changes(store, first.batch.batch_id).values()) == {"added"}
    assert len(first.batch.entries) == len(list(inbox.iterdir()))
    second = discover(_source(inbox), store)
    assert second.batch is None and not second.has_more


def test_added_modified_with_old_mtime_and_deleted(inbox: Path, store: ContentStore) -> None:
    discover(_source(inbox), store)
    (inbox / "new.txt").write_text("a new file")
    target = inbox / "plain.txt"
    old = target.stat()
    target.write_text("same old timestamps, different bytes " * 3)
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    (inbox / "notes.md").unlink()
    result = discover(_source(inbox), store)
    assert result.batch is not None
    assert _changes(store, result.batch.batch_id) == {
        "new.txt": "added",
        "plain.txt": "modified",
        "notes.md": "deleted",
    }


def test_touch_without_new_bytes_is_not_a_change(inbox: Path, store: ContentStore) -> None:
    discover(_source(inbox), store)
    target = inbox / "plain.txt"
    target.write_bytes(target.read_bytes())  # same bytes, new mtime and ctime
    assert discover(_source(inbox), store).batch is None


def test_rename_is_delete_plus_add_of_known_bytes(inbox: Path, store: ContentStore) -> None:
    first = discover(_source(inbox), store)
    blobs_before = {p.name for p in store.blobs.root.rglob("*") if p.is_file()}
    (inbox / "plain.txt").rename(inbox / "renamed.txt")
    result = discover(_source(inbox), store)
    assert result.batch is not None and first.batch is not None
    assert _changes(store, result.batch.batch_id) == {
        "plain.txt": "deleted",
        "renamed.txt": "added",
    }
    assert {p.name for p in store.blobs.root.rglob("*") if p.is_file()} == blobs_before


def test_batches_are_capped_and_the_rest_follow(tmp_path: Path, store: ContentStore) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(25):
        (folder / f"f{number:02d}.txt").write_text(f"file {number}")
    found = discover_pending(_source(folder), store, set(), max_batch_files=10)
    assert [len(store.read_manifest(b)) for b in found.batch_ids] == [10, 10, 5]
    assert found.new_batch_ids == found.batch_ids and not found.has_more


def test_unrequested_batches_are_found_again(inbox: Path, store: ContentStore) -> None:
    """A trigger that crashed after discovery still gets the batch on its next call."""
    first = discover(_source(inbox), store)
    assert first.batch is not None
    again = discover_pending(_source(inbox), store, set())
    assert again.discovered == () and again.batch_ids == (first.batch.batch_id,)
    known = discover_pending(_source(inbox), store, {first.batch.batch_id})
    assert known.new_batch_ids == () and known.batch_ids == (first.batch.batch_id,)


def test_hidden_files_and_symlinks_are_skipped(inbox: Path, store: ContentStore) -> None:
    (inbox / ".hidden").write_text("secret")
    (inbox / "link.txt").symlink_to(inbox / "plain.txt")
    result = discover(_source(inbox), store)
    assert result.batch is not None
    paths = {e.path for e in result.batch.entries}
    assert ".hidden" not in paths and "link.txt" not in paths
