"""Discovery: every change found once, batches capped, state kept in the store."""

from __future__ import annotations

import hashlib
import inspect
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from content_core.discovery import DiscoveryConfig, PendingBatches, discover_pending
from content_core.discovery import discover as discovery
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig, iter_entries
from content_core.store import ContentStore
from tests.fixtures.names import ODD_NAMES, make_odd_folder
from tests.support.memory_source import MemorySource
from tests.support.opened import files_opened_under


def _source(folder: Path) -> LocalFolderSource:
    return LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="t")


def _discover(folder: Path, store: ContentStore, **options: Any) -> PendingBatches:
    """One discovery pass over `folder` as the triggers run it, with no settle time unless
    given (each test writes its files just before)."""
    return discover_pending(_source(folder), store, set(), **{"settle_s": 0.0, **options})


def _rows(store: ContentStore, found: PendingBatches) -> list[dict[str, Any]]:
    """The manifest rows of the batches that `found` discovered."""
    return [row for b in found.discovered for row in store.read_manifest(b).to_pylist()]


def _changes(store: ContentStore, found: PendingBatches) -> dict[str, str]:
    return {row["path"]: row["change"] for row in _rows(store, found)}


def test_first_pass_adds_everything_and_second_finds_nothing(
    inbox: Path, store: ContentStore
) -> None:
    first = _discover(inbox, store)
    assert len(first.discovered) == 1
    assert set(_changes(store, first).values()) == {"added"}
    assert len(_rows(store, first)) == len(list(inbox.iterdir()))
    second = _discover(inbox, store)
    assert second.discovered == () and not second.has_more


def test_added_modified_with_old_mtime_and_deleted(inbox: Path, store: ContentStore) -> None:
    _discover(inbox, store)
    (inbox / "new.txt").write_text("a new file")
    target = inbox / "plain.txt"
    old = target.stat()
    target.write_text("same old timestamps, different bytes " * 3)
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    (inbox / "notes.md").unlink()
    assert _changes(store, _discover(inbox, store)) == {
        "new.txt": "added",
        "plain.txt": "modified",
        "notes.md": "deleted",
    }


def test_touch_without_new_bytes_is_not_a_change(inbox: Path, store: ContentStore) -> None:
    _discover(inbox, store)
    target = inbox / "plain.txt"
    target.write_bytes(target.read_bytes())  # same bytes, new mtime and ctime
    assert _discover(inbox, store).discovered == ()


def test_rename_is_delete_plus_add_of_known_bytes(inbox: Path, store: ContentStore) -> None:
    _discover(inbox, store)
    blobs_before = {p.name for p in store.blobs.root.rglob("*") if p.is_file()}
    (inbox / "plain.txt").rename(inbox / "renamed.txt")
    assert _changes(store, _discover(inbox, store)) == {
        "plain.txt": "deleted",
        "renamed.txt": "added",
    }
    assert {p.name for p in store.blobs.root.rglob("*") if p.is_file()} == blobs_before


def test_batches_are_capped_and_the_rest_follow(tmp_path: Path, store: ContentStore) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(25):
        (folder / f"f{number:02d}.txt").write_text(f"file {number}")
    found = discover_pending(_source(folder), store, set(), max_batch_files=10, settle_s=0.0)
    assert [len(store.read_manifest(b)) for b in found.batch_ids] == [10, 10, 5]
    assert found.new_batch_ids == found.batch_ids and not found.has_more


def test_unrequested_batches_are_found_again(inbox: Path, store: ContentStore) -> None:
    """A trigger that crashed after discovery still gets the batch on its next call."""
    (first,) = _discover(inbox, store).discovered
    again = discover_pending(_source(inbox), store, set(), settle_s=0.0)
    assert again.discovered == () and again.batch_ids == (first,)
    known = discover_pending(_source(inbox), store, {first}, settle_s=0.0)
    assert known.new_batch_ids == () and known.batch_ids == (first,)


def test_hidden_files_and_symlinks_are_skipped(inbox: Path, store: ContentStore) -> None:
    (inbox / ".hidden").write_text("secret")
    (inbox / "link.txt").symlink_to(inbox / "plain.txt")
    paths = set(_changes(store, _discover(inbox, store)))
    assert paths and ".hidden" not in paths and "link.txt" not in paths


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
        _source(folder), store, set(), max_batch_files=400, time_budget_s=float("inf"), settle_s=0.0
    )
    sizes = [len(store.read_manifest(b)) for b in found.batch_ids]
    assert sizes == [400] * 7 + [200] and not found.has_more
    paths = store.query("SELECT path, count(*) AS n FROM batches GROUP BY path").to_pylist()
    assert len(paths) == 3000 and {r["n"] for r in paths} == {1}  # every file recorded once
    with files_opened_under(folder) as opened:
        quiet = discover_pending(_source(folder), store, set(found.batch_ids), settle_s=0.0)
    assert quiet.discovered == () and quiet.scanned == 3000
    assert opened == []  # quick because it reads no file: the listing and the store suffice


