"""Big inputs through the whole command: one document of 26,000 chunks beside a small file,
and a folder of 10,000 small files. Every stage writes its rows and `content-pipeline ingest`
exits 0 (a long document once failed its whole batch: the offline extraction's wait was its
per-chunk budget times the chunk count, which overflowed the pool's wait)."""

from __future__ import annotations

from pathlib import Path

import pytest

from content_core.store import ContentStore
from tests.support.cli import run_cli

# Each ingest takes under a minute here; a loaded machine may take several.
pytestmark = pytest.mark.timeout(1200)

_SECTIONS = 26_000
_FILES = 10_000


def _counts(store: Path, table: str) -> tuple[int, int]:
    """Rows of the table's current view, and how many of them carry an error."""
    rows = ContentStore(store).query(
        f"SELECT count(*) AS n, count(error_type) AS errors FROM current_{table}"
    ).to_pylist()
    return rows[0]["n"], rows[0]["errors"]


def test_a_document_of_26000_chunks_goes_through_every_stage(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    # A long Markdown file of short sections (a log, a glossary, a book of entries): the
    # Markdown chunker makes a chunk of each section.
    (inbox / "book.md").write_text(
        "".join(
            f"## Section {i}\n\nEntry {i} records item {i * 7} at site {i % 97}.\n\n"
            for i in range(_SECTIONS)
        ),
        encoding="utf-8",
    )
    (inbox / "small.txt").write_text("a small file beside the book\n", encoding="utf-8")
    store, home = tmp_path / "store", tmp_path / "home"

    done = run_cli("ingest", str(inbox), home=home, store=store)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    chunks = _SECTIONS + 1
    for table, rows in (
        ("normalised_artifacts", 2),
        ("chunks", chunks),
        ("chunk_embeddings", chunks),
        ("agentic_extractions", chunks),
        ("compressed_contexts", 2),
        ("message_parts", 2),
    ):
        assert _counts(store, table) == (rows, 0), table
    merged = ContentStore(store).query(
        "SELECT path, chunk_count, error_count FROM current_merged_extractions ORDER BY path"
    ).to_pylist()
    assert merged == [
        {"path": "book.md", "chunk_count": _SECTIONS, "error_count": 0},
        {"path": "small.txt", "chunk_count": 1, "error_count": 0},
    ]
    # The last section is in the search index.
    found = run_cli("search", f"Entry {_SECTIONS - 1} records", "--k", "1", home=home, store=store)
    assert found.returncode == 0, found.stderr
    hit = found.stdout.splitlines()
    assert "book.md" in hit[0] and f"Section {_SECTIONS - 1}" in hit[1], found.stdout


def test_a_folder_of_10000_small_files_goes_through_every_stage(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    for i in range(_FILES):
        folder = inbox / f"d{i // 500:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{i:05d}.txt").write_text(
            f"Note {i}: the item {i * 13} is on shelf {i % 41}.\n", encoding="utf-8"
        )
    store, home = tmp_path / "store", tmp_path / "home"

    done = run_cli("ingest", str(inbox), home=home, store=store)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"scanned {_FILES} files" in done.stdout
    for table in (
        "normalised_artifacts",
        "chunks",
        "chunk_embeddings",
        "agentic_extractions",
        "compressed_contexts",
        "message_parts",
    ):
        assert _counts(store, table) == (_FILES, 0), table
    merged = ContentStore(store).query(
        "SELECT count(*) AS n, sum(error_count) AS errors FROM current_merged_extractions"
    ).to_pylist()
    assert merged == [{"n": _FILES, "errors": 0}]
