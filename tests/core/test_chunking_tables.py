"""Tables kept whole by every chunker (issue 31): Markdown pipe tables and HTML tables from
real corpus files are cut between rows only, each later part repeats the header, budgets and
offsets hold; a row larger than the budget alone is cut as a last resort and flagged."""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from content_core.binary.sniff import sniff_media_type
from content_core.chunking import (
    CharacterChunker,
    Chunk,
    Chunker,
    ChunkingConfig,
    CodeChunker,
    HierarchicalChunker,
    MarkdownChunker,
    RecursiveChunker,
    TextChunker,
    chunk_text,
)
from content_core.chunking._tables import Table, find_tables
from content_core.discovery import discover_pending
from content_core.extract import extract_text
from content_core.pipeline import PipelineConfig, run_batch
from content_core.pipeline.config import ProcessingConfig
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from content_core.tokens import TokenEstimator, count_tokens
from tests.fixtures.corpus import CORPUS

EXACT = TokenEstimator(encoding_name="cl100k_base")

# Corpus files whose extracted text holds tables, one per kind of source.
TABLE_FILES = [
    "csv/stanley-cups.csv",  # CSV: one Markdown table
    "tsv/stanley-cups-with-emoji.tsv",  # TSV with emoji cells
    "xlsx/2023-half-year-analyses-by-segment.xlsx",  # XLSX: five sheets, wide rows
    "xlsx/markitdown-test.xlsx",  # XLSX: a 23-row sheet
    "pdf/korean-text-with-tables.pdf",  # PDF: Korean HTML tables with a merged cell row
    "pdf/SPARSE-2024-INV-1234_borderless_table.pdf",  # PDF: borderless tables
    "layout/tables/merged-header.pdf",  # PDF: HTML table with a two-row header
    "layout/tables/page-break-repeated-header.pdf",  # PDF: a long ledger over a page break
    "html/example-steelJIS-datasheet-utf-16.html",  # HTML datasheet, UTF-16
    "html/example-10k-1p.html",  # XHTML 10-K excerpt with tables
    "docx/docx-tables.docx",  # DOCX: simple, nested and merged-cell tables
    "layout/tables/page-break.docx",  # DOCX: a 30-row ledger
]

