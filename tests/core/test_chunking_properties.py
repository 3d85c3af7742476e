"""Property tests for the chunking guarantees: hard budget, nothing lost, exact offsets and
bounded overlap, over random text, Markdown and code."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from content_core.chunking import (
    CharacterChunker,
    Chunk,
    CodeChunker,
    HierarchicalChunker,
    MarkdownChunker,
    RecursiveChunker,
    TextChunker,
    chunk_text,
)
from content_core.chunking._measure import TokenMeasure
from content_core.chunking._tables import find_tables
from content_core.tokens import TokenEstimator, count_tokens

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXACT = TokenEstimator(encoding_name="cl100k_base")

# Characters that stress the tokenizer's pre-splitting: letters, digits, spaces of several
# kinds, newlines, punctuation, apostrophes, accents, CJK, an emoji and a lone surrogate.
_ALPHABET = st.sampled_from(
    list("abcdefghij XYZ0123456789  \n\n\t.,;:!?'\"()[]{}#-*_`|/\\")
    + ["é", "ü", "ß", "中", "文", "。", "😀", "\r\n", "  ", "...", "'s", "n't", "\u00a0", "\ud800"]
)
_WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "x", "42", "don't", "e.g.", "naïve", "数据", "end."]
)


def random_text(max_size: int = 1500) -> st.SearchStrategy[str]:
    """Arbitrary text built from tokenizer-hostile characters."""
    return st.lists(_ALPHABET, max_size=max_size).map("".join)


@st.composite
def markdown_text(draw: st.DrawFn) -> str:
    """Markdown with headings (some very long), paragraphs, lists, fences holding '#' lines,
    tables and setext headings."""
    blocks: list[str] = []
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(
            st.sampled_from(
                ["h", "p", "list", "fence", "table", "setext", "long_h", "big_table", "html_table"]
            )
        )
        words = " ".join(draw(st.lists(_WORDS, min_size=1, max_size=40)))
        if kind == "h":
            blocks.append("#" * draw(st.integers(1, 6)) + " " + words[:60])
        elif kind == "long_h":
            blocks.append("## " + " ".join(["verylongheadingword"] * draw(st.integers(20, 80))))
        elif kind == "p":
            blocks.append(words + ". " + draw(random_text(200)).replace("#", ""))
        elif kind == "list":
            blocks.append("\n".join(f"- {w}" for w in words.split()[:8]))
        elif kind == "fence":
            blocks.append("```python\n# not a heading\n" + words + "\n```")
        elif kind == "table":
            blocks.append("| a | b |\n|---|---|\n| # x | " + words[:30] + " |")
        elif kind in ("big_table", "html_table"):
            blocks.append(draw(table_text(html=kind == "html_table")))
        else:
            blocks.append(words[:40] + "\n===")
    return "\n\n".join(blocks)


@st.composite
def table_text(draw: st.DrawFn, html: bool = False) -> str:
    """A table of many rows (some long), perhaps under a "Table N" caption: Markdown, or
    HTML with a header row, maybe in thead/tbody."""
    cells = st.lists(_WORDS, min_size=1, max_size=12).map(" ".join)
    rows = draw(st.lists(st.tuples(cells, cells), min_size=1, max_size=30))
    caption = draw(st.sampled_from(["", "Table 1: Results", "**Table IV.** Costs"]))
    if html:
        sections = draw(st.booleans())
        head = "<tr><th>key</th><th>value</th></tr>"
        body = "\n".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows)
        if sections:
            table = f"<table>\n<thead>{head}</thead>\n<tbody>\n{body}\n</tbody>\n</table>"
        else:
            table = f"<table>\n{head}\n{body}\n</table>"
    else:
        lines = ["| key | value |", "|---|:---:|"] + [f"| {a} | {b} |" for a, b in rows]
        table = "\n".join(lines)
    return f"{caption}\n\n{table}" if caption else table


@st.composite
def code_text(draw: st.DrawFn) -> str:
    """Python-like or brace-language source, not necessarily valid."""
    parts: list[str] = []
    for i in range(draw(st.integers(1, 10))):
        body = " ".join(draw(st.lists(_WORDS, min_size=1, max_size=20)))
        style = draw(st.sampled_from(["py", "pyclass", "js", "junk"]))
        if style == "py":
            parts.append(f"@decorator\ndef f{i}(x):\n    # {body}\n    return x + {i}\n")
        elif style == "pyclass":
            parts.append(f"class C{i}:\n    def m(self):\n        return '{body}'\n")
        elif style == "js":
            parts.append(f"export function g{i}(a) {{\n  const s = '{body}';\n  return s;\n}}\n")
        else:
            parts.append(draw(random_text(300)))
    return "\n".join(parts)


# ----------------------------------------------------------------------------- checks


def check_offsets(text: str, chunks: Sequence[Chunk]) -> None:
    for i, chunk in enumerate(chunks):
        assert chunk.index == i and chunk.total_chunks == len(chunks)
        assert 0 <= chunk.source_start < chunk.source_end <= len(text)
        source = text[chunk.source_start : chunk.source_end]
        crumb = chunk.metadata.get("breadcrumb", "")
        crumb_prefix = crumb + "\n\n" if crumb else ""
        if "prefix_chars" in chunk.metadata:
            # A table's part: breadcrumb and repeated header before the slice, closing
            # markup after it.
            start = chunk.metadata["prefix_chars"]
            end = len(chunk.content) - chunk.metadata["suffix_chars"]
            assert chunk.content[start:end] == source
            assert chunk.content.startswith(crumb_prefix)
            head = chunk.content[len(crumb_prefix) : start]
            assert not head or head.startswith(("|", "<table"))
            continue
        assert chunk.content.endswith(source)
        prefix = chunk.content[: len(chunk.content) - len(source)]
        assert prefix == crumb_prefix


def check_rows_whole(text: str, chunks: Sequence[Chunk], budget: int) -> None:
    """Every table row lies whole in exactly one chunk, unless it was cut because it is
    larger than the budget on its own (then every chunk holding part of it says so)."""
    for table in find_tables(text):
        for a, b in table.rows:
            holders = [c for c in chunks if c.source_start < b and a < c.source_end]
            whole = [c for c in holders if c.source_start <= a and b <= c.source_end]
            if len(whole) == 1 and len(holders) == 1:
                assert holders[0].metadata["table"] is True
                continue
            assert all(c.metadata.get("table_row_split") for c in holders), text[a:b]


def check_nothing_lost(text: str, chunks: Sequence[Chunk]) -> None:
    covered = bytearray(len(text))
    for chunk in chunks:
        covered[chunk.source_start : chunk.source_end] = b"\x01" * (
            chunk.source_end - chunk.source_start
        )
    lost = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not lost, f"lost characters at {lost[:10]}: {[text[i] for i in lost[:10]]}"


def check_token_budget(chunks: Sequence[Chunk], budget: int) -> None:
    for chunk in chunks:
        exact = count_tokens(chunk.content)
        assert chunk.metadata["token_count"] == exact
        assert exact <= budget, (exact, budget, chunk.content)


def check_overlap(
    text: str, chunks: Sequence[Chunk], overlap: int, size: Callable[[str], int]
) -> None:
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        if nxt.source_start < prev.source_end:
            shared = text[nxt.source_start : prev.source_end]
            assert size(shared) <= overlap, (size(shared), overlap, shared)
            if nxt.metadata.get("token_count") is not None:
                assert nxt.overlap_tokens == count_tokens(shared)


def check_all(text: str, chunks: Sequence[Chunk], budget: int, overlap: int) -> None:
    check_offsets(text, chunks)
    check_nothing_lost(text, chunks)
    check_token_budget(chunks, budget)
    check_overlap(text, chunks, overlap, count_tokens)


budgets = st.integers(8, 120)


@st.composite
def budget_and_overlap(draw: st.DrawFn) -> tuple[int, int]:
    budget = draw(budgets)
    return budget, draw(st.integers(0, budget // 2))


# ----------------------------------------------------------------------------- properties


@SETTINGS
@given(text=random_text(3000), data=st.data())
def test_exact_span_count_matches_tiktoken(text: str, data: st.DataObject) -> None:
    doc = TokenMeasure().prepare(text)
    for _ in range(20):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, len(text)))
        assert doc.size(a, b) == count_tokens(text[a:b])


@SETTINGS
@given(
    text=st.one_of(random_text(), markdown_text(), table_text(), table_text(True)),
    sizes=budget_and_overlap(),
    strategy=st.sampled_from(["token", "sentence", "paragraph"]),
)
def test_text_chunker_guarantees(text: str, sizes: tuple[int, int], strategy: str) -> None:
    budget, overlap = sizes
    chunks = TextChunker(chunk_size=budget, chunk_overlap=overlap, strategy=strategy).chunk(text)
    check_all(text, chunks, budget, overlap)
    check_rows_whole(text, chunks, budget)


@SETTINGS
@given(text=markdown_text(), sizes=budget_and_overlap(), min_body=st.integers(0, 12))
def test_markdown_chunker_guarantees(text: str, sizes: tuple[int, int], min_body: int) -> None:
    budget, overlap = sizes
    budget = max(budget, 16)
    chunker = MarkdownChunker(
        max_chunk_tokens=budget, chunk_overlap=min(overlap, budget - 1), min_body_tokens=min_body
    )
    chunks = chunker.chunk(text)
    check_offsets(text, chunks)
    check_nothing_lost(text, chunks)
    check_token_budget(chunks, budget)
    check_rows_whole(text, chunks, budget)
    # Overlap applies between neighbours of one section (same breadcrumb).
    same = [
        (p, n)
        for p, n in zip(chunks, chunks[1:], strict=False)
        if p.metadata["breadcrumb"] == n.metadata["breadcrumb"]
    ]
    for prev, nxt in same:
        if nxt.source_start < prev.source_end:
            assert count_tokens(text[nxt.source_start : prev.source_end]) <= overlap


@SETTINGS
@given(text=random_text(), sizes=budget_and_overlap())
def test_markdown_chunker_on_arbitrary_text(text: str, sizes: tuple[int, int]) -> None:
    budget, overlap = sizes
    budget = max(budget, 16)
    chunks = MarkdownChunker(max_chunk_tokens=budget, chunk_overlap=min(overlap, 7)).chunk(text)
    check_offsets(text, chunks)
    check_nothing_lost(text, chunks)
    check_token_budget(chunks, budget)


@SETTINGS
@given(
    text=st.one_of(random_text(), code_text(), markdown_text(), table_text(), table_text(True)),
    sizes=budget_and_overlap(),
    name=st.sampled_from(["recursive", "character", "code", "hierarchical"]),
)
def test_ffai_chunkers_in_tokens(text: str, sizes: tuple[int, int], name: str) -> None:
    budget, overlap = sizes
    kwargs = {"chunk_size": budget, "chunk_overlap": overlap, "tokenizer": EXACT}
    chunker = {
        "recursive": RecursiveChunker,
        "character": CharacterChunker,
        "code": CodeChunker,
        "hierarchical": HierarchicalChunker,
    }[name](**kwargs)
    chunks = chunker.chunk(text)
    check_offsets(text, chunks)
    check_nothing_lost(text, chunks)
    check_token_budget(chunks, budget)
    if name != "hierarchical":
        check_overlap(text, chunks, overlap, count_tokens)
        check_rows_whole(text, chunks, budget)


@SETTINGS
@given(
    text=st.one_of(random_text(), code_text(), table_text(), table_text(True)),
    sizes=budget_and_overlap(),
    name=st.sampled_from(["recursive", "character", "code"]),
)
def test_ffai_chunkers_in_characters(text: str, sizes: tuple[int, int], name: str) -> None:
    budget, overlap = sizes
    cls = {"recursive": RecursiveChunker, "character": CharacterChunker, "code": CodeChunker}
    chunks = cls[name](chunk_size=budget, chunk_overlap=overlap).chunk(text)
    check_offsets(text, chunks)
    check_nothing_lost(text, chunks)
    assert all(len(c.content) <= budget for c in chunks)
    check_overlap(text, chunks, overlap, len)
    check_rows_whole(text, chunks, budget)


@SETTINGS
@given(
    text=st.one_of(random_text(), table_text(), table_text(True)),
    max_tokens=budgets,
    preserve_lines=st.booleans(),
)
def test_chunk_text_budget_and_coverage(text: str, max_tokens: int, preserve_lines: bool) -> None:
    pieces = chunk_text(text, max_tokens=max_tokens, model="gpt-4o", preserve_lines=preserve_lines)
    # gpt-4o counts in o200k_base: the budget holds in the model's own tokens
    assert all(count_tokens(p, "o200k_base") <= max_tokens for p in pieces)
    # Pieces follow the text in order; a table's part may repeat the header before its rows
    # and close an HTML table after them.
    tables = find_tables(text)
    heads = ["", *{h for t in tables for h in (t.head, t.bare) if h}]
    tails = ["", *{t.tail for t in tables if t.tail}]
    squeezed = "".join(text.split())
    # Where the text may have been read up to after each piece (a wrapper's text may also be
    # the source's own: `</table>` ends the last part).
    reached = {0}
    for piece in pieces:
        cores = {
            "".join(piece[len(h) : len(piece) - len(t)].split())
            for h in heads
            for t in tails
            if len(h) + len(t) < len(piece) and piece.startswith(h) and piece.endswith(t)
        }
        reached = {p + len(c) for p in reached for c in cores if c and squeezed.startswith(c, p)}
        assert reached, piece
    assert len(squeezed) in reached


_MD_LINES = st.sampled_from(
    [
        "# Title",
        "## Sub heading",
        "#no space",
        "   ### indented three",
        "    # indented code",
        "\t# tab code",
        "- # heading in list",
        "> # heading in quote",
        "1. # numbered heading",
        "text line",
        "another text line",
        "===",
        "---",
        "- item",
        "  continued item",
        "* star item",
        "```",
        "```python",
        "~~~",
        "~~~~",
        "    ```",
        "  ~~~",
        "   ```",
        "1. item",
        "   text in item",
        "  - nested",
        "<pre>",
        "</pre>",
        "<div>",
        "</div>",
        "<!--",
        "-->",
        '<p align="center">',
        "<table>",
        "</p>",
        "  <!-- a note -->",
        "<!-- comment -->",
        "<div>text ```",
        "<a href='x'>link</a>",
        "| a | b |",
        "|---|---|",
        "# | x | y |",
        "> quoted",
        "",
        "",
        "",
        "  ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_MD_LINES, max_size=60), crlf=st.booleans())
def test_heading_scan_matches_a_full_markdown_it_parse(lines: list[str], crlf: bool) -> None:
    from markdown_it import MarkdownIt

    from content_core.chunking._mdscan import line_starts, markdown_sections

    text = ("\r\n" if crlf else "\n").join(lines)
    starts = line_starts(text)
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    expected = [starts[t.map[0]] for t in tokens if t.type == "heading_open"]
    sections, _ = markdown_sections(text)
    assert [s.start for s in sections if s.path] == expected
