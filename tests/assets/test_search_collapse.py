"""Duplicates known, through the real CLI on corpus files: `document_similarity` pairs the
copies of one email as they arrive and its current view drops a deleted copy's pairs; `search`
folds the copies into one hit ("also in"), gives a zip of many chunks one place ("+N more in
this file"), and `--all-chunks` keeps one hit per chunk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from content_core.store import ContentStore
from tests.support.cli import run_cli

pytestmark = pytest.mark.timeout(900)
CORPUS = Path(__file__).resolve().parents[1] / "corpus"
EMAILS = ["eml/fake-email.eml", "eml/fake-email-b64.eml", "eml/fake-email-utf-16-le.eml"]
MSG = "msg/fake-email.msg"
OTHERS = ["zip/test_files.zip", "pdf/markitdown-test.pdf", "msg/test_outlook_msg.msg"]
EMAIL_QUERY = "roses violets test email"
ZIP_QUERY = "AutoGen multi-agent conversation"


def _copy(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / name, folder / name)


def _ingest(folder: Path, home: Path, store: Path) -> None:
    done = run_cli("ingest", str(folder), home=home, store=store, CONTENT_EMBEDDER="off")
    assert done.returncode == 0, done.stdout + done.stderr


def _search(store: Path, home: Path, *args: str) -> str:
    done = run_cli("search", *args, "--mode", "bm25", home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _jsonl(store: Path, home: Path, *args: str) -> list[dict[str, object]]:
    out = _search(store, home, *args, "--format", "jsonl")
    return [json.loads(line) for line in out.splitlines()]


def _pairs(store: Path) -> set[frozenset[str]]:
    rows = ContentStore(store).query(
        "SELECT path, other_path FROM current_document_similarity WHERE other_path IS NOT NULL"
    ).to_pylist()
    return {frozenset((str(r["path"]), str(r["other_path"]))) for r in rows}


def _folded(hit: dict[str, object]) -> set[str]:
    also = hit["also_in"]
    assert isinstance(also, list)
    return {str(hit["path"]), *(str(name).split(":", 1)[1] for name in also)}


def test_copies_fold_into_one_hit_and_a_deleted_copy_leaves_the_pairs(tmp_path: Path) -> None:
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    _copy(folder, *EMAILS, *OTHERS)
    _ingest(folder, home, store)
    assert _pairs(store) == {
        frozenset((EMAILS[0], EMAILS[1])),
        frozenset((EMAILS[0], EMAILS[2])),
        frozenset((EMAILS[1], EMAILS[2])),
    }

    # Batch 2: the .msg copy (other header lines) is compared with the store's documents.
    _copy(folder, MSG)
    _ingest(folder, home, store)
    with_msg = _pairs(store)
    assert any(MSG in pair for pair in with_msg)
    assert all(pair <= {*EMAILS, MSG} for pair in with_msg)

    hits = _jsonl(store, home, EMAIL_QUERY, "--k", "5")
    assert _folded(hits[0]) == {*EMAILS, MSG}
    assert [h["path"] for h in hits].count(hits[0]["path"]) == 1
    assert not any(_folded(h) & {*EMAILS, MSG} for h in hits[1:])
    table = _search(store, home, EMAIL_QUERY, "--k", "5")
    first = table.split("\n\n")[0]
    assert "   also in: " in first and MSG in first

    chunks = _jsonl(store, home, EMAIL_QUERY, "--k", "5", "--all-chunks")
    assert len({str(h["path"]) for h in chunks} & {*EMAILS, MSG}) >= 3
    assert all(h["also_in"] == [] and h["more_in_document"] == 0 for h in chunks)

    # Batch 3: the .msg copy is deleted: its pairs leave the current view and the hit.
    (folder / MSG).unlink()
    _ingest(folder, home, store)
    assert _pairs(store) == {pair for pair in with_msg if MSG not in pair}
    hits = _jsonl(store, home, EMAIL_QUERY, "--k", "5")
    assert _folded(hits[0]) == set(EMAILS)


def test_a_zip_of_many_chunks_takes_one_place(tmp_path: Path) -> None:
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    _copy(folder, *OTHERS)
    _ingest(folder, home, store)
    chunks = _jsonl(store, home, ZIP_QUERY, "--k", "5", "--all-chunks")
    assert [h["path"] for h in chunks].count("zip/test_files.zip") >= 3
    documents = _jsonl(store, home, ZIP_QUERY, "--k", "5")
    paths = [h["path"] for h in documents]
    assert paths.count("zip/test_files.zip") == 1 and "pdf/markitdown-test.pdf" in paths
    zipped = documents[paths.index("zip/test_files.zip")]
    more = zipped["more_in_document"]
    assert isinstance(more, int) and more >= 2
    table = _search(store, home, ZIP_QUERY, "--k", "5", "--per-document")
    assert f"   +{more} more in this file" in table