CHUNKERS: dict[str, Callable[[int], Chunker]] = {
    "markdown": lambda b: MarkdownChunker(max_chunk_tokens=b, chunk_overlap=b // 8),
    "token": lambda b: TextChunker(chunk_size=b, chunk_overlap=b // 8, strategy="token"),
    "sentence": lambda b: TextChunker(chunk_size=b, chunk_overlap=b // 8, strategy="sentence"),
    "paragraph": lambda b: TextChunker(chunk_size=b, chunk_overlap=b // 8, strategy="paragraph"),
    "recursive": lambda b: RecursiveChunker(chunk_size=b, chunk_overlap=b // 8, tokenizer=EXACT),
    "character": lambda b: CharacterChunker(chunk_size=b, chunk_overlap=b // 8, tokenizer=EXACT),
    "code": lambda b: CodeChunker(chunk_size=b, chunk_overlap=b // 8, tokenizer=EXACT),
    "hierarchical": lambda b: HierarchicalChunker(
        chunk_size=b, chunk_overlap=b // 8, parent_chunk_size=3 * b, tokenizer=EXACT
    ),
}


@functools.cache
def corpus_text(name: str) -> str:
    data = (CORPUS / name).read_bytes()
    return extract_text(data, sniff_media_type(data, filename=name), filename=name).text


def row_budget(text: str, tables: Sequence[Table]) -> int:
    """A small budget that still holds every row under its repeated header (twice that, so
    a breadcrumb of up to a third of the budget leaves room), and at least 48 tokens."""
    need = max(
        count_tokens(t.head) + count_tokens(t.tail) + count_tokens(text[a:b])
        for t in tables
        for a, b in t.rows
    )
    return max(48, 2 * need)


def body(chunk: Chunk) -> str:
    """The chunk's content without what the chunker put around the source slice."""
    if "prefix_chars" in chunk.metadata:
        end = len(chunk.content) - chunk.metadata["suffix_chars"]
        return chunk.content[chunk.metadata["prefix_chars"] : end]
    crumb = chunk.metadata.get("breadcrumb")
    return chunk.content[len(crumb) + 2 :] if crumb else chunk.content


def check_tables(text: str, tables: Sequence[Table], chunks: Sequence[Chunk], budget: int) -> int:
    """Budgets, offsets, whole rows, repeated headers and well-formed HTML parts; returns
    the number of parts that repeat a header."""
    for chunk in chunks:
        assert chunk.metadata["token_count"] == count_tokens(chunk.content) <= budget
        assert body(chunk) == text[chunk.source_start : chunk.source_end]
    for table in tables:
        for a, b in table.rows:
            holders = [c for c in chunks if c.source_start <= a and b <= c.source_end]
            assert len(holders) == 1, (text[a:b], len(holders))
            assert holders[0].metadata["table"] is True
            assert not holders[0].metadata.get("table_row_split")
    repeated = 0
    for chunk in chunks:
        if not chunk.metadata.get("table"):
            continue
        table = next(t for t in tables if t.lead <= chunk.source_end and chunk.source_start < t.end)
        assert 1 <= chunk.metadata["table_part"] <= chunk.metadata["table_parts"]
        assert chunk.metadata["table_kind"] == table.kind
        crumb = chunk.metadata.get("breadcrumb")
        own = chunk.content[len(crumb) + 2 :] if crumb else chunk.content
        if chunk.source_start > table.start and chunk.metadata["prefix_chars"] > len(
            chunk.content
        ) - len(own):
            assert own.startswith((table.head, table.bare)), own[:200]
            repeated += 1
        if table.kind == "html":
            assert own.count("<table") == own.count("</table>") >= 1, own
    return repeated


@pytest.mark.parametrize("name", TABLE_FILES)
def test_corpus_tables_are_found(name: str) -> None:
    text = corpus_text(name)
    tables = find_tables(text)
    assert tables, name
    for table in tables:
        assert table.rows
        for a, b in table.rows:
            row = text[a:b]
            if table.kind == "markdown":
                assert row.startswith("|") and row.endswith("|"), row
            else:
                assert row.startswith("<tr") and row.endswith("</tr>"), row


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
@pytest.mark.parametrize("name", TABLE_FILES)
def test_corpus_tables_kept_whole(name: str, chunker: str) -> None:
    text = corpus_text(name)
    tables = find_tables(text)
    budget = row_budget(text, tables)
    chunks = CHUNKERS[chunker](budget).chunk(text)
    repeated = check_tables(text, tables, chunks, budget)
    # A table over the budget is split into parts, the later ones under its header again.
    big = [t for t in tables if count_tokens(text[t.start : t.end]) > budget]
    if big:
        assert any(c.metadata.get("table_parts", 1) > 1 for c in chunks)
        assert repeated > 0


@pytest.mark.parametrize("name", TABLE_FILES)
def test_chunk_text_keeps_rows_whole(name: str) -> None:
    text = corpus_text(name)
    tables = find_tables(text)
    budget = row_budget(text, tables)
    pieces = chunk_text(text, max_tokens=budget, model="gpt-3.5-turbo")
    assert all(count_tokens(p) <= budget for p in pieces)
    for table in tables:
        for a, b in table.rows:
            assert any(text[a:b] in p for p in pieces), text[a:b]


def ledger(rows: int, caption: str = "") -> str:
    lines = ["| Entry | Account | Amount |", "|---|---|---|"]
    lines += [f"| E-{100 + i} | account {i} | {i * 37}.00 |" for i in range(rows)]
    before = f"{caption}\n\n" if caption else ""
    return "Intro paragraph before the table.\n\n" + before + "\n".join(lines) + "\n\nAfter it."


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_caption_and_parts_in_metadata(chunker: str) -> None:
    text = ledger(40, caption="Table 3: Ledger of the northern transect")
    tables = find_tables(text)
    assert [t.caption for t in tables] == ["Table 3: Ledger of the northern transect"]
    chunks = CHUNKERS[chunker](96).chunk(text)
    check_tables(text, tables, chunks, 96)
    parts = [c for c in chunks if c.metadata.get("table")]
    assert max(c.metadata["table_parts"] for c in parts) > 1
    assert all(c.metadata["table_caption"] == tables[0].caption for c in parts)
    # The caption line goes with the table's first part.
    first = next(c for c in parts if c.metadata["table_part"] == 1)
    assert "Table 3: Ledger" in first.content


def test_html_caption_thead_and_tbody() -> None:
    rows = "\n".join(f"<tr><td>r{i}</td><td>{'cell text ' * 3}{i}</td></tr>" for i in range(30))
    text = (
        "Before.\n\n<table class=\"t\">\n<caption>Stations &amp; depths</caption>\n"
        "<thead><tr><th>Station</th><th>Notes</th></tr></thead>\n<tbody>\n"
        + rows
        + "\n</tbody>\n</table>\n\nAfter."
    )
    (table,) = find_tables(text)
    assert table.kind == "html" and table.caption == "Stations & depths"
    assert len(table.rows) == 30
    assert table.head.endswith("</thead>\n<tbody>\n")
    assert table.tail == "\n</tbody>\n</table>"
    chunks = TextChunker(chunk_size=120, chunk_overlap=10).chunk(text)
    assert check_tables(text, [table], chunks, 120) > 0
    for chunk in chunks:
        if chunk.metadata.get("table"):
            assert chunk.content.count("<tbody>") == chunk.content.count("</tbody>")


@pytest.mark.parametrize(
    "text",
    [
        "| a | b |\nno delimiter row\n| c | d |",  # pipes without a delimiter row
        "|---|---|\n| c | d |",  # a delimiter row without a header line
        "<table><tr><td>never closed",  # an HTML table that is never closed
        "a | b\n---|---\nc | d",  # GFM without outer pipes: not how extractors write it
        "<table>" * 500,  # openings never closed
        "<table " * 500,  # an opening tag that never ends
        "| a |\n|-|-|-" + "|-" * 500,  # almost a delimiter row
    ],
)
def test_not_tables(text: str) -> None:
    assert find_tables(text) == []


def test_closed_table_inside_an_unclosed_one_is_found() -> None:
    text = (
        "<table>\n<tr><td>open</td></tr>\n"
        "<table>\n<tr><th>k</th></tr>\n<tr><td>v</td></tr>\n</table>"
    )
    (table,) = find_tables(text)
    assert text[table.start : table.end].startswith("<table>\n<tr><th>k")
    assert [text[a:b] for a, b in table.rows] == ["<tr><td>v</td></tr>"]


def test_nested_html_table_belongs_to_its_row() -> None:
    text = (
        "<table>\n<tr><th>k</th><th>v</th></tr>\n"
        "<tr><td>a</td><td><table><tr><td>inner</td></tr></table></td></tr>\n"
        "<tr><td>b</td><td>2</td></tr>\n</table>"
    )
    (table,) = find_tables(text)
    assert [text[a:b][:12] for a, b in table.rows] == ["<tr><td>a</t", "<tr><td>b</t"]


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_row_larger_than_budget_is_split_and_flagged(chunker: str) -> None:
    wide = "| W-1 | " + " ".join(f"word{i}" for i in range(120)) + " |"
    text = ledger(6).replace("| E-103 |", wide + "\n| E-103 |")
    tables = find_tables(text)
    budget = 64
    chunks = CHUNKERS[chunker](budget).chunk(text)
    assert all(count_tokens(c.content) == c.metadata["token_count"] <= budget for c in chunks)
    assert all(body(c) == text[c.source_start : c.source_end] for c in chunks)
    split = [c for c in chunks if c.metadata.get("table_row_split")]
    assert len(split) >= 2
    (w_start,) = [a for a, b in tables[0].rows if text[a:b] == wide]
    covered = "".join(text[c.source_start : c.source_end] for c in split)
    assert "word0" in covered and "word119" in covered
    # Every other row is whole in one chunk.
    for a, b in tables[0].rows:
        if a != w_start:
            assert sum(c.source_start <= a and b <= c.source_end for c in chunks) == 1


def test_small_table_joins_the_text_before_it() -> None:
    text = "A short intro.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAnd then some prose after."
    chunks = TextChunker(chunk_size=200, chunk_overlap=0).chunk(text)
    table_end = text.index("\n\nAnd")
    assert [c.content for c in chunks] == [text[:table_end], "And then some prose after."]
    assert chunks[0].metadata["table"] is True and chunks[0].metadata["table_parts"] == 1


def test_text_without_tables_is_chunked_as_before() -> None:
    text = "Plain prose. " * 400
    chunks = TextChunker(chunk_size=50, chunk_overlap=5).chunk(text)
    assert not any("table" in c.metadata or "prefix_chars" in c.metadata for c in chunks)


def test_chunks_stage_stores_table_parts(tmp_path: Path, store: ContentStore) -> None:
    """The real stages over corpus files with tables: the stored chunks say which are table
    parts, their offsets map into the artifact text, and the stage report counts them."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("layout/tables/page-break.docx", "csv/stanley-cups.csv"):
        shutil.copy(CORPUS / name, folder / Path(name).name)
    config = PipelineConfig(
        processing=ProcessingConfig(isolate=False),
        chunking=ChunkingConfig(chunk_size=64, chunk_overlap=8),
    )
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="docs")
    found = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0)
    reports = [r for b in found.batch_ids for r in run_batch(store, b, config)]
    texts = {
        r["path"]: r["text"]
        for r in store.query("SELECT path, text FROM current_normalised_artifacts").to_pylist()
    }
    rows = store.query(
        "SELECT path, content, source_start, source_end, token_count, metadata "
        "FROM current_chunks ORDER BY path, index"
    ).to_pylist()
    parts = 0
    for row in rows:
        meta = json.loads(row["metadata"])
        assert row["token_count"] == count_tokens(row["content"]) <= 64
        source = texts[row["path"]][row["source_start"] : row["source_end"]]
        if meta.get("table"):
            parts += 1
            end = len(row["content"]) - meta["suffix_chars"]
            assert row["content"][meta["prefix_chars"] : end] == source
        else:
            assert row["content"].endswith(source)
    assert parts > 2
    (report,) = [r for r in reports if r.table == "chunks"]
    assert report.figures["table_chunks"] == parts
    assert report.figures["table_row_splits"] == 0
