"""content_core.logs: what libraries log or warn in a `library_notes` block becomes notes and
stays off the console (unless the root logger is below WARNING), our own records stay as they
are, and a library's logging set-up on import is undone."""

from __future__ import annotations

import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import content_core
from content_core.logs import MAX_NOTES, library_notes, root_logging_kept
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# A warning is ours when raised from a module of content_core.
OWN_MODULE = Path(content_core.__file__).parent / "extract" / "pdf.py"


@pytest.fixture
def console() -> Iterator[io.StringIO]:
    """A stderr-like handler on the root logger at WARNING, as the CLI sets it up."""
    root = logging.getLogger()
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        yield out
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_a_library_warning_is_a_note_and_ours_is_shown(console: io.StringIO) -> None:
    with library_notes() as heard:
        logging.getLogger("somelib.parser").warning("bad sector %d", 7)
        logging.getLogger("somelib.parser").info("below WARNING: neither note nor line")
        logging.getLogger("content_core.tests").warning("ours QLOG-01")
    assert heard.notes == ("somelib.parser warning: bad sector 7",)
    assert console.getvalue() == "WARNING:content_core.tests:ours QLOG-01\n"
    logging.getLogger("somelib.parser").warning("outside a block QLOG-02")
    assert "somelib.parser:outside a block QLOG-02" in console.getvalue()


def test_below_warning_the_console_shows_library_records_too(console: io.StringIO) -> None:
    logging.getLogger().setLevel(logging.DEBUG)  # the CLI's -v
    with library_notes() as heard:
        logging.getLogger("somelib").error("broken QLOG-03")
    assert heard.notes == ("somelib error: broken QLOG-03",)
    assert "ERROR:somelib:broken QLOG-03" in console.getvalue()


def test_a_nested_block_takes_what_is_logged_inside_it(console: io.StringIO) -> None:
    with library_notes() as outer:
        logging.getLogger("somelib").warning("about the file")
        with library_notes() as inner:
            logging.getLogger("somelib").warning("about a member")
    assert outer.notes == ("somelib warning: about the file",)
    assert inner.notes == ("somelib warning: about a member",)
    assert console.getvalue() == ""


def test_notes_are_deduplicated_capped_and_kept_on_one_clean_line(console: io.StringIO) -> None:
    log = logging.getLogger("somelib")
    with library_notes() as heard:
        log.warning("same")
        log.warning("same")
        log.warning("raw\x00bytes\nover two lines")
        for number in range(MAX_NOTES + 3):
            log.warning("object %d not defined", number)
    notes = heard.notes
    assert notes[:2] == ("somelib warning: same", "somelib warning: raw\ufffdbytes over two lines")
    assert len(notes) == MAX_NOTES + 1 and notes[-1] == "... and 5 more library messages"


def test_library_warnings_are_notes_and_ours_are_shown() -> None:
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with library_notes() as heard:
            warnings.warn_explicit("odd font QLOG-04", UserWarning, "/lib/somelib/fonts.py", 3)
            warnings.warn_explicit("ours QLOG-05", UserWarning, str(OWN_MODULE), 9)
    assert heard.notes == ("UserWarning: odd font QLOG-04",)
    assert [str(w.message) for w in shown] == ["ours QLOG-05"]


def test_a_library_configuring_logging_on_import_is_undone() -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    with root_logging_kept():
        root.addHandler(logging.StreamHandler(io.StringIO()))
        root.setLevel(logging.INFO)  # as wordllama's basicConfig(level=INFO) does
    assert (list(root.handlers), root.level) == before


def test_process_files_puts_what_pypdf_said_on_the_file_row(
    tmp_path: Path, console: io.StringIO
) -> None:
    memo = (CORPUS / "pdf" / "fake-memo.pdf").read_bytes()
    path = tmp_path / "no-objects.pdf"
    path.write_bytes(memo[:20] + b"\n" + memo[memo.index(b"\nxref") :])
    [records] = process_files(
        [FileInput(key="no-objects.pdf", path=path, filename="no-objects.pdf")],
        ProcessingConfig(isolate=False),
        blob_store=BlobStore(tmp_path / "blobs"),
    )
    [record] = records
    assert record.error_type == "CorruptFileError"
    assert "pypdf._reader warning: Cannot find \"/Root\" key in trailer" in record.notes
    assert "pypdf" not in console.getvalue()
