"""Document titles: each format's own title field reaches `ExtractedText.title` (HTML `<title>`,
DOCX and ODF `dc:title`, PDF `/Title` or XMP, Word 95/97 SummaryInformation), a document that
declares none has none (never a guess), and the title reaches the normalised_artifacts row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from content_core.binary.sniff import sniff_media_type
from content_core.extract import Blob, ExtractOptions, SniffInfo, build_text, extract_text
from content_core.extract.pdf_fallback import PypdfExtractor
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import FileInput, process_files
from content_core.store.blobs import BlobStore
from tests.fixtures.titled import (
    titled_doc,
    titled_docx,
    titled_html,
    titled_odt,
    titled_pdf,
    titled_pdf_xmp,
)

BODY = "Body paragraph QT100 without the heading words"


def _extract(name: str, data: bytes) -> tuple[str, str | None]:
    """(handler, title) of `data` dispatched by its sniffed type."""
    result = extract_text(data, sniff_media_type(data, filename=name), filename=name)
    assert "QT100" in result.text  # the body is still read
    return result.handler, result.title


@pytest.mark.parametrize(
    ("name", "build", "handler", "expected"),
    [
        # White space inside <title> collapses; the SVG's own <title> is not the page's.
        ("page.html", lambda: titled_html(" Harbour\n  QT201  survey ", BODY), "html",
         "Harbour QT201 survey"),
        ("report.docx", lambda: titled_docx("Annual QT202 ledger", BODY), "docx",
         "Annual QT202 ledger"),
        ("notes.odt", lambda: titled_odt("Field QT203 notebook", BODY), "odf",
         "Field QT203 notebook"),
        ("scan.pdf", lambda: titled_pdf("Railway QT204 timetable", BODY), "pdfium",
         "Railway QT204 timetable"),
        # No /Title in the information dictionary: XMP's x-default entry, not the French one.
        ("xmp.pdf", lambda: titled_pdf_xmp("Valley QT205 atlas", BODY), "pdfium",
         "Valley QT205 atlas"),
        ("old.doc", lambda: titled_doc("Weather QT206 diary", BODY), "doc",
         "Weather QT206 diary"),
    ],
)
def test_each_format_reads_its_own_title(
    name: str, build: Callable[[], bytes], handler: str, expected: str
) -> None:
    assert _extract(name, build()) == (handler, expected)


@pytest.mark.parametrize(
    ("name", "build"),
    [
        # The SVG title is the only <title>: a drawing's caption is not the page's title.
        ("page.html", lambda: b"<html><body><p>" + BODY.encode() + b"</p>"
         b"<svg><title>drawing caption</title></svg></body></html>"),
        # python-docx would make up "Word Document" for a package without core properties.
        ("report.docx", lambda: titled_docx(None, BODY)),
        ("notes.odt", lambda: titled_odt(None, BODY)),
        ("scan.pdf", lambda: titled_pdf(None, BODY)),
    ],
)
def test_a_document_without_a_title_has_none(name: str, build: Callable[[], bytes]) -> None:
    assert _extract(name, build())[1] is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (titled_pdf("Summit QT207 minutes", BODY), "Summit QT207 minutes"),
        (titled_pdf_xmp("Orchard QT208 ledger", BODY), "Orchard QT208 ledger"),
    ],
    ids=["info", "xmp"],
)
def test_the_pypdf_fallback_reads_the_title_too(data: bytes, expected: str) -> None:
    blob = Blob(data=data, info=SniffInfo(media_type="application/pdf"))
    assert PypdfExtractor().extract(blob, ExtractOptions()).title == expected


def test_a_title_is_one_clean_line_of_bounded_length() -> None:
    result = build_text(["text"], handler="t", paged=False, title=" a\x00b\r\n\tc " + "x" * 5000)
    assert result.title is not None and result.title.startswith("ab c x")
    assert len(result.title) == 1_000
    assert build_text(["text"], handler="t", paged=False, title=" \n ").title is None


def test_the_title_reaches_the_artifact_record(tmp_path: Path) -> None:
    path = tmp_path / "report.docx"
    path.write_bytes(titled_docx("Lighthouse QT209 inventory", BODY))
    item = FileInput(key="k", path=path, filename="report.docx")
    ((record,),) = process_files(
        [item], ProcessingConfig(isolate=False), blob_store=BlobStore(tmp_path / "blobs")
    )
    assert (record.title, record.text_status) == ("Lighthouse QT209 inventory", "ok")
