"""What the CLI tells a person, through the real command: re-ingest names the changed files,
an ingest with nothing changed says since when, `status` counts failures by error type, every
cell of the summary is filled, and with embeddings off `ingest`, `status` and `search` say so."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest

from content_assets.cli.progress import EMBEDDINGS_SET_OFF
from content_core.store import ContentStore
from tests.conftest import SAMPLE_INBOX
from tests.support.cli import run_cli, status_of

pytestmark = pytest.mark.timeout(900)

OFF = {"CONTENT_EMBEDDER": "off"}
# Added files beyond the ten an ingest names: the rest is counted.
NEW = [f"new{n:02d}.txt" for n in range(1, 13)]


@dataclass(frozen=True)
class Ingests:
    store: Path
    home: Path
    first: str  # stdout of the first ingest
    second: str  # after adding, modifying, deleting and renaming files
    third: str  # nothing changed


@pytest.fixture(scope="module")
def ingests(tmp_path_factory: pytest.TempPathFactory) -> Ingests:
    root = tmp_path_factory.mktemp("reports")
    folder = root / "inbox"
    folder.mkdir()
    for name in ("notes.md", "plain.txt", "handbook.pdf", "bundle.zip"):
        (folder / name).write_bytes((SAMPLE_INBOX / name).read_bytes())
    store, home = root / "store", root / "home"

    def ingest() -> str:
        done = run_cli("ingest", str(folder), home=home, store=store, **OFF)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        return done.stdout

    first = ingest()
    with (folder / "notes.md").open("a", encoding="utf-8") as notes:
        notes.write("\nQREPORT a line added later\n")
    (folder / "bundle.zip").unlink()
    (folder / "plain.txt").rename(folder / "renamed.txt")
    (folder / "empty.txt").write_bytes(b"")  # fails: EmptyFileError
    for n, name in enumerate(NEW, 1):
        (folder / name).write_text(f"QREPORT new file {n}\n", encoding="utf-8")
    second = ingest()
    third = ingest()
    return Ingests(store, home, first, second, third)


def _summary(stdout: str) -> dict[str, list[str]]:
    """The summary table's rows: stage -> its cells after the stage's name."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "rows written" in line)
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        cells = [cell.strip() for cell in line.split("│")]
        rows[cells[0]] = cells[1:]
    return rows


def test_every_cell_of_the_summary_is_filled(ingests: Ingests) -> None:
    for stdout in (ingests.first, ingests.second):
        rows = _summary(stdout)
        assert "search_index" in rows and "merged_extractions" in rows
        for stage, cells in rows.items():
            assert len(cells) == 3 and all(cells), (stage, cells)
    # search_index: the chunks the index holds, as many as the source's current chunks.
    chunks = ContentStore(ingests.store).query(
        "SELECT count(*) AS n FROM current_chunks WHERE coalesce(error_type, '') = ''"
    ).to_pylist()[0]["n"]
    assert _summary(ingests.second)["search_index"][2] == str(chunks)
    assert _summary(ingests.second)["chunk_embeddings"][2] == "0 (embeddings off)"


def test_reingest_names_the_changed_files_per_kind(ingests: Ingests) -> None:
    lines = ingests.second.splitlines()
    assert "changes:  13 added, 1 modified, 1 deleted, 1 renamed" in lines
    added = [line.split(None, 1)[1] for line in lines if line.startswith("  added ")]
    # The first ten by path, then a count of the rest.
    assert added == ["empty.txt", *NEW[:9], "and 3 more"]
    assert "  modified  notes.md" in lines
    assert "  deleted   bundle.zip" in lines  # not plain.txt: that one was renamed
    assert "  renamed   plain.txt -> renamed.txt" in lines
    # The first ingest of a folder: every file is added, and named.
    assert "changes:  4 added" in ingests.first.splitlines()


def test_nothing_changed_says_since_when_without_the_sample_table(ingests: Ingests) -> None:
    last = ContentStore(ingests.store).query(
        "SELECT max(discovered_at) AS at FROM batches"
    ).to_pylist()[0]["at"]
    when = last.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert f"nothing changed since {when} (the last batch of " in ingests.third
    assert "rows written" not in ingests.third and "changes:" not in ingests.third
    # The sample command is printed; its table (shown by the ingests that ran) is not.
    sample = ingests.third.split("sample:", 1)[1].splitlines()
    assert len(sample) == 1 and "current_normalised_artifacts" in sample[0]
    assert "source_id" in ingests.second.split("sample:", 1)[1].split("\n", 1)[1]


def test_status_counts_failed_rows_by_error_type_per_source(ingests: Ingests) -> None:
    status = status_of(ingests.store, ingests.home)
    lines = status.splitlines()
    assert "  errors:    1 EmptyFileError" in lines
    assert any(line.startswith("  indexed:   ") and "chunks in the search index" in line
               for line in lines)


def test_embeddings_off_is_said_by_ingest_and_status(ingests: Ingests) -> None:
    for stdout in (ingests.first, ingests.second, ingests.third):
        assert EMBEDDINGS_SET_OFF in stdout.splitlines()
    assert EMBEDDINGS_SET_OFF.startswith("embeddings: off (")
    status = run_cli("status", home=ingests.home, store=ingests.store, **OFF)
    assert status.returncode == 0 and EMBEDDINGS_SET_OFF in status.stdout.splitlines()
    rows = ContentStore(ingests.store).query(
        "SELECT count(*) AS n FROM chunk_embeddings"
    ).to_pylist()
    assert rows == [{"n": 0}]  # no rows without vectors


def test_vector_search_without_embeddings_says_so(ingests: Ingests) -> None:
    # Off in this environment: the query cannot be embedded.
    off = run_cli("search", "handbook", "--mode", "vector", home=ingests.home,
                  store=ingests.store, **OFF)
    assert off.returncode == 1 and off.stdout == "" and "Traceback" not in off.stderr
    assert "error: no vector search: embeddings are off here" in off.stderr
    # On here (the offline model of the dev install), but the store holds no vector.
    on = run_cli("search", "handbook", "--mode", "vector", home=ingests.home,
                 store=ingests.store, CONTENT_EMBEDDER="wordllama")
    assert on.returncode == 1 and on.stdout == ""
    assert "error: no vector search: there are no embeddings in this store" in on.stderr


def test_hybrid_search_without_embeddings_says_it_is_bm25_only(ingests: Ingests) -> None:
    done = run_cli("search", "QREPORT", home=ingests.home, store=ingests.store, **OFF)
    assert done.returncode == 0, done.stderr
    assert "note: hybrid search is BM25 only: embeddings are off here" in done.stderr
    assert "renamed.txt" not in done.stdout and "new01.txt" in done.stdout
