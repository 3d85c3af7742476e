"""End to end: `content-pipeline ingest` of real PDFs writes their page furniture to the
`page_furniture` column of normalised_artifacts, and keeps it out of `text`."""

from __future__ import annotations

import shutil
from pathlib import Path

from content_core.store import ContentStore
from tests.support.cli import run_cli

CORPUS = Path(__file__).parents[1] / "corpus"


def test_ingest_writes_page_furniture_beside_the_text(tmp_path: Path) -> None:
    """A 4-page LaTeX document's page numbers, an arXiv paper's margin stamp and its running
    head (on its one page that has it), as DuckDB reads them back from the store; the other
    rows of the batch carry an empty list."""
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    folder.mkdir()
    shutil.copy(CORPUS / "layout" / "004-pdflatex-4-pages" / "pdflatex-4-pages.pdf", folder)
    shutil.copy(CORPUS / "pdf" / "layout-parser-paper-fast.pdf", folder)
    (folder / "notes.txt").write_text("Plain notes have no pages and no furniture.\n")
    done = run_cli("ingest", str(folder), home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = (
        ContentStore(store)
        .query("SELECT path, page_furniture, text FROM current_normalised_artifacts ORDER BY path")
        .to_pylist()
    )
    by_path = {row["path"]: row for row in rows}
    assert set(by_path) == {"layout-parser-paper-fast.pdf", "notes.txt", "pdflatex-4-pages.pdf"}
    numbers = by_path["pdflatex-4-pages.pdf"]["page_furniture"]
    assert numbers == [{"page": n, "kind": "page_number", "text": str(n)} for n in range(1, 5)]
    stamp = {"page": 1, "kind": "margin", "text": "arXiv:2103.15348v2 [cs.CV] 21 Jun 2021"}
    head = {"page": 2, "kind": "header", "text": "2 Z. Shen et al."}
    assert by_path["layout-parser-paper-fast.pdf"]["page_furniture"] == [stamp, head]
    assert "arXiv:2103.15348v2" not in by_path["layout-parser-paper-fast.pdf"]["text"]
    assert by_path["notes.txt"]["page_furniture"] == []
