"""Discovery: every change found once, batches capped, state kept in the store."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from content_core.ingest import discovery
from content_core.ingest.discovery import discover, discover_pending, known_state
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from tests.fixtures.names import ODD_NAMES, make_odd_folder
from tests.support.opened import files_opened_under


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


# -- scale, stale listings, files that change or vanish while read ---------------------------


def _many(folder: Path, count: int, *, per_folder: int = 250) -> None:
    for number in range(count):
        sub = folder / f"d{number // per_folder:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{number:05d}.txt").write_text(f"document {number}, customer {number % 7}\n")


def test_three_thousand_files_in_capped_batches_then_a_quick_quiet_pass(
    tmp_path: Path, store: ContentStore
) -> None:
    folder = tmp_path / "many"
    _many(folder, 3000)
    # No time budget: on a loaded machine the default 40 s could end the pass early.
    found = discover_pending(
        _source(folder), store, set(), max_batch_files=400, time_budget_s=float("inf")
    )
    sizes = [len(store.read_manifest(b)) for b in found.batch_ids]
    assert sizes == [400] * 7 + [200] and not found.has_more
    paths = store.query("SELECT path, count(*) AS n FROM batches GROUP BY path").to_pylist()
    assert len(paths) == 3000 and {r["n"] for r in paths} == {1}  # every file recorded once
    with files_opened_under(folder) as opened:
        quiet = discover_pending(_source(folder), store, set(found.batch_ids))
    assert quiet.discovered == () and quiet.scanned == 3000
    assert opened == []  # quick because it reads no file: the listing and the store suffice


def test_time_budget_keeps_progress_in_the_store(tmp_path: Path, store: ContentStore) -> None:
    """A spent budget still pins one file per pass: progress is in the store, none repeats."""
    folder = tmp_path / "many"
    _many(folder, 12)
    passes = []
    while True:
        found = discover_pending(_source(folder), store, set(), time_budget_s=0.0)
        passes.append(found.discovered)
        if not found.has_more:
            break
        assert len(passes) <= 12
    assert [len(store.read_manifest(b)) for b in store.list_batches("t")] == [1] * 12
    counts = store.query("SELECT path, count(*) AS n FROM batches GROUP BY path").to_pylist()
    assert len(counts) == 12 and {r["n"] for r in counts} == {1}


def test_find_listing_equals_the_python_walk(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    _many(folder, 300, per_folder=40)
    (folder / ".hidden").write_text("x")
    (folder / "d000" / "link.txt").symlink_to(folder / "d000" / "f00000.txt")
    (folder / "name with spaces & ünïcode.txt").write_text("y")
    fast = _source(folder).stat_table()
    walked = LocalFolderSource(
        LocalFolderSourceConfig(folder=folder, exclude_predicate=lambda _: False), source_id="t"
    ).stat_table()
    assert fast.equals(walked) and fast.num_rows == 301
    first = fast.slice(0, 1).to_pylist()[0]
    info = (folder / first["path"]).stat()
    assert (first["mtime_ns"], first["ctime_ns"], first["inode"]) == (
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_ino,
    )


class _StaleSource(LocalFolderSource):
    """A source whose listing was taken before the test changed the folder."""

    def __init__(self, folder: Path, listing: pa.Table) -> None:
        super().__init__(LocalFolderSourceConfig(folder=folder), source_id="t")
        self.listing = listing

    def stat_table(self) -> pa.Table:
        return self.listing


def test_file_rewritten_after_listing_is_pinned_whole(inbox: Path, store: ContentStore) -> None:
    discover(_source(inbox), store)
    target = inbox / "plain.txt"
    target.write_text("version two of the minutes")
    listing = _source(inbox).stat_table()
    target.write_text("version three, written after the listing was taken")
    result = discover(_StaleSource(inbox, listing), store)
    assert result.batch is not None
    (entry,) = result.batch.entries
    assert entry.sha256 == hashlib.sha256(target.read_bytes()).hexdigest()
    assert entry.mtime_ns == target.stat().st_mtime_ns
    assert discover(_source(inbox), store).batch is None  # nothing left, nothing twice


def test_file_vanishing_between_listing_and_reading(inbox: Path, store: ContentStore) -> None:
    discover(_source(inbox), store)
    (inbox / "plain.txt").write_text("changed, then removed before discovery reads it")
    (inbox / "fresh.txt").write_text("added, then removed before discovery reads it")
    listing = _source(inbox).stat_table()
    (inbox / "plain.txt").unlink()
    (inbox / "fresh.txt").unlink()
    stale = discover(_StaleSource(inbox, listing), store)
    assert stale.batch is None and stale.has_more  # no crash, nothing pinned, look again
    result = discover(_source(inbox), store)
    assert result.batch is not None
    assert _changes(store, result.batch.batch_id) == {"plain.txt": "deleted"}


SETTLE_S = 30.0


def _later(seconds: float) -> Callable[[], int]:
    """A wall clock running `seconds` ahead of the real one: "later" without waiting."""
    return lambda: time.time_ns() + int(seconds * 1e9)


def test_settle_time_holds_a_file_until_its_status_is_old_enough(
    tmp_path: Path, store: ContentStore
) -> None:
    folder = tmp_path / "arriving"
    folder.mkdir()
    (folder / "new.txt").write_text("just copied in")
    changed = (folder / "new.txt").stat().st_ctime_ns

    def at(ns: int) -> Callable[[], int]:
        return lambda: ns

    early = discover(_source(folder), store, settle_s=SETTLE_S, clock_ns=at(changed))
    assert early.batch is None and early.has_more
    settled = changed + int(SETTLE_S * 1e9)  # the first instant the file counts as settled
    almost = discover(_source(folder), store, settle_s=SETTLE_S, clock_ns=at(settled - 1))
    assert almost.batch is None and almost.has_more
    later = discover(_source(folder), store, settle_s=SETTLE_S, clock_ns=at(settled))
    assert later.batch is not None and [e.path for e in later.batch.entries] == ["new.txt"]
    assert not later.has_more


def test_file_written_during_discovery_is_never_pinned_half_written(
    tmp_path: Path, store: ContentStore
) -> None:
    """A writer rewrites a 1 MiB file over and over, block by block, pausing between blocks,
    while discovery runs: with a settle time nothing is pinned until the writer stops, and
    the version pinned then is whole (full size, one byte value throughout). The settle time
    is long, so a loaded machine that stalls the writer never makes it look settled; "later"
    comes from a clock moved forward instead of a wait.

    Without a settle time a read that falls in a pause sees a stable, shorter file: comparing
    the stat before and after a read only catches writes during the read itself."""
    folder = tmp_path / "busy"
    folder.mkdir()
    target = folder / "busy.bin"
    block, blocks = 65536, 16
    target.write_bytes(b"@" * block * blocks)
    stop = threading.Event()

    def writer() -> None:
        version = 0
        while not stop.is_set() and version < 20_000:  # bounded, whatever happens
            fill = bytes([65 + version % 26]) * block
            with open(target, "wb") as handle:
                for _ in range(blocks):
                    handle.write(fill)
                    handle.flush()
                    time.sleep(0.0005)
            version += 1

    thread = threading.Thread(target=writer)
    thread.start()
    pinned: list[str] = []
    try:
        for _ in range(15):
            result = discover(_source(folder), store, settle_s=SETTLE_S)
            if result.batch is not None:
                pinned.extend(e.sha256 or "" for e in result.batch.entries)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert pinned == []
    final = discover_pending(
        _source(folder), store, set(), settle_s=SETTLE_S, clock_ns=_later(SETTLE_S + 1)
    )
    assert not final.has_more
    latest = store.query(
        "SELECT sha256 FROM batches WHERE path = 'busy.bin' ORDER BY batch_seq DESC LIMIT 1"
    ).to_pylist()
    assert latest == [{"sha256": hashlib.sha256(target.read_bytes()).hexdigest()}]
    data = store.blobs.get(latest[0]["sha256"])
    assert len(data) == block * blocks and len(set(data)) == 1


def test_deleted_then_restored_file_is_added_again(inbox: Path, store: ContentStore) -> None:
    discover(_source(inbox), store)
    data = (inbox / "notes.md").read_bytes()
    (inbox / "notes.md").unlink()
    discover(_source(inbox), store)
    (inbox / "notes.md").write_bytes(data)
    result = discover(_source(inbox), store)
    assert result.batch is not None
    assert _changes(store, result.batch.batch_id) == {"notes.md": "added"}


def test_snapshot_of_known_state_keeps_ticks_cheap_and_changes_exact(
    inbox: Path, store: ContentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many small batches fold into a snapshot; a lost or corrupt snapshot changes nothing."""
    monkeypatch.setattr(discovery, "SNAPSHOT_EVERY", 3)
    for step in range(8):
        (inbox / f"step-{step}.txt").write_text(f"step {step}")
        if step == 4:
            (inbox / "notes.md").unlink()
        assert discover(_source(inbox), store).batch is not None
    snapshot = store.root / "state" / "t.known.parquet"
    assert snapshot.is_file()
    expected = known_state(store, "t")
    snapshot.unlink()
    assert known_state(store, "t") == expected  # rebuilt from the manifests alone
    assert discover(_source(inbox), store).batch is None
    snapshot.write_bytes(b"not parquet")
    assert known_state(store, "t") == expected
    (inbox / "notes.md").write_text("back again")
    (inbox / "step-0.txt").unlink()
    result = discover(_source(inbox), store)
    assert result.batch is not None
    assert _changes(store, result.batch.batch_id) == {"notes.md": "added", "step-0.txt": "deleted"}
    assert result.batch.seq == 9
    assert discover(_source(inbox), store).batch is None


