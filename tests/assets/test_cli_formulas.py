"""A DOCX with equations through the real `content-pipeline ingest`: the stored text holds
the formulas as LaTeX, in place."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from content_core.store import ContentStore
from tests.fixtures.corpus import CORPUS
from tests.support.cli import run_cli

# One ingest in a subprocess of the real CLI; it may take a minute on a loaded machine.
pytestmark = pytest.mark.timeout(600)


def test_ingested_docx_keeps_its_equations_as_latex(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(CORPUS / "docx" / "libreoffice-formulas.docx", folder / "formulas.docx")
    store, home = tmp_path / "store", tmp_path / "home"
    done = run_cli("ingest", str(folder), home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = (
        ContentStore(store)
        .query("SELECT text FROM current_normalised_artifacts WHERE filename = 'formulas.docx'")
        .to_pylist()
    )
    assert len(rows) == 1
    text = rows[0]["text"]
    assert r"Formula frac marker1: $\frac{a}{b}$ end1." in text
    assert r"Formula sum marker4: $\sum_{i=1}^n i^2$ end4." in text
    assert "The display equation follows.\n\n$$E=mc^2$$\n\nAfter the display equation." in text
