"""Tables through every chunker, before and after issue 31 (`bench_tables.py --chunks`).

Every corpus file whose extracted text holds a Markdown or HTML table is chunked by each
chunker at several budgets, twice: as the chunkers are ("after": tables cut between rows,
header repeated) and with the table scan turned off in this process ("before": the packer
alone, as the chunkers were before tables were kept whole). Per budget and chunker it prints
the table rows cut (a row not whole in exactly one chunk), of which how many were cut on
purpose because they do not fit the room left (budget less breadcrumb and repeated header)
and are flagged `table_row_split` in every chunk holding a piece of them (a cut not flagged
is a bug: the count must be 0), budget violations (a chunk's
exact token count over the budget or not the one recorded), parts that repeat a header, and
throughput in characters per CPU second.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from content_core.binary.sniff import sniff_media_type
from content_core.chunking import (
    CharacterChunker,
    Chunk,
    Chunker,
    CodeChunker,
    HierarchicalChunker,
    MarkdownChunker,
    RecursiveChunker,
    TextChunker,
)
from content_core.chunking import markdown as markdown_module
from content_core.chunking import recursive as recursive_module
from content_core.chunking import text as text_module
from content_core.chunking._tables import Table, find_tables
from content_core.errors import ContentError
from content_core.extract import extract_text
from content_core.tokens import TokenEstimator, count_tokens

EXACT = TokenEstimator(encoding_name="cl100k_base")
BUDGETS = (64, 128, 256, 512)

CHUNKERS: dict[str, Callable[[int], Chunker]] = {
    "markdown": lambda b: MarkdownChunker(max_chunk_tokens=b, chunk_overlap=b // 8),
    "token": lambda b: TextChunker(chunk_size=b, chunk_overlap=b // 8, strategy="token"),
    "paragraph": lambda b: TextChunker(chunk_size=b, chunk_overlap=b // 8, strategy="paragraph"),
    "recursive": lambda b: RecursiveChunker(chunk_size=b, chunk_overlap=b // 8, tokenizer=EXACT),
    "character": lambda b: CharacterChunker(chunk_size=b, chunk_overlap=b // 8, tokenizer=EXACT),
    "code": lambda b: CodeChunker(chunk_size=b, chunk_overlap=b // 8, tokenizer=EXACT),
    "hierarchical": lambda b: HierarchicalChunker(
        chunk_size=b, chunk_overlap=b // 8, parent_chunk_size=3 * b, tokenizer=EXACT
    ),
}


@dataclass
class Tally:
    rows: int = 0
    cut: int = 0
    flagged: int = 0
    over: int = 0
    repeated: int = 0
    chars: int = 0
    cpu_s: float = 0.0


def table_texts() -> dict[str, tuple[str, list[Table]]]:
    """Corpus files whose text holds tables: name -> (text, tables)."""
    from tests.fixtures.corpus import CORPUS, manifest_rows

    found: dict[str, tuple[str, list[Table]]] = {}
    for row in manifest_rows():
        data = (CORPUS / row["path"]).read_bytes()
        try:
            text = extract_text(data, sniff_media_type(data, filename=row["path"])).text
        except ContentError:
            continue
        tables = find_tables(text)
        if tables:
            found[row["path"]] = (text, tables)
    return found


@contextmanager
def tables_off() -> Iterator[None]:
    """The chunkers as they were before issue 31: no table is seen."""
    modules = (text_module, recursive_module, markdown_module)
    saved = [m.find_tables for m in modules]
    for module in modules:
        module.find_tables = lambda text: []  # type: ignore[assignment]
    try:
        yield
    finally:
        for module, original in zip(modules, saved, strict=True):
            module.find_tables = original  # type: ignore[assignment]


def measure(chunks: list[Chunk], text: str, tables: list[Table], budget: int, tally: Tally) -> None:
    for chunk in chunks:
        exact = count_tokens(chunk.content)
        if exact > budget or chunk.metadata.get("token_count") != exact:
            tally.over += 1
        if chunk.metadata.get("table_part", 1) > 1 and chunk.metadata.get("prefix_chars", 0):
            tally.repeated += 1
    for table in tables:
        for a, b in table.rows:
            tally.rows += 1
            holders = [c for c in chunks if c.source_start < b and a < c.source_end]
            whole = [c for c in holders if c.source_start <= a and b <= c.source_end]
            if len(whole) != 1 or len(holders) != 1:
                tally.cut += 1
                if all(c.metadata.get("table_row_split") for c in holders):
                    tally.flagged += 1


def run(texts: dict[str, tuple[str, list[Table]]], budget: int, name: str) -> Tally:
    tally = Tally()
    chunker = CHUNKERS[name](budget)
    for text, tables in texts.values():
        started = time.process_time()
        chunks = chunker.chunk(text)
        tally.cpu_s += time.process_time() - started
        tally.chars += len(text)
        if name == "hierarchical":
            chunks = [c for c in chunks if c.metadata.get("hierarchy") != "parent"]
        measure(chunks, text, tables, budget, tally)
    return tally


def compare_table_chunks() -> None:
    """Print rows cut, violations and throughput before and after, per budget and chunker."""
    texts = table_texts()
    rows = sum(len(t.rows) for _, tables in texts.values() for t in tables)
    n_tables = sum(len(tables) for _, tables in texts.values())
    print(f"{len(texts)} corpus files with {n_tables} tables, {rows} table rows")
    print(
        f"{'budget':>6} {'chunker':<13} {'cut before':>10} {'cut after':>9} {'flagged':>9} "
        f"{'over b/a':>8} {'repeated':>8} {'kchar/s before':>14} {'kchar/s after':>13}"
    )
    totals = {"before": Tally(), "after": Tally()}
    for budget in BUDGETS:
        for name in CHUNKERS:
            with tables_off():
                before = run(texts, budget, name)
            after = run(texts, budget, name)
            for key, tally in (("before", before), ("after", after)):
                total = totals[key]
                total.rows += tally.rows
                total.cut += tally.cut
                total.flagged += tally.flagged
                total.over += tally.over
            speed_before = before.chars / before.cpu_s / 1000
            speed_after = after.chars / after.cpu_s / 1000
            print(
                f"{budget:>6} {name:<13} {before.cut:>10} {after.cut:>9} {after.flagged:>9} "
                f"{before.over:>3}/{after.over:<4} {after.repeated:>8} "
                f"{speed_before:>14.0f} {speed_after:>13.0f}"
            )
    b, a = totals["before"], totals["after"]
    print(
        f"all: rows cut {b.cut} of {b.rows} before, {a.cut} after ({a.flagged} larger than "
        f"the room left, split and flagged); budget violations {b.over} before, {a.over} after"
    )