def test_time_budget_keeps_progress_in_the_store(tmp_path: Path, store: ContentStore) -> None:
    """A spent budget still pins one file per pass: progress is in the store, none repeats."""
    folder = tmp_path / "many"
    _many(folder, 12)
    passes = []
    while True:
        found = discover_pending(_source(folder), store, set(), time_budget_s=0.0, settle_s=0.0)
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
    source = _source(folder)
    fast = source.list_entries()
    walked = LocalFolderSource(
        LocalFolderSourceConfig(folder=folder, exclude_predicate=lambda _: False), source_id="t"
    ).list_entries()
    assert fast.equals(walked) and fast.num_rows == 301
    first = next(iter_entries(fast))
    info = (folder / first.path).stat()
    assert (first.size_bytes, first.signature, first.changed_ns) == (
        info.st_size,
        f"{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}",
        info.st_ctime_ns,
    )
    assert source.stat_entry(first.path_bytes) == first  # one state, listed or stat-ed


class _StaleSource(LocalFolderSource):
    """A source whose listing was taken before the test changed the folder."""

    def __init__(self, folder: Path, listing: pa.Table) -> None:
        super().__init__(LocalFolderSourceConfig(folder=folder), source_id="t")
        self.listing = listing

    def list_entries(self) -> pa.Table:
        return self.listing


def test_file_rewritten_after_listing_is_pinned_whole(inbox: Path, store: ContentStore) -> None:
    _discover(inbox, store)
    target = inbox / "plain.txt"
    target.write_text("version two of the minutes")
    listing = _source(inbox).list_entries()
    target.write_text("version three, written after the listing was taken")
    found = discover_pending(_StaleSource(inbox, listing), store, set(), settle_s=0.0)
    (entry,) = _rows(store, found)
    assert entry["sha256"] == hashlib.sha256(target.read_bytes()).hexdigest()
    now = _source(inbox).stat_entry(b"plain.txt")
    assert now is not None and entry["signature"] == now.signature  # the version read
    assert _discover(inbox, store).discovered == ()  # nothing left, nothing twice


def test_file_vanishing_between_listing_and_reading(inbox: Path, store: ContentStore) -> None:
    _discover(inbox, store)
    (inbox / "plain.txt").write_text("changed, then removed before discovery reads it")
    (inbox / "fresh.txt").write_text("added, then removed before discovery reads it")
    listing = _source(inbox).list_entries()
    (inbox / "plain.txt").unlink()
    (inbox / "fresh.txt").unlink()
    stale = discover_pending(_StaleSource(inbox, listing), store, set(), settle_s=0.0)
    assert stale.discovered == () and stale.has_more  # no crash, nothing pinned, look again
    assert _changes(store, _discover(inbox, store)) == {"plain.txt": "deleted"}


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

    early = _discover(folder, store, settle_s=SETTLE_S, clock_ns=at(changed))
    assert early.discovered == () and early.has_more
    settled = changed + int(SETTLE_S * 1e9)  # the first instant the file counts as settled
    almost = _discover(folder, store, settle_s=SETTLE_S, clock_ns=at(settled - 1))
    assert almost.discovered == () and almost.has_more
    later = _discover(folder, store, settle_s=SETTLE_S, clock_ns=at(settled))
    assert _changes(store, later) == {"new.txt": "added"} and not later.has_more


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
            result = _discover(folder, store, settle_s=SETTLE_S)
            pinned.extend(row["sha256"] for row in _rows(store, result))
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
    _discover(inbox, store)
    data = (inbox / "notes.md").read_bytes()
    (inbox / "notes.md").unlink()
    _discover(inbox, store)
    (inbox / "notes.md").write_bytes(data)
    assert _changes(store, _discover(inbox, store)) == {"notes.md": "added"}


