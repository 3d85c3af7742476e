"""Damaged pictures through the real `content-pipeline ingest`: a JPEG cut short, a TIFF whose
directory chain loops, an SVG declaring a huge canvas and one whose `<use>` refers to itself
are error rows of `normalised_artifacts` with their cause, beside a clean photo that is
`no_text_layer` (tests/core/test_damaged_media.py covers the rules one by one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from content_core.store import ContentStore
from tests.fixtures import damaged
from tests.support.cli import run_cli

# One ingest of the real CLI; it may take a minute on a loaded machine.
pytestmark = pytest.mark.timeout(900)


def test_ingest_records_damaged_pictures_as_errors(tmp_path: Path) -> None:
    folder = tmp_path / "pictures"
    folder.mkdir()
    files = {
        "cut.jpg": damaged.cut_photo_jpeg(),
        "loop.tif": damaged.looping_tiff(),
        "huge.svg": damaged.huge_canvas_svg(),
        "self-use.svg": damaged.self_use_svg(),
        "clean.jpg": damaged.clean_photo(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    store, home = tmp_path / "store", tmp_path / "home"
    done = run_cli("ingest", str(folder), home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr

    rows = ContentStore(store).query(
        "SELECT path, filename, text_status, error_type, error_message, stage, notes "
        "FROM current_normalised_artifacts ORDER BY path, filename"
    ).to_pylist()
    # One row per file: nothing decoded of a damaged picture is kept as a rendition.
    assert [row["path"] for row in rows] == sorted(files)
    got = {row["path"]: (row["text_status"], row["error_type"], row["stage"]) for row in rows}
    assert got == {
        "clean.jpg": ("no_text_layer", None, None),
        "cut.jpg": ("error", "CorruptFileError", "normalise"),
        "huge.svg": ("error", "LimitExceededError", "normalise"),
        "loop.tif": ("error", "CorruptFileError", "normalise"),
        "self-use.svg": ("error", "CorruptFileError", "normalise"),
    }
    messages = {row["path"]: row["error_message"] or "" for row in rows}
    assert "JPEG is truncated" in messages["cut.jpg"]
    assert "chain loops" in messages["loop.tif"]
    assert "max_image_pixels" in messages["huge.svg"]
    assert "refers back to itself" in messages["self-use.svg"]
    clean = next(row for row in rows if row["path"] == "clean.jpg")
    assert clean["error_message"] is None and list(clean["notes"] or []) == []
