"""Seed behaviours of every chunker: Firefly's, FFAI's and remdb's examples, plus the config."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import content_core
from content_core.chunking import (
    CharacterChunker,
    Chunk,
    Chunker,
    ChunkingConfig,
    CodeChunker,
    DocumentSplitter,
    HierarchicalChunker,
    ImageTiler,
    MarkdownChunker,
    RecursiveChunker,
    TextChunker,
    build_chunker,
    chunk_text,
    get_chunker,
    list_chunkers,
    smart_chunk_text,
)
from content_core.tokens import TokenEstimator, count_tokens

EXACT = TokenEstimator(encoding_name="cl100k_base")
PYTHON_TEXT = "Python is a programming language. " * 20
SEED_MD = """# Introduction

Python is versatile.

## Setup

Install with pip.

## Usage

Import and initialize.
"""
SEED_CODE = """
def hello():
    return "hello"

def goodbye():
    return "goodbye"

class Greeter:
    def greet(self):
        return "hi"
"""


def test_chunking_all_is_sorted_and_resolves() -> None:
    assert content_core.chunking.__all__ == sorted(content_core.chunking.__all__)
    assert all(hasattr(content_core.chunking, name) for name in content_core.chunking.__all__)


def test_public_names_import_from_content_core() -> None:
    for name in (
        "TextChunker",
        "MarkdownChunker",
        "RecursiveChunker",
        "get_chunker",
        "smart_chunk_text",
        "ImageTiler",
        "DocumentSplitter",
        "HierarchicalChunker",
        "ChunkingConfig",
        "build_chunker",
    ):
        assert getattr(content_core, name) is getattr(content_core.chunking, name)


# ----------------------------------------------------------------------------- FFAI


def test_ffai_recursive_example_shape() -> None:
    chunks = RecursiveChunker(chunk_size=100, chunk_overlap=20).chunk(PYTHON_TEXT)
    spans = [(c.chunk_index, c.start_char, c.end_char) for c in chunks[:3]]
    assert spans == [(0, 0, 100), (1, 92, 170), (2, 160, 238)]
    # Each chunk is the exact slice; the second keeps the separator's trailing space.
    assert [len(c.content) for c in chunks[:3]] == [100, 78, 78]
    assert all(c.content == PYTHON_TEXT[c.start_char : c.end_char] for c in chunks)
    assert chunks[-1].end_char == len(PYTHON_TEXT)


def test_list_and_get_chunker() -> None:
    # FFAI's five in FFAI's order, then Firefly's TextChunker strategies.
    assert list_chunkers()[:5] == ["character", "recursive", "markdown", "code", "hierarchical"]
    assert list_chunkers()[5:8] == ["token", "sentence", "paragraph"]
    assert isinstance(get_chunker("sentence"), TextChunker)
    for name in list_chunkers():
        assert isinstance(get_chunker(name, chunk_size=200, chunk_overlap=20), Chunker)
    assert isinstance(get_chunker("recursive"), RecursiveChunker)
    with pytest.raises(ValueError, match="unknown chunker"):
        get_chunker("semantic")
    with pytest.raises(ValueError, match="bad arguments"):
        get_chunker("recursive", chunk_sise=3)


def test_character_chunker_fixed_windows() -> None:
    chunks = CharacterChunker(chunk_size=200, chunk_overlap=50).chunk(PYTHON_TEXT)
    assert [(c.start_char, c.end_char) for c in chunks] == [
        (0, 200),
        (150, 350),
        (300, 500),
        (450, 650),
        (600, 680),
    ]


def test_sizes_in_tokens_with_a_tokenizer() -> None:
    chunker = get_chunker("recursive", chunk_size=30, chunk_overlap=5, tokenizer=EXACT)
    chunks = chunker.chunk(PYTHON_TEXT)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.metadata["token_count"] == count_tokens(chunk.content) <= 30
    assert all(c.overlap_tokens <= 5 for c in chunks)
    with pytest.raises(ValueError, match="exactly"):
        RecursiveChunker(tokenizer=TokenEstimator())


def test_markdown_chunker_ffai_form_counts_characters() -> None:
    chunker = get_chunker("markdown", chunk_size=500, chunk_overlap=50)
    chunks = chunker.chunk(SEED_MD)
    assert [c.content.split("\n")[0] for c in chunks] == [
        "Introduction",
        "Introduction > Setup",
        "Introduction > Usage",
    ]
    assert "token_count" not in chunks[0].metadata


def test_code_chunker_cuts_at_definitions() -> None:
    chunks = CodeChunker(chunk_size=60, chunk_overlap=0).chunk(SEED_CODE)
    starts = [c.content.strip().split("\n")[0] for c in chunks]
    assert starts == ["def hello():", "def goodbye():", "class Greeter:"]


def test_code_chunker_brace_language() -> None:
    js = "".join(
        f"// helper {i}\nexport function f{i}(a) {{\n  const b = a * {i};\n  return b;\n}}\n\n"
        for i in range(6)
    )
    chunks = CodeChunker(chunk_size=120, chunk_overlap=0, language="javascript").chunk(js)
    assert len(chunks) > 1
    assert all(c.content.lstrip().startswith("// helper") for c in chunks)


def test_code_chunker_invalid_python_falls_back() -> None:
    broken = "def f(:\n    pass\n\n" * 30
    chunks = CodeChunker(chunk_size=80, chunk_overlap=10).chunk(broken)
    assert "".join(c.content for c in chunks).count("def f(") >= 30


def test_hierarchical_children_carry_parent() -> None:
    chunks = HierarchicalChunker(chunk_size=100, chunk_overlap=20, parent_chunk_size=300).chunk(
        PYTHON_TEXT
    )
    assert {c.metadata["hierarchy"] for c in chunks} == {"child"}
    for chunk in chunks:
        parent = chunk.metadata["parent_content"]
        assert chunk.content in parent
        assert chunk.metadata["parent_start"] <= chunk.start_char
        assert chunk.end_char <= chunk.metadata["parent_end"]
        assert len(parent) <= 300 and len(chunk.content) <= 100
    with_parents = HierarchicalChunker(
        chunk_size=100, chunk_overlap=20, parent_chunk_size=300, include_parents=True
    ).chunk(PYTHON_TEXT)
    assert {c.metadata["hierarchy"] for c in with_parents} == {"parent", "child"}
    with pytest.raises(ValueError):
        HierarchicalChunker(max_levels=3)


# ----------------------------------------------------------------------------- Firefly


@pytest.mark.parametrize("strategy", ["token", "sentence", "paragraph"])
def test_text_chunker_strategies(strategy: str) -> None:
    text = "\n\n".join(
        f"Paragraph {i} starts here. It has a second sentence! And a third one? Yes." * 3
        for i in range(30)
    )
    chunks = TextChunker(chunk_size=120, chunk_overlap=20, strategy=strategy).chunk(text)
    assert chunks and all(c.metadata["token_count"] <= 120 for c in chunks)
    for c in chunks:
        assert c.content == text[c.source_start : c.source_end]
    if strategy == "sentence":
        assert all(c.content.endswith((".", "!", "?")) for c in chunks[:-1])
    if strategy == "paragraph":
        assert all(c.content.startswith(("Paragraph", "It", "And", "Yes")) for c in chunks)


def test_text_chunker_is_keyword_only_and_validates() -> None:
    with pytest.raises(TypeError):
        TextChunker(100, 10)  # type: ignore[misc]
    with pytest.raises(ValueError):
        TextChunker(chunk_size=100, chunk_overlap=100)
    with pytest.raises(ValueError):
        TextChunker(strategy="word")  # type: ignore[arg-type]


def test_text_chunker_empty_and_blank() -> None:
    assert TextChunker().chunk("") == []
    assert TextChunker().chunk(" \n\t ") == []


def test_document_splitter_default_separators() -> None:
    text = "First document body.\fSecond document text\n---\nThird one here\n===\nshort"
    segments = DocumentSplitter().split(text)
    assert [s.content for s in segments] == [
        "First document body.",
        "Second document text",
        "Third one here",
    ]
    assert all(s.metadata == {"type": "document_segment"} for s in segments)
    assert all(text[s.source_start : s.source_end] == s.content for s in segments)
    assert len(DocumentSplitter(min_length=1).chunk(text)) == 4
    with pytest.raises(TypeError):
        DocumentSplitter(r"\f")  # type: ignore[misc]


def test_markdown_hash_in_fence_and_table_is_not_a_heading() -> None:
    text = (
        "# Guide\n\nIntro text for the guide.\n\n```bash\n# install it\npip install x\n```\n\n"
        "| # | name |\n|---|---|\n| 1 | a |\n\n## Setup\n\nRun the setup now."
    )
    chunks = MarkdownChunker(max_chunk_tokens=600).chunk(text)
    assert [c.metadata["breadcrumb"] for c in chunks] == ["Guide", "Guide > Setup"]
    assert "# install it" in chunks[0].content


def test_markdown_breadcrumb_separator_and_min_body_merge() -> None:
    text = "# Guide\n\n## Setup\n\n### Install\n\nRun pip install content-pipeline in a venv."
    chunks = MarkdownChunker(breadcrumb_separator=" / ", min_body_tokens=5).chunk(text)
    assert len(chunks) == 1
    assert chunks[0].metadata["breadcrumb"] == "Guide / Setup / Install"
    assert chunks[0].content.startswith("Guide / Setup / Install\n\n# Guide")
    unmerged = MarkdownChunker(min_body_tokens=0).chunk(text)
    assert len(unmerged) == 3


def test_markdown_long_heading_is_shortened_within_budget() -> None:
    heading = "## " + " ".join(["extraordinarily"] * 200)
    text = f"# Top\n\n{heading}\n\n" + "Body sentence here. " * 50
    chunks = MarkdownChunker(max_chunk_tokens=64, chunk_overlap=8).chunk(text)
    assert chunks
    for chunk in chunks:
        assert count_tokens(chunk.content) == chunk.metadata["token_count"] <= 64
    crumb = chunks[-1].metadata["breadcrumb"]
    assert crumb.endswith("\u2026") and count_tokens(crumb) <= 64 // 3


def test_markdown_preamble_has_no_breadcrumb() -> None:
    chunks = MarkdownChunker().chunk("Just text before any heading.\n\n# Later\n\nMore text here.")
    assert chunks[0].metadata["breadcrumb"] == ""
    assert chunks[0].content == "Just text before any heading."


def test_image_tiler_covers_the_image() -> None:
    tiler = ImageTiler(tile_width=1024, tile_height=1024, overlap=128)
    tiles = tiler.compute_tiles(image_width=4096, image_height=3072)
    assert len(tiles) == 5 * 4  # columns start 0, 896, 1792, 2688, 3072; rows 0 .. 2048
    xs = sorted({t.metadata["x"] for t in tiles})
    ys = sorted({t.metadata["y"] for t in tiles})
    # Neighbours overlap by at least `overlap` and the last tiles end on the edges.
    assert all(b - a <= 1024 - 128 for a, b in zip(xs, xs[1:], strict=False))
    assert all(b - a <= 1024 - 128 for a, b in zip(ys, ys[1:], strict=False))
    assert xs[-1] + 1024 == 4096 and ys[-1] + 1024 == 3072
    for t in tiles:
        m = t.metadata
        assert set(m) == {"x", "y", "width", "height", "row", "col"}
        assert m["x"] + m["width"] <= 4096 and m["y"] + m["height"] <= 3072
        assert t.source_start == m["y"] * 4096 + m["x"]
    small = tiler.compute_tiles(image_width=300, image_height=200)
    assert [(t.metadata["width"], t.metadata["height"]) for t in small] == [(300, 200)]
    with pytest.raises(ValueError):
        ImageTiler(tile_width=100, tile_height=100, overlap=100)


def test_chunk_model_aliases_and_protocol() -> None:
    chunk = Chunk(content="abc", index=2, total_chunks=3, source_start=5, source_end=8)
    assert (chunk.chunk_index, chunk.start_char, chunk.end_char) == (2, 5, 8)
    assert chunk.token_count is None
    with pytest.raises(ValidationError):
        chunk.index = 4  # type: ignore[misc]
    for chunker in (TextChunker(), DocumentSplitter(), MarkdownChunker(), RecursiveChunker()):
        assert isinstance(chunker, Chunker)


# ----------------------------------------------------------------------------- remdb


def test_chunk_text_preserves_lines() -> None:
    text = "\n".join(f"line {i} with a few words" for i in range(200))
    pieces = chunk_text(text, max_tokens=50, model="gpt-4o")
    assert len(pieces) > 1
    for piece in pieces:
        assert count_tokens(piece) <= 50
        assert piece.startswith("line ") and piece.endswith("words")
    words = chunk_text("word " * 500, max_tokens=40, preserve_lines=False)
    assert all(p.startswith("word") and p.endswith("word") for p in words)


def test_chunk_text_heuristic_for_other_vendors() -> None:
    pieces = chunk_text("abcd " * 1000, max_tokens=100, model="claude-sonnet-4")
    assert len(pieces) > 1
    assert all(len(p) / 4 * 1.05 <= 100 for p in pieces)


def test_smart_chunk_text_fits_or_splits() -> None:
    cv = "Experienced engineer. " * 200
    assert smart_chunk_text(cv, model="gpt-4o") == [cv]
    huge = "Sentence of filler text.\n" * 30_000  # ~150k tokens
    pieces = smart_chunk_text(huge, model="gpt-4o", system_prompt="Extract.", buffer_ratio=0.5)
    assert len(pieces) == 3
    assert all(count_tokens(p) <= (111_616 - 2) * 0.5 for p in pieces)


# ----------------------------------------------------------------------------- config


def test_chunking_config_defaults_and_fingerprint() -> None:
    config = ChunkingConfig()
    assert (config.chunker, config.chunk_size, config.chunk_overlap) == ("markdown", 512, 64)
    assert config.fingerprint() == ChunkingConfig().fingerprint()
    assert len(config.fingerprint()) == 16
    assert ChunkingConfig(chunk_size=256).fingerprint() != config.fingerprint()
    with pytest.raises(ValidationError):
        ChunkingConfig(chunker="semantic")
    with pytest.raises(ValidationError):
        ChunkingConfig(chunk_size=64, chunk_overlap=64)
    with pytest.raises(ValidationError):
        ChunkingConfig(unknown=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        config.chunk_size = 3  # type: ignore[misc]


def test_chunker_options_are_checked_by_the_chunkers_own_model() -> None:
    markdown = ChunkingConfig(options={"min_body_tokens": 0, "breadcrumb_separator": " / "})
    chunker = build_chunker(markdown)
    assert isinstance(chunker, MarkdownChunker)
    assert (chunker.min_body_tokens, chunker.breadcrumb_separator) == (0, " / ")
    assert markdown.fingerprint() != ChunkingConfig().fingerprint()
    # Naming a default changes nothing, so it changes no chunk id.
    explicit = ChunkingConfig(options={"min_body_tokens": 10})
    assert explicit.fingerprint() == ChunkingConfig().fingerprint()
    code = build_chunker(ChunkingConfig(chunker="code", options={"language": "go"}))
    assert isinstance(code, CodeChunker) and code.language == "go"
    with pytest.raises(ValidationError, match="language"):
        ChunkingConfig(options={"language": "go"})  # markdown has no language option
    with pytest.raises(ValidationError, match="min_body_tokens"):
        ChunkingConfig(options={"min_body_tokens": -1})


@pytest.mark.parametrize("name", list_chunkers())
def test_build_chunker_records_exact_token_counts(name: str) -> None:
    text = SEED_MD * 20 + SEED_CODE * 10 + PYTHON_TEXT * 3
    chunker = build_chunker(ChunkingConfig(chunker=name, chunk_size=64, chunk_overlap=8))
    chunks = chunker.chunk(text)
    assert chunks
    for chunk in chunks:
        assert chunk.metadata["token_count"] == count_tokens(chunk.content) <= 64
    if name == "markdown":
        assert all("breadcrumb" in c.metadata for c in chunks)


@pytest.mark.parametrize("name", ["markdown", "token"])
def test_huge_whitespace_runs_are_chunked_within_budget(name: str) -> None:
    # tiktoken cannot encode a whitespace run of ~2M characters in one call: the text is then
    # encoded in slices, and chunks stay exact and within budget.
    text = "word. " * 300 + " " * 2_000_000 + "\nmiddle text. " * 50 + " " * 40_000 + "tail"
    chunks = build_chunker(ChunkingConfig(chunker=name, chunk_size=128, chunk_overlap=16)).chunk(
        text
    )
    assert chunks[-1].content.endswith("tail")
    assert any("middle" in c.content for c in chunks)
    for chunk in chunks:
        assert chunk.metadata["token_count"] == count_tokens(chunk.content) <= 128
        assert chunk.content.endswith(text[chunk.source_start : chunk.source_end])
