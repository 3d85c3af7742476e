"""SVG text comes from the XML, whether or not the drawing can be rendered.

A drawing resvg cannot render (a size it rejects) keeps its text; the failed render is a note
on the row, not its error. Dangerous markup is still the row's error.
"""

from __future__ import annotations

from pathlib import Path

from content_core.extract import extract_text
from content_core.pipeline.config import ProcessingConfig
from content_core.pipeline.stages.normalised_artifacts.worker import (
    ArtifactRecord,
    FileInput,
    process_files,
)
from content_core.store import NormalisedArtifactRow
from content_core.store.blobs import BlobStore
from content_core.store.tables import NORMALISED_ARTIFACTS, rows_to_table
from tests.fixtures.corpus import CORPUS, manifest_rows

SVG = "image/svg+xml"
NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def _drawing(size: str, body: str) -> bytes:
    return f'<?xml version="1.0"?><svg {NS} {size}>{body}</svg>'.encode()


TEXT_BODY = (
    "<title>Org chart QXT01</title><desc>Who reports to whom</desc>"
    '<defs><path id="arc" d="M10 80 Q 95 10 180 80"/></defs>'
    '<text x="10" y="20">Head of <tspan font-weight="bold">sales</tspan> QXT02'
    '<tspan x="10" dy="1.2em">Second line QXT03</tspan></text>'
    '<text><textPath xlink:href="#arc">Along the arc QXT04</textPath></text>'
)


def _process(tmp_path: Path, name: str, data: bytes) -> list[ArtifactRecord]:
    path = tmp_path / name
    path.write_bytes(data)
    [records] = process_files(
        [FileInput(key=name, path=path, filename=name)],
        ProcessingConfig(isolate=False),
        blob_store=BlobStore(tmp_path / "blobs"),
    )
    return records


def test_text_tspan_textpath_title_and_desc_in_document_order() -> None:
    text = extract_text(_drawing('width="200" height="100"', TEXT_BODY), SVG).text
    assert text.splitlines() == [
        "Org chart QXT01",
        "Who reports to whom",
        "Head of sales QXT02",
        "Second line QXT03",
        "Along the arc QXT04",
    ]


def test_rendered_svg_has_text_and_a_png_rendition(tmp_path: Path) -> None:
    records = _process(tmp_path, "chart.svg", _drawing('width="200" height="100"', TEXT_BODY))
    assert [r.media_type for r in records] == [SVG, "image/png"]
    assert "Second line QXT03" in (records[0].text or "")
    assert all(r.error_type is None and r.notes == () for r in records)


def test_svg_with_a_size_resvg_rejects_keeps_its_text_and_notes_the_render(
    tmp_path: Path,
) -> None:
    records = _process(tmp_path, "zero.svg", _drawing('width="0mm" height="5mm"', TEXT_BODY))
    [record] = records  # no PNG rendition
    assert record.error_type is None and record.stage is None
    assert "Head of sales QXT02" in (record.text or "")
    [note] = record.notes
    assert note.startswith("ImageConversionError:") and "invalid size" in note


def test_svg_with_an_undrawable_declared_size_keeps_its_text(tmp_path: Path) -> None:
    [record] = _process(tmp_path, "huge.svg", _drawing('width="10foo" height="1e40"', TEXT_BODY))
    assert record.error_type is None
    assert "Along the arc QXT04" in (record.text or "")
    assert "cannot be drawn" in record.notes[0]


def test_svg_with_unknown_units_renders(tmp_path: Path) -> None:
    # resvg reads "10foo" as a default size: drawn, with its text.
    records = _process(tmp_path, "foo.svg", _drawing('width="10foo" height="20"', TEXT_BODY))
    assert [r.media_type for r in records] == [SVG, "image/png"]
    assert "QXT01" in (records[0].text or "")


def test_svg_with_an_external_entity_is_refused_and_reads_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-QXT09")
    data = (
        f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "{secret.as_uri()}">]>'
        f'<svg {NS} width="10" height="10"><text>&x;</text></svg>'
    ).encode()
    [record] = _process(tmp_path, "xxe.svg", data)
    assert record.error_type == "UnsafeInputError"
    assert "external entity" in (record.error_message or "")
    assert "SECRET-QXT09" not in (record.text or "") + " ".join(record.notes)


def test_corpus_svgs_give_their_text(tmp_path: Path) -> None:
    rows = [r for r in manifest_rows() if r["path"].startswith("svg/") and r["must_contain"]]
    assert rows
    for row in rows:
        name = Path(row["path"]).name
        [first, *_] = _process(tmp_path, name, (CORPUS / row["path"]).read_bytes())
        assert first.error_type is None, first
        assert row["must_contain"] in (first.text or "")


def test_notes_reach_the_normalised_artifacts_table() -> None:
    def row(path: str, notes: tuple[str, ...]) -> NormalisedArtifactRow:
        return NormalisedArtifactRow(
            batch_id="b", source_id="s", path=path, path_bytes=path.encode(), artifact_id=path,
            derived_from=(), kind="image", media_type=SVG, filename=path, page_count=None,
            text="t", pages=(), text_status="ok", notes=notes, raw_sha256=path, fingerprint="f",
        )

    rows = [row("p", ("ImageConversionError: not rendered",)), row("q", ())]
    table = rows_to_table(NORMALISED_ARTIFACTS, rows)
    assert table.column("notes").to_pylist() == [["ImageConversionError: not rendered"], []]