def test_raw_files_sniff_a_large_container_by_its_directory(
    tmp_path: Path, store: ContentStore
) -> None:
    """A DOCX over a megabyte whose first member is a picture is still a DOCX, not a zip."""
    import io
    import zipfile

    from content_core.ingest import build_raw_files

    folder = tmp_path / "big"
    folder.mkdir()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/media/image1.bin", os.urandom(3 << 20))
        archive.writestr(
            "[Content_Types].xml",
            '<Types><Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.'
            'wordprocessingml.document.main+xml"/></Types>',
        )
        archive.writestr("word/document.xml", "<w:document/>")
    (folder / "report.docx").write_bytes(buffer.getvalue())
    batch = discover(_source(folder), store).batch
    assert batch is not None
    build_raw_files(store, batch.batch_id)
    rows = store.query("SELECT media_type FROM raw_files").to_pylist()
    assert rows == [
        {"media_type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
    ]


# -- any name, losslessly ---------------------------------------------------------------------


def test_odd_names_are_listed_alike_by_find_and_the_walk(tmp_path: Path) -> None:
    """GNU find (NUL-separated, so a newline in a name is just a byte) and the bytes walk give
    the same listing: every path in its text form next to its exact bytes."""
    folder = tmp_path / "odd"
    make_odd_folder(folder)
    source = _source(folder)
    fast = source._find()  # the fast path must hold these names, not fall back to the walk
    assert fast is not None
    walked = LocalFolderSource(
        LocalFolderSourceConfig(folder=folder, exclude_predicate=lambda _: False), source_id="t"
    ).stat_table()
    assert source.stat_table().equals(walked)
    assert dict(zip(walked["path_bytes"].to_pylist(), walked["path"].to_pylist(), strict=True)) == (
        ODD_NAMES
    )
    assert [item.path_bytes for item in source.scan()] == sorted(ODD_NAMES)


def test_odd_names_are_pinned_with_their_exact_bytes_renamed_and_deleted(
    tmp_path: Path, store: ContentStore
) -> None:
    folder = tmp_path / "odd"
    contents = make_odd_folder(folder)
    result = discover(_source(folder), store)
    assert result.batch is not None and not result.has_more
    rows = store.read_manifest(result.batch.batch_id).to_pylist()
    assert {row["path_bytes"]: row["path"] for row in rows} == ODD_NAMES
    for row in rows:  # the bytes pinned are the bytes of the file the path names
        assert store.blobs.get(row["sha256"]) == contents[row["path_bytes"]].encode()
    assert discover(_source(folder), store).batch is None  # nothing changed, nothing found

    root = os.fsencode(folder)
    os.rename(os.path.join(root, b"a\xff.txt"), os.path.join(root, b"renamed-\xfe.txt"))
    os.unlink(os.path.join(root, b"line\nbreak.txt"))
    result = discover(_source(folder), store)
    assert result.batch is not None
    changes = {
        (row["path"], row["path_bytes"], row["change"])
        for row in store.read_manifest(result.batch.batch_id).to_pylist()
    }
    assert changes == {
        ("a\\xff.txt", b"a\xff.txt", "deleted"),  # the look-alike a\\xff.txt stays untouched
        ("line\nbreak.txt", b"line\nbreak.txt", "deleted"),
        ("renamed-\\xfe.txt", b"renamed-\xfe.txt", "added"),
    }


def test_manifests_written_before_path_bytes_still_drive_discovery(
    inbox: Path, store: ContentStore
) -> None:
    """A store from before the column: nothing is seen as changed, and a deletion of a file
    known only by its text gets that text's bytes (such paths were always valid UTF-8)."""
    first = discover(_source(inbox), store)
    assert first.batch is not None
    manifest = store.manifest_path(first.batch.batch_id)
    pq.write_table(pq.read_table(manifest).drop_columns(["path_bytes"]), manifest)
    assert discover(_source(inbox), store).batch is None
    (inbox / "notes.md").unlink()
    result = discover(_source(inbox), store)
    assert result.batch is not None
    (entry,) = result.batch.entries
    assert (entry.path, entry.path_bytes, entry.change) == ("notes.md", b"notes.md", "deleted")


def test_ordinary_names_keep_their_paths(inbox: Path, store: ContentStore) -> None:
    """Valid UTF-8 names without a backslash are unchanged: `path` is the name itself."""
    result = discover(_source(inbox), store)
    assert result.batch is not None
    names = sorted(p.name for p in inbox.iterdir())
    assert sorted(e.path for e in result.batch.entries) == names
    assert sorted(e.path_bytes for e in result.batch.entries) == [n.encode() for n in names]