def test_snapshot_of_known_state_keeps_ticks_cheap_and_changes_exact(
    inbox: Path, store: ContentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many small batches fold into a snapshot; a lost or corrupt snapshot changes nothing."""
    monkeypatch.setattr(discovery, "SNAPSHOT_EVERY", 3)
    for step in range(8):
        (inbox / f"step-{step}.txt").write_text(f"step {step}")
        if step == 4:
            (inbox / "notes.md").unlink()
        assert len(_discover(inbox, store).discovered) == 1
    snapshot = store.root / "state" / "t.known.parquet"
    assert snapshot.is_file()
    # The snapshot holds the latest row of each path up to the newest batch it covers.
    columns = ["path", "change", "sha256", "signature", "batch_seq"]
    folded = pq.read_table(snapshot).select(columns)
    covered = max(folded.column("batch_seq").to_pylist())
    assert 3 <= covered < 8
    expected = store.query(
        f"SELECT {', '.join(columns)} FROM batches WHERE batch_seq <= ? "
        "QUALIFY row_number() OVER (PARTITION BY path ORDER BY batch_seq DESC) = 1",
        [covered],
    )
    assert folded.sort_by("path").equals(expected.sort_by("path"))
    snapshot.unlink()
    assert _discover(inbox, store).discovered == ()  # rebuilt from the manifests alone
    snapshot.write_bytes(b"not parquet")
    assert _discover(inbox, store).discovered == ()
    (inbox / "notes.md").write_text("back again")
    (inbox / "step-0.txt").unlink()
    result = _discover(inbox, store)
    assert _changes(store, result) == {"notes.md": "added", "step-0.txt": "deleted"}
    (batch_id,) = result.discovered
    assert store.read_manifest(batch_id).column("batch_seq").to_pylist() == [9, 9]
    assert _discover(inbox, store).discovered == ()


def test_raw_files_sniff_a_large_container_by_its_directory(
    tmp_path: Path, store: ContentStore
) -> None:
    """A DOCX over a megabyte whose first member is a picture is still a DOCX, not a zip."""
    import io
    import zipfile

    from content_core.pipeline import build_raw_files

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
    (batch_id,) = _discover(folder, store).discovered
    build_raw_files(store, batch_id)
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
    ).list_entries()
    assert source.list_entries().equals(walked)
    assert dict(zip(walked["path_bytes"].to_pylist(), walked["path"].to_pylist(), strict=True)) == (
        ODD_NAMES
    )
    for entry in iter_entries(walked):  # stat and open by the exact bytes of the name
        assert source.stat_entry(entry.path_bytes) == entry
        with source.open_entry(entry) as handle:
            assert len(handle.read()) == entry.size_bytes


def test_odd_names_are_pinned_with_their_exact_bytes_renamed_and_deleted(
    tmp_path: Path, store: ContentStore
) -> None:
    folder = tmp_path / "odd"
    contents = make_odd_folder(folder)
    result = _discover(folder, store)
    assert len(result.discovered) == 1 and not result.has_more
    rows = _rows(store, result)
    assert {row["path_bytes"]: row["path"] for row in rows} == ODD_NAMES
    for row in rows:  # the bytes pinned are the bytes of the file the path names
        assert store.blobs.get(row["sha256"]) == contents[row["path_bytes"]].encode()
    assert _discover(folder, store).discovered == ()  # nothing changed, nothing found

    root = os.fsencode(folder)
    os.rename(os.path.join(root, b"a\xff.txt"), os.path.join(root, b"renamed-\xfe.txt"))
    os.unlink(os.path.join(root, b"line\nbreak.txt"))
    changes = {
        (row["path"], row["path_bytes"], row["change"])
        for row in _rows(store, _discover(folder, store))
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
    (first,) = _discover(inbox, store).discovered
    manifest = store.manifest_path(first)
    pq.write_table(pq.read_table(manifest).drop_columns(["path_bytes"]), manifest)
    assert _discover(inbox, store).discovered == ()
    (inbox / "notes.md").unlink()
    (entry,) = _rows(store, _discover(inbox, store))
    assert (entry["path"], entry["path_bytes"], entry["change"]) == (
        "notes.md",
        b"notes.md",
        "deleted",
    )


def test_manifests_written_before_signature_still_drive_discovery(
    inbox: Path, store: ContentStore
) -> None:
    """A store from before the column recorded a folder's mtime, ctime and inode instead: its
    files are known unchanged without reading one (no hash cache to fall back on), and a real
    change is still found."""
    (first,) = _discover(inbox, store).discovered
    manifest = store.manifest_path(first)
    table = pq.read_table(manifest)
    parts = [signature.split(":") for signature in table.column("signature").to_pylist()]
    legacy = table.drop_columns(["signature"])
    for index, name in enumerate(("mtime_ns", "ctime_ns", "inode")):
        legacy = legacy.append_column(name, pa.array([int(p[index]) for p in parts], pa.int64()))
    pq.write_table(legacy, manifest)
    (store.root / "state" / "t.hashes.parquet").unlink()
    with files_opened_under(inbox) as opened:
        assert _discover(inbox, store).discovered == ()
    assert opened == []
    (inbox / "plain.txt").write_text("a change after the upgrade, of another size")
    assert _changes(store, _discover(inbox, store)) == {"plain.txt": "modified"}


def test_ordinary_names_keep_their_paths(inbox: Path, store: ContentStore) -> None:
    """Valid UTF-8 names without a backslash are unchanged: `path` is the name itself."""
    rows = _rows(store, _discover(inbox, store))
    names = sorted(p.name for p in inbox.iterdir())
    assert sorted(row["path"] for row in rows) == names
    assert sorted(row["path_bytes"] for row in rows) == [n.encode() for n in names]


# -- any EntrySource, not only a folder -------------------------------------------------------


def test_an_in_memory_source_is_discovered_through_the_protocol_alone(
    store: ContentStore,
) -> None:
    """Object-store shaped: a same-size rewrite, a same-bytes rewrite (a new generation), a
    deletion and a rename (copy, then delete) land as modified, nothing, deleted, deleted+added.
    """
    source = MemorySource("mem")
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        source.put(name, f"version one of {name}".encode())
    first = discover_pending(source, store, set(), settle_s=0.0)
    assert set(_changes(store, first).values()) == {"added"} and len(_rows(store, first)) == 4
    assert {row["source_root"] for row in _rows(store, first)} == {"memory://mem"}
    source.opened.clear()
    again = discover_pending(source, store, set(), settle_s=0.0)
    assert again.discovered == () and source.opened == []

    source.put("a.txt", b"VERSION ONE OF a.txt")  # same size, new bytes
    source.put("b.txt", b"version one of b.txt")  # same bytes, new generation
    source.delete("c.txt")
    source.rename("d.txt", "e/d.txt")
    second = discover_pending(source, store, set(), settle_s=0.0)
    assert _changes(store, second) == {
        "a.txt": "modified",
        "c.txt": "deleted",
        "d.txt": "deleted",
        "e/d.txt": "added",
    }
    rows = {row["path"]: row for row in _rows(store, second)}
    assert rows["a.txt"]["sha256"] == hashlib.sha256(b"VERSION ONE OF a.txt").hexdigest()
    assert rows["e/d.txt"]["sha256"] == hashlib.sha256(b"version one of d.txt").hexdigest()
    source.opened.clear()
    assert discover_pending(source, store, set(), settle_s=0.0).discovered == ()
    assert source.opened == []  # the touched b.txt is known by its new generation now


def test_an_in_memory_entry_waits_until_it_has_settled(store: ContentStore) -> None:
    source = MemorySource("mem")
    changed = time.time_ns()
    source.put("late.txt", b"just written", changed_ns=changed)
    early = discover_pending(source, store, set(), settle_s=SETTLE_S, clock_ns=lambda: changed)
    assert early.discovered == () and early.has_more and source.opened == []
    later = discover_pending(source, store, set(), settle_s=SETTLE_S, clock_ns=_later(SETTLE_S + 1))
    assert _changes(store, later) == {"late.txt": "added"} and not later.has_more


def test_settle_default_is_the_discovery_configs(store: ContentStore) -> None:
    """One settle time (2 s, for a source someone may still be copying into) and one batch
    cap: `discover_pending` has no numbers of its own, so a caller that leaves them out waits
    as the sensor does."""
    defaults = DiscoveryConfig()
    assert defaults.settle_s == 2.0
    parameters = inspect.signature(discover_pending).parameters
    for name in DiscoveryConfig.model_fields:
        assert parameters[name].default == getattr(defaults, name), name
    source = MemorySource("mem")
    changed = time.time_ns()
    source.put("fresh.txt", b"just written, no settle_s given", changed_ns=changed)
    early = discover_pending(source, store, set(), clock_ns=_later(defaults.settle_s / 2))
    assert early.discovered == () and early.has_more
    later = discover_pending(source, store, set(), clock_ns=_later(defaults.settle_s + 1))
    assert _changes(store, later) == {"fresh.txt": "added"}
