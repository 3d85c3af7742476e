"""The seeds' Python examples as people run them: each written to a file as a plain script,
with no `if __name__ == "__main__":` guard, its imports pointed at `content_core`, run in a
fresh interpreter, and its documented output checked.

A worker process (forkserver or spawn) runs the calling script again from its top; an
unguarded script that indexed through the worker pool once got 0 chunks and no hits, with no
error. Now the pool is not started for such a script (the work runs in its own process, with
one warning saying how to get the time limits back).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.chat_server import ChatServer
from tests.support.cli import REPO

# A script ingests a document through every stage in its own interpreter.
pytestmark = pytest.mark.timeout(600)


def _run(tmp_path: Path, name: str, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / name
    script.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        encoding="utf-8",
        timeout=540,
    )


# Seed 002, "Hierarchical chunker": `embed`, `store` and `contract_text` are the reader's own;
# here no embedder (BM25), a fresh store folder and a contract of five sections.
_CONTRACT = "\n\n".join(
    [
        f"Section {i}. Delivery of lot {i}. The supplier ships the goods of lot {i} in the first "
        "week of each month. Each lot comes with an invoice; each crate has its own packing "
        "list, signed by the carrier on arrival. Late lots are credited at two percent a week."
        for i in range(1, 5)
    ]
    + [
        "Section 5. Termination. The agreement may be terminated by either party with 30 days "
        "notice, under the termination conditions set out in this section."
    ]
)
_HIERARCHICAL = f"""
    import tempfile

    from content_core import RAG

    embed = None
    store = tempfile.mkdtemp(dir=".")
    contract_text = {_CONTRACT!r}

    rag = RAG(
        embed=embed,
        store=store,
        chunker="hierarchical",
        chunk_size=200,
        chunk_overlap=20,
        parent_chunk_size=1500,
    )

    rag.index(contract_text, source="contract")
    hits = rag.search("termination conditions")

    for hit in hits:
        print(f"Child: {{hit.content[:80]}}...")
        print(f"Parent: {{hit.parent_content[:80]}}...")
"""


def _printed_hits(stdout: str) -> list[tuple[str, str]]:
    """(child, parent) as the example prints them: the first 80 characters of each (a chunk's
    text may hold line breaks, so a hit's two lines may be more)."""
    found = re.findall(r"Child: (.*?)\.\.\.\nParent: (.*?)\.\.\.(?:\n|$)", stdout, re.DOTALL)
    return [(str(child), str(parent)) for child, parent in found]


def test_the_hierarchical_rag_example_runs_as_a_plain_script(tmp_path: Path) -> None:
    done = _run(tmp_path, "hierarchical.py", _HIERARCHICAL)

    assert done.returncode == 0, done.stderr[-3000:]
    printed = _printed_hits(done.stdout)
    assert printed and done.stdout.count("Child: ") == len(printed), done.stdout
    # What it prints is the contract's own text (children of at most 200 characters, each
    # with its parent section of at most 1500): exact slices of it, 80 characters each.
    for child, parent in printed:
        assert len(child) == len(parent) == 80 and child in _CONTRACT and parent in _CONTRACT
    assert any("Termination" in child for child, _ in printed)
    # It says once why no worker was started, and nothing else went wrong.
    assert "guard" in done.stderr and "Traceback" not in done.stderr


def test_the_recursive_chunker_example_prints_its_documented_offsets(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        "recursive.py",
        """
        from content_core import RecursiveChunker, list_chunkers

        print(list_chunkers())

        chunker = RecursiveChunker(chunk_size=100, chunk_overlap=20)

        text = "Python is a programming language. " * 20
        chunks = chunker.chunk(text)

        for c in chunks[:3]:
            print(f"chunk {c.chunk_index}: chars {c.start_char}-{c.end_char}, len={len(c.content)}")
        """,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The seed's five strategies come first (the pipeline's own follow them).
    assert lines[0].startswith("['character', 'recursive', 'markdown', 'code', 'hierarchical'")
    assert lines[1] == "chunk 0: chars 0-100, len=100"
    assert lines[2].startswith("chunk 1: chars 92-170, len=")
    assert lines[3].startswith("chunk 2: chars 160-238, len=")


def test_a_guarded_script_still_gets_the_worker_pool(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        "guarded.py",
        """
        import logging

        from content_core.sandbox import workers_can_start


        def main() -> None:
            print("pool" if workers_can_start() else "here")


        if __name__ == "__main__":
            main()
        """,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pool" and "guard" not in done.stderr


# ---------------------------------------------------------------- the other seeds' examples
#
# Each script below is a seed's example with its import line pointed at `content_core`; a
# preamble above it defines what the seed leaves to the reader (`long_text`, `agent`, ...),
# and a short epilogue below it prints what the seed promises but the example does not print.
# A top-level `await` is wrapped in `asyncio.run(...)`, as a reader does in a script. The offline
# agent (`OfflineExtractor`) stands in for a model: it needs no network.


def _script(*parts: str) -> str:
    return "\n\n".join(textwrap.dedent(part).strip("\n") for part in parts) + "\n"


def _ran(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines the script printed, once it ran without a traceback."""
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.stdout.splitlines()


# Prints the chunks an example built, as JSON on the last line.
_DUMP_CHUNKS = """
    import json

    print(json.dumps([c.model_dump(mode="json") for c in {}]))
"""

# Seed 000, "TextChunker": `long_text` is twelve paragraphs of about 800 tokens.
_LONG = "\n\n".join(
    f"Paragraph {i}. " + " ".join(["The quick brown fox jumps over the lazy dog."] * 60)
    for i in range(12)
)
_LONG_TEXT = f"long_text = {_LONG!r}"
_TEXT_CHUNKER = """
    from content_core import TextChunker

    chunker = TextChunker(chunk_size=4000, chunk_overlap=200, strategy="token")
    chunks = chunker.chunk(long_text)
    for c in chunks:
        print(f"Chunk {c.index}/{c.total_chunks}: {len(c.content)} chars")
"""

# Seed 000, "DocumentSplitter": `raw_text` holds three documents separated by a form feed, a
# line of dashes and a line of equals signs, and a fragment under min_length between them.
_RAW_TEXT = """
    raw_text = (
        "First document, long enough to pass the minimum length of fifty characters.\\f"
        "Second document, likewise long enough to be kept by the splitter as a segment.\\n---\\n"
        "tiny\\n===\\n"
        "Third document after a rule of equals signs, long enough to be kept as well."
    )
"""
_DOCUMENT_SPLITTER = """
    from content_core import DocumentSplitter

    splitter = DocumentSplitter(min_length=50)
    segments = splitter.split(raw_text)
"""

# Seed 000, "MarkdownChunker": a guide of three sections, one holding a fenced `# comment`.
_MARKDOWN_TEXT = '''
    markdown_text = """# Guide

    Intro text for the guide, long enough to be a body of its own in this test.

    ## Setup

    ### Install

    Run pip install to install the package and all of its dependencies today.

    ```python
    # not a heading
    print("hi")
    ```

    ## Usage

    Import the package and call it with your documents to chunk them well.
    """
'''
_MARKDOWN_CHUNKER = """
    from content_core import MarkdownChunker

    chunker = MarkdownChunker(
        max_chunk_tokens=600,
        chunk_overlap=80,
        min_body_tokens=10,
        breadcrumb_separator=" > ",
    )
    chunks = chunker.chunk(markdown_text)
"""

# Seed 000, "ImageTiler": needs nothing from the reader.
_IMAGE_TILER = """
    from content_core import ImageTiler

    tiler = ImageTiler(tile_width=1024, tile_height=1024, overlap=128)
    tiles = tiler.compute_tiles(image_width=4096, image_height=3072)
"""

# Any: chunks as the script printed them (JSON), checked field by field.
_Chunks = list[dict[str, Any]]

_CHUNK_FIELDS = {
    "content",
    "index",
    "total_chunks",
    "source_start",
    "source_end",
    "overlap_tokens",
    "metadata",
}


def _text_chunks(lines: list[str], chunks: _Chunks) -> None:
    total = len(chunks)
    assert total > 1
    assert lines == [f"Chunk {c['index']}/{total}: {len(c['content'])} chars" for c in chunks]
    assert [c["index"] for c in chunks] == list(range(total))
    # Offsets are characters of the original: each chunk ends with its slice of it (after the
    # overlap carried from the one before), and together they reach from its start to its end.
    assert all(c["content"].endswith(_LONG[c["source_start"] : c["source_end"]]) for c in chunks)
    assert chunks[0]["source_start"] == 0 and chunks[-1]["source_end"] == len(_LONG)
    assert chunks[0]["overlap_tokens"] == 0 and chunks[1]["overlap_tokens"] == 200


def _document_segments(lines: list[str], segments: _Chunks) -> None:
    assert lines == []
    assert [s["content"] for s in segments] == [
        "First document, long enough to pass the minimum length of fifty characters.",
        "Second document, likewise long enough to be kept by the splitter as a segment.",
        "Third document after a rule of equals signs, long enough to be kept as well.",
    ]
    assert all(s["metadata"] == {"type": "document_segment"} for s in segments)


def _markdown_chunks(lines: list[str], chunks: _Chunks) -> None:
    assert lines == []
    crumbs = [c["metadata"]["breadcrumb"] for c in chunks]
    # The fenced `# not a heading` is no heading: no section of that name.
    assert crumbs == ["Guide", "Guide > Setup > Install", "Guide > Usage"]
    assert "# not a heading" in chunks[1]["content"]
    assert all(c["content"].startswith(b) for c, b in zip(chunks, crumbs, strict=True))


def _image_tiles(lines: list[str], tiles: _Chunks) -> None:
    assert lines == []
    # A stride of 1024 - 128 = 896 pixels: five columns, four rows, the last flush with the edge.
    geometry = [t["metadata"] for t in tiles]
    assert len(tiles) == 20 and all(t["total_chunks"] == 20 for t in tiles)
    assert geometry[0] == {"x": 0, "y": 0, "width": 1024, "height": 1024, "row": 0, "col": 0}
    assert geometry[-1] == {"x": 3072, "y": 2048, "width": 1024, "height": 1024, "row": 3, "col": 4}


@pytest.mark.parametrize(
    ("preamble", "example", "result", "check"),
    [
        pytest.param(_LONG_TEXT, _TEXT_CHUNKER, "chunks", _text_chunks, id="000-TextChunker"),
        pytest.param(
            _RAW_TEXT, _DOCUMENT_SPLITTER, "segments", _document_segments, id="000-DocumentSplitter"
        ),
        pytest.param(
            _MARKDOWN_TEXT, _MARKDOWN_CHUNKER, "chunks", _markdown_chunks, id="000-MarkdownChunker"
        ),
        pytest.param("", _IMAGE_TILER, "tiles", _image_tiles, id="000-ImageTiler"),
    ],
)
def test_a_chunking_example_of_the_processing_guide_returns_the_documented_chunks(
    tmp_path: Path,
    preamble: str,
    example: str,
    result: str,
    check: Callable[[list[str], _Chunks], None],
) -> None:
    lines = _ran(
        _run(tmp_path, "example.py", _script(preamble, example, _DUMP_CHUNKS.format(result)))
    )
    chunks = json.loads(lines[-1])
    assert all(set(c) == _CHUNK_FIELDS for c in chunks)
    check(lines[:-1], chunks)


def test_the_batch_processor_example_answers_every_chunk_in_order(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "batch.py",
            _script(
                # Seed 000, "BatchProcessor": `agent` and `chunks` are the reader's.
                """
                import asyncio

                from content_core import OfflineExtractor, TextChunker

                agent = OfflineExtractor()
                chunks = TextChunker(chunk_size=40, chunk_overlap=0).chunk(
                    " ".join(f"Write to desk{i}@example.org about lot {i}." for i in range(30))
                )
                """,
                """
                from content_core import BatchProcessor

                processor = BatchProcessor(concurrency=4)


                async def main():
                    return await processor.process(agent, chunks)


                results = asyncio.run(main())
                """,
                """
                print(len(chunks), [r.index for r in results], all(r.ok for r in results))
                print({type(r.output).__name__ for r in results})
                print(all(e in chunks[r.index].content for r in results for e in r.output.emails))
                """,
            ),
        )
    )

    count = int(lines[0].split(" ", 1)[0])
    # One answer per chunk, in chunk order, each the facts of its own chunk.
    assert count > 1 and lines == [
        f"{count} {list(range(count))} True",
        "{'ExtractedFacts'}",
        "True",
    ]


# Seed 000, "TokenEstimator".
_TOKEN_ESTIMATOR = """
    from content_core import TokenEstimator

    estimator = TokenEstimator(encoding_name="cl100k_base")  # exact, if tiktoken installed
    tokens = estimator.estimate("Hello world, this is a test.")
    within_budget = estimator.fits("...", max_tokens=4000)
"""


def test_the_token_estimator_example_counts_exactly_with_tiktoken(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "tokens.py",
            _script(
                _TOKEN_ESTIMATOR,
                "print(tokens, within_budget)",
            ),
        )
    )

    # cl100k_base: Hello | world | , | this | is | a | test | .
    assert lines == ["8 True"]


def test_the_context_compressor_example_keeps_the_start_within_the_budget(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "compress.py",
            _script(
                # Seed 000, "ContextCompressor": `long_text` is about 8,000 tokens.
                """
                import asyncio

                long_text = " ".join(
                    f"Sentence {i} says something about the quarterly report." for i in range(800)
                )
                """,
                """
                from content_core import ContextCompressor, TruncationStrategy

                compressor = ContextCompressor(TruncationStrategy())


                async def main():
                    return await compressor.compress(long_text, max_tokens=2000)


                compressed = asyncio.run(main())
                """,
                """
                from content_core import TokenEstimator

                print(type(compressed).__name__, TokenEstimator().estimate(compressed) <= 2000)
                print(long_text.startswith(compressed[:1000]), len(compressed) < len(long_text))
                """,
            ),
        )
    )

    assert lines == ["str True", "True True"]


def test_the_sliding_window_example_holds_both_messages(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "window.py",
            _script(
                # Seed 000, "SlidingWindowManager": needs nothing from the reader.
                """
                from content_core import SlidingWindowManager

                window = SlidingWindowManager(max_tokens=8000)
                window.add("First message")
                window.add("Second message")
                current_context = window.get_context()
                print(window.segment_count, window.estimated_tokens)
                """,
                "print(repr(current_context))",
            ),
        )
    )

    count, tokens = lines[0].split(" ")
    assert count == "2" and 0 < int(tokens) < 8000
    assert "First message" in lines[1] and "Second message" in lines[1]
    assert lines[1].index("First") < lines[1].index("Second")


def test_the_local_folder_source_example_lists_and_fetches_every_file(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "sources.py",
            _script(
                # Seed 000, "Content sources": "/data/corpus" is the reader's folder; here a
                # folder of two files and a hidden one, made next to the script.
                """
                import asyncio
                from pathlib import Path

                Path("corpus/sub").mkdir(parents=True)
                Path("corpus/a.txt").write_text("alpha")
                Path("corpus/sub/b.md").write_text("# beta")
                Path("corpus/.hidden").write_text("secret")
                """,
                """
                from content_core.sources import (
                    LocalFolderSource,
                    LocalFolderSourceConfig,
                )

                source = LocalFolderSource(LocalFolderSourceConfig(folder="corpus"))


                async def main():
                    async for raw in source.list_changed(since=None):
                        path = await source.fetch(raw)


                asyncio.run(main())
                """,
                """
                async def listed():
                    changed = source.list_changed(since=None)
                    return [(raw, await source.fetch(raw)) async for raw in changed]


                for raw, path in asyncio.run(listed()):
                    print(raw.name, raw.mime_type, raw.size_bytes, path.read_text())
                    print(*sorted(type(raw).model_fields))
                """,
            ),
        )
    )

    # Hidden files are left out by default; each RawFile has (at least) the seed's fields.
    assert sorted(lines[0::2]) == ["a.txt text/plain 5 alpha", "sub/b.md text/markdown 6 # beta"]
    fields = {"source_id", "name", "mime_type", "size_bytes", "etag", "fetched_at", "metadata"}
    assert all(fields <= set(line.split()) for line in lines[1::2])


# Seed 000, "Binary normalisation": `raw_bytes` is the reader's upload. Declared as a PDF either
# way: a real PDF, and a zip of a PDF and a text file (sniffed as a zip; its members trace
# back to it and the text is wrapped as a PDF).
_PDF_BYTES = """
    from pathlib import Path

    raw_bytes = Path({pdf!r}).read_bytes()
"""
_ZIP_BYTES = """
    import io
    import zipfile
    from pathlib import Path

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("memo.pdf", Path({pdf!r}).read_bytes())
        bundle.writestr("notes/readme.txt", "plain notes")
    raw_bytes = buffer.getvalue()
"""
_BINARY_NORMALIZER = """
    import asyncio

    from content_core.binary import (
        BinaryConfig,
        BinaryNormalizer,
        build_office_converter,
    )

    config = BinaryConfig(office_converter="gotenberg", wrap_text_as_pdf=True)
    normalizer = BinaryNormalizer(config=config, office=build_office_converter(config))


    async def main():
        return await normalizer.normalise(
            raw_bytes, declared_media_type="application/pdf", filename="report.pdf"
        )


    artifacts = asyncio.run(main())
    for art in artifacts:
        print(art.kind, art.media_type, art.page_count, art.derived_from)
"""


@pytest.mark.parametrize(
    ("preamble", "expected"),
    [
        pytest.param(_PDF_BYTES, ["pdf application/pdf 1 ()"], id="pdf"),
        pytest.param(
            _ZIP_BYTES,
            [
                "archive application/zip None ()",
                "pdf application/pdf 1 ('{zip}',)",
                "text text/plain None ('{zip}',)",
                "pdf application/pdf 1 ('{zip}', '{text}')",
            ],
            id="zip-declared-as-pdf",
        ),
    ],
)
def test_the_binary_normalizer_example_prints_each_artifact_with_its_ancestry(
    tmp_path: Path, preamble: str, expected: list[str]
) -> None:
    pdf = REPO / "tests/corpus/pdf/fake-memo.pdf"
    show = """
        import hashlib

        print(type(build_office_converter(config)).__name__)
        print(hashlib.sha256(raw_bytes).hexdigest())
        print(*(hashlib.sha256(art.bytes).hexdigest() for art in artifacts if art.kind == "text"))
    """
    lines = _ran(
        _run(
            tmp_path, "binary.py", _script(preamble.format(pdf=str(pdf)), _BINARY_NORMALIZER, show)
        )
    )

    *printed, converter, zip_id, text_id = lines
    assert converter == "GotenbergConverter"
    assert printed == [line.format(zip=zip_id, text=text_id) for line in expected]


# ---------------------------------------------------------------- seed 002: chunking strategies


def test_the_chunker_registry_and_character_chunker_examples(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "strategies.py",
            _script(
                # Seed 002, "Getting a chunker" (both ways).
                """
                from content_core import get_chunker

                chunker = get_chunker("recursive", chunk_size=500, chunk_overlap=100)
                """,
                "print(type(chunker).__name__, chunker.chunk_size, chunker.chunk_overlap)",
                """
                from content_core import RecursiveChunker

                chunker = RecursiveChunker(chunk_size=500, chunk_overlap=100)
                """,
                "print(type(chunker).__name__, chunker.chunk_size, chunker.chunk_overlap)",
                # "Character chunker": `text` is the one of the recursive example before it.
                """
                text = "Python is a programming language. " * 20
                """,
                """
                from content_core import CharacterChunker

                chunker = CharacterChunker(chunk_size=200, chunk_overlap=50)
                chunks = chunker.chunk(text)
                """,
                """
                for c in chunks:
                    sliced = c.content == text[c.start_char : c.end_char]
                    print(c.chunk_index, c.start_char, c.end_char, sliced)
                """,
            ),
        )
    )

    assert lines[:2] == ["RecursiveChunker 500 100", "RecursiveChunker 500 100"]
    # Fixed 200-character windows, each starting 150 after the one before (680 characters).
    assert lines[2:] == [
        "0 0 200 True",
        "1 150 350 True",
        "2 300 500 True",
        "3 450 650 True",
        "4 600 680 True",
    ]


def test_the_markdown_and_code_chunker_examples(tmp_path: Path) -> None:
    # Seed 002, "Markdown chunker": the seed's text has typographic closing quotes and its last
    # lines run together; here as a reader types it (straight quotes, one statement a line).
    lines = _ran(
        _run(
            tmp_path,
            "structure.py",
            _script(
                '''
                from content_core import MarkdownChunker

                md = """# Introduction

                Python is versatile.

                ## Setup

                Install with pip.

                ## Usage

                Import and initialize."""

                chunker = MarkdownChunker(chunk_size=500, chunk_overlap=50)
                chunks = chunker.chunk(md)

                for c in chunks:
                    print(f"chunk {c.chunk_index}: {c.content[:50]}…")
                ''',
                # "Code chunker".
                '''
                from content_core import CodeChunker

                code = """
                def hello():
                    return "hello"

                def goodbye():
                    return "goodbye"

                class Greeter:
                    def greet(self):
                        return "hi"
                """

                chunker = CodeChunker(chunk_size=500, chunk_overlap=50)
                chunks = chunker.chunk(code)
                ''',
                """
                print("".join(c.content for c in chunks).split() == code.split())
                names = ("def hello", "def goodbye", "class Greeter")
                starts = {0} | {code.index(name) for name in names}
                print(all(c.start_char in starts for c in chunks))
                """,
            ),
        )
    )

    # Each chunk starts with its heading context, then its own section.
    printed = "\n".join(lines[:-2])
    assert [line.split(": ", 1)[1] for line in lines if line.startswith("chunk ")] == [
        "Introduction",
        "Introduction > Setup",
        "Introduction > Usage",
    ]
    for section in ("# Introduction", "## Setup", "## Usage"):
        assert section in printed
    # The code comes back whole, cut (if at all) only where a function or class starts.
    assert lines[-2:] == ["True", "True"]


def test_the_rag_with_a_named_chunker_example_indexes_with_it(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "rag.py",
            _script(
                # Seed 002, "Using with RAG": no embedder (BM25) and a fresh store folder.
                """
                import tempfile

                embed = None
                store = tempfile.mkdtemp(dir=".")
                """,
                """
                from content_core import RAG

                rag = RAG(
                    embed=embed,
                    store=store,
                    chunker="recursive",
                    chunk_size=500,
                    chunk_overlap=100,
                )
                """,
                f"""
                print(rag.index({_CONTRACT!r}, source="contract") >= 1)
                hit = rag.search("termination conditions")[0]
                print("terminated by either party" in hit.content)
                """,
            ),
        )
    )

    assert lines == ["True", "True"]


def test_the_hierarchical_rag_example_keeps_children_within_chunk_size_characters(
    tmp_path: Path,
) -> None:
    show = """
        print(max(len(hit.content) for hit in hits), max(len(hit.parent_content) for hit in hits))
    """
    lines = _ran(_run(tmp_path, "hierarchical.py", _script(_HIERARCHICAL, show)))

    child, parent = map(int, lines[-1].split())
    assert 80 <= child <= 200 and 200 < parent <= 1500


# Seed 002, "Hierarchical chunker", as a quick script: the store held in memory.
_IN_MEMORY = _HIERARCHICAL.replace(
    "import tempfile\n\n    from content_core import RAG",
    "from content_core import RAG, InMemoryStore",
).replace("store = tempfile.mkdtemp(dir=\".\")", "store = InMemoryStore()")


def test_the_hierarchical_rag_example_runs_in_memory_with_the_seeds_sizes(
    tmp_path: Path,
) -> None:
    show = """
        print(len(hits), max(len(hit.content) for hit in hits))
        print(all(hit.content in hit.parent_content for hit in hits))
        print(max(len(hit.parent_content) for hit in hits) <= 1500)
    """
    assert "InMemoryStore()" in _IN_MEMORY
    lines = _ran(_run(tmp_path, "memory.py", _script(_IN_MEMORY, show)))

    *_, sizes, inside, parents = lines
    count, longest = map(int, sizes.split())
    printed = _printed_hits("\n".join(lines[:-3]))
    assert len(printed) == count >= 1 and longest <= 200 and (inside, parents) == ("True", "True")
    assert "Termination" in printed[0][0] and printed[0][1] in _CONTRACT


def test_the_rag_example_takes_a_chunker_base_instance(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "instance.py",
            _script(
                # Seed 002, "Using with RAG": "a ChunkerBase instance for custom
                # configuration"; the reader's own chunker (one chunk per paragraph) and a
                # built-in one.
                """
                from content_core import Chunk, ChunkerBase, InMemoryStore


                class ParagraphChunker(ChunkerBase):
                    def chunk(self, text):
                        parts = [p for p in text.split("\\n\\n") if p.strip()]
                        chunks, start = [], 0
                        for i, part in enumerate(parts):
                            start = text.index(part, start)
                            chunks.append(Chunk(content=part, index=i, total_chunks=len(parts),
                                                source_start=start, source_end=start + len(part)))
                        return chunks


                embed = None
                store = InMemoryStore()
                """,
                """
                from content_core import RAG, RecursiveChunker

                rag = RAG(
                    embed=embed,
                    store=store,
                    chunker=ParagraphChunker(),
                )
                """,
                f"""
                print(rag.index({_CONTRACT!r}, source="contract"))
                hit = rag.search("termination conditions")[0]
                print(hit.content.startswith("Section 5."), repr(hit.parent_content))
                rag = RAG(embed=embed, store=InMemoryStore(),
                          chunker=RecursiveChunker(chunk_size=120, chunk_overlap=20))
                rag.index({_CONTRACT!r}, source="contract")
                print(max(len(h.content) for h in rag.search("lot the section", 50)) <= 120)
                """,
            ),
        )
    )

    assert lines == ["5", "True ''", "True"]


def test_a_rag_answers_a_question_with_a_model_and_cites_its_hits(tmp_path: Path) -> None:
    # FFAI's query sends both the child and its parent context to the model: here a real
    # chat-completions server on 127.0.0.1, answering with the number of the passage that
    # holds the notice period.
    def cite(body: dict[str, Any], text: str) -> str:
        passages = text.split("Passages:\n", 1)[1].split("\n\n[")
        number = next(i for i, p in enumerate(passages, start=1) if "30 days" in p)
        return f"With 30 days notice [{number}]."

    with ChatServer(responder=cite) as server:
        lines = _ran(
            _run(
                tmp_path,
                "query.py",
                _script(
                    _IN_MEMORY.split("hits = rag.search")[0],
                    f"""
                    from content_core import OpenAICompatibleAgent

                    agent = OpenAICompatibleAgent(
                        "gpt-4o-mini", base_url={server.base_url!r}, output_type=str
                    )
                    result = rag.query("How is the agreement terminated?", agent=agent)
                    print(result.answer)
                    print(["30 days" in hit.content for hit in result.citations])
                    print(len(result.hits), all(c in result.hits for c in result.citations))
                    """,
                ),
            )
        )
        prompt = server.calls[0].user_text

    assert lines[0].startswith("With 30 days notice [") and lines[2].endswith(" True")
    assert lines[1] == "[True]"
    assert "[Parent context: " in prompt and "How is the agreement terminated?" in prompt


# ---------------------------------------------------------------- seed 004: agentic chunking

# What the seed's snippets leave to the reader: the offline agent, and a document of 6,000
# unique lines (about 170,000 tokens, so every budget below splits it).
_AGENT = """
    import asyncio

    from content_core import OfflineExtractor

    agent = OfflineExtractor()
"""
_DOCUMENT = """
    from content_core import (
        MergeStrategy,
        chunk_text,
        estimate_tokens,
        get_model_limits,
        merge_results,
        smart_chunk_text,
    )

    text = "\\n".join(
        f"Line {i}: the supplier ships lot {i} to desk{i}@example.org for ${i},000."
        for i in range(6000)
    )
    limits = get_model_limits("gpt-4o")
"""

# Seed 004, "Troubleshooting: Wrong Token Count".
_WRONG_TOKEN_COUNT = """
    # For OpenAI: tiktoken is exact
    chunks = chunk_text(text, max_tokens=100000, model="gpt-4o")

    # For others: use larger buffer (60-70% instead of 75%)
    chunks = chunk_text(text, max_tokens=int(limits.max_input * 0.6), model="claude-sonnet-4")
"""


@pytest.mark.parametrize(
    ("snippet", "model", "budget"),
    [
        pytest.param(
            'chunks = smart_chunk_text(text, model="gpt-4o")',
            "gpt-4o",
            "int(limits.max_input * 0.75)",
            id="smart-chunking",
        ),
        pytest.param(
            'chunks = chunk_text(text, max_tokens=1000, model="gpt-4o")',
            "gpt-4o",
            "1000",
            id="manual-chunking",
        ),
        pytest.param(
            'chunks = chunk_text(text, max_tokens=1000, model="gpt-4o", preserve_lines=True)',
            "gpt-4o",
            "1000",
            id="line-preserving",
        ),
        pytest.param(
            # "Useful for prose without newlines": the same text as one paragraph.
            'text = text.replace("\\n", " ")\n'
            'chunks = chunk_text(text, max_tokens=1000, model="gpt-4o", preserve_lines=False)',
            "gpt-4o",
            "1000",
            id="character-based",
        ),
        pytest.param(
            """
            # BAD: Use full context window
            chunks = chunk_text(text, max_tokens=limits.max_input, model="gpt-4o")

            # GOOD: Leave buffer for system prompt, tools, etc.
            chunks = chunk_text(text, max_tokens=int(limits.max_input * 0.75), model="gpt-4o")
            """,
            "gpt-4o",
            "int(limits.max_input * 0.75)",
            id="leave-buffer-for-system-prompt",
        ),
        pytest.param(
            """
            # If agent uses multiple tool calls (grows context)
            chunks = chunk_text(text, max_tokens=int(limits.max_input * 0.5), model="gpt-4o")
            """,
            "gpt-4o",
            "int(limits.max_input * 0.5)",
            id="chunks-still-too-large",
        ),
        pytest.param(
            _WRONG_TOKEN_COUNT,
            "claude-sonnet-4",
            "int(limits.max_input * 0.6)",
            id="wrong-token-count",
        ),
    ],
)
def test_a_chunking_snippet_of_the_agentic_chunking_guide_keeps_every_piece_in_budget(
    tmp_path: Path, snippet: str, model: str, budget: str
) -> None:
    show = f"""
        print(len(chunks) > 1, all(estimate_tokens(c, model={model!r}) <= {budget} for c in chunks))
        # Pieces are the text cut at whitespace: its words, in order, none cut and none repeated.
        print(sum((c.split() for c in chunks), []) == text.split())
        print(all(c.splitlines() == [line.strip() for line in c.splitlines()] for c in chunks))
        print(sum((c.splitlines() for c in chunks), []) == text.splitlines())
    """
    lines = _ran(_run(tmp_path, "snippet.py", _script(_DOCUMENT, snippet, show)))

    assert lines[:3] == ["True True", "True", "True"]
    # With preserve_lines (the default) a piece is whole lines; without, it ends at a space.
    assert lines[3] == ("False" if "preserve_lines=False" in snippet else "True")


def test_the_model_limits_and_token_estimation_examples_print_the_documented_numbers(
    tmp_path: Path,
) -> None:
    # Seed 004, "Model Limits" (the table, in thousands of tokens, and its fuzzy matching) and
    # "Token Estimation" (both snippets).
    table = {
        "gpt-4o": "128 16 112",
        "gpt-4o-mini": "128 16 112",
        "o1": "200 100 100",
        "claude-sonnet-4": "200 8 192",
        "claude-3-5-sonnet": "200 8 192",
        "gemini-2.0-flash-exp": "1000 8 992",
        "gemini-1.5-pro": "2000 8 1992",
        "gpt-4o-2024-05-13": "128 16 112",
    }
    lines = _ran(
        _run(
            tmp_path,
            "tokens.py",
            _script(
                f"""
                from content_core import get_model_limits

                for model in {list(table)!r}:
                    limits = get_model_limits(model)
                    sizes = (limits.max_context, limits.max_output, limits.max_input)
                    print(*(round(size / 1000) for size in sizes))
                """,
                """
                from content_core import estimate_tokens

                tokens = estimate_tokens("Hello, world!", model="gpt-4o")
                # Returns: 4 (exact count via tiktoken)
                """,
                "print(tokens)",
                """
                tokens = estimate_tokens("Hello, world!", model="claude-sonnet-4")
                # Returns: 3 (heuristic estimate)
                """,
                "print(tokens)",
            ),
        )
    )

    assert lines == [*table.values(), "4", "3"]


def test_the_merge_strategy_examples_print_the_documented_results(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "merge.py",
            _script(
                "from content_core import MergeStrategy, merge_results",
                # Seed 004, "1. Concatenate List (Default)".
                """
                results = [
                    {"skills": ["Python", "SQL"], "experience_years": 5},
                    {"skills": ["Docker", "K8s"], "experience_years": 3}
                ]

                merged = merge_results(results, strategy=MergeStrategy.CONCATENATE_LIST)
                # {"skills": ["Python", "SQL", "Docker", "K8s"], "experience_years": 5}
                """,
                "print(merged)",
                # "2. Deep JSON Merge".
                """
                results = [
                    {"contract": {"parties": ["Alice"], "terms": {"duration": "1 year"}}},
                    {"contract": {"parties": ["Bob"], "terms": {"renewal": "auto"}}}
                ]

                merged = merge_results(results, strategy=MergeStrategy.MERGE_JSON)
                """,
                "print(merged)",
            ),
        )
    )

    assert lines == [
        str({"skills": ["Python", "SQL", "Docker", "K8s"], "experience_years": 5}),
        str(
            {
                "contract": {
                    "parties": ["Alice", "Bob"],
                    "terms": {"duration": "1 year", "renewal": "auto"},
                }
            }
        ),
    ]


# Seed 004, "Real-World Examples": the agent factory and the loaders are the reader's (the seed
# imports the factory from its own application, not from the chunking library). The factory
# gives the offline agent, whose facts fill the schema named: a CV's skills are its key terms,
# a contract's parties its e-mail addresses, its obligations its headings, its risks its amounts.
_REAL_WORLD = """
    import asyncio

    from pydantic import computed_field

    from content_core import OfflineExtractor
    from content_core.agents import ExtractedFacts


    class CvParser(ExtractedFacts):
        @computed_field
        @property
        def skills(self) -> list[str]:
            return self.key_terms


    class ContractAnalyzer(ExtractedFacts):
        @computed_field
        @property
        def parties(self) -> list[str]:
            return self.emails

        @computed_field
        @property
        def key_obligations(self) -> list[str]:
            return self.headings

        @computed_field
        @property
        def risk_flags(self) -> list[str]:
            return self.amounts


    async def create_pydantic_ai_agent(context, agent_schema_uri):
        schemas = {"cv-parser-v1": CvParser, "contract-analyzer-v1": ContractAnalyzer}
        return OfflineExtractor(schemas[agent_schema_uri])


    context = None


    def load_cv_file(name):
        return "# John Doe\\n\\n" + "\\n".join(
            f"{year}: built Python services with PostgreSQL, Docker and Kubernetes."
            for year in range(2000, 2025)
        )


    def load_contract(name):
        sections = [
            f"## Obligation {i}\\n\\nThe supplier pays a penalty of ${i},000 per late lot. " * 1
            + "Deliveries are made weekly under the terms of this agreement. " * 80
            for i in range(1, 61)
        ]
        return "alice@supplier.example and bob@buyer.example agree:\\n\\n" + "\\n\\n".join(sections)
"""
_CV_EXAMPLE = """
    from content_core import smart_chunk_text, merge_results, MergeStrategy

    # Long CV document
    cv_text = load_cv_file("john-doe-cv.txt")  # 5K tokens (typical CV)

    # Smart chunking - automatically sizes based on model
    # For typical CVs: will return single chunk (no splitting!)
    chunks = smart_chunk_text(cv_text, model="gpt-4o")

    print(f"Processing CV in {len(chunks)} chunk(s)")
    # Output: Processing CV in 1 chunk(s)

    # Create agent (using existing schema)
    agent = asyncio.run(create_pydantic_ai_agent(
        context=context,
        agent_schema_uri="cv-parser-v1"
    ))

    # Process each chunk
    results = []


    async def process_chunks():
        for i, chunk in enumerate(chunks):
            result = await agent.run(chunk)
            # CRITICAL: Serialize Pydantic models!
            results.append(result.output.model_dump())


    asyncio.run(process_chunks())

    # Merge extracted skills (no-op if single chunk)
    merged = merge_results(results, strategy=MergeStrategy.CONCATENATE_LIST)

    print(f"Total skills found: {len(merged['skills'])}")
    # Output: Total skills found: 12
"""
_CONTRACT_EXAMPLE = '''
    from content_core import smart_chunk_text, merge_results, MergeStrategy

    # Large contract (120 pages, 80K tokens)
    contract_text = load_contract("partnership-agreement.pdf")

    # Smart chunking with system prompt awareness
    system_prompt = """You are a contract analyzer. Extract parties, terms,
    obligations, and risk flags from this legal agreement."""

    chunks = smart_chunk_text(
        contract_text,
        model="claude-sonnet-4",  # 200K context
        system_prompt=system_prompt,
        buffer_ratio=0.75
    )

    print(f"Contract split into {len(chunks)} chunk(s)")
    # For 80K tokens: likely 1 chunk (Claude has 200K context)

    # Create contract analyzer agent
    agent = asyncio.run(create_pydantic_ai_agent(
        context=context,
        agent_schema_uri="contract-analyzer-v1"
    ))

    # Extract terms from each chunk
    results = []


    async def process_chunks():
        for chunk in chunks:
            result = await agent.run(chunk)
            results.append(result.output.model_dump())


    asyncio.run(process_chunks())

    # Deep merge nested contract structure
    merged = merge_results(results, strategy=MergeStrategy.MERGE_JSON)

    print(f"Parties: {merged['parties']}")
    print(f"Key obligations: {len(merged['key_obligations'])}")
    print(f"Risk flags: {len(merged['risk_flags'])}")
'''


def test_the_cv_example_extracts_skills_from_one_chunk(tmp_path: Path) -> None:
    lines = _ran(_run(tmp_path, "cv.py", _script(_REAL_WORLD, _CV_EXAMPLE)))

    assert lines[0] == "Processing CV in 1 chunk(s)"
    assert lines[1].startswith("Total skills found: ") and int(lines[1].rsplit(" ", 1)[1]) > 0
    assert len(lines) == 2


def test_the_contract_example_analyses_80k_tokens_in_one_chunk(tmp_path: Path) -> None:
    show = """
        from content_core import estimate_tokens

        print(70_000 < estimate_tokens(contract_text, model="claude-sonnet-4") < 90_000)
    """
    lines = _ran(_run(tmp_path, "contract.py", _script(_REAL_WORLD, _CONTRACT_EXAMPLE, show)))

    assert lines == [
        "Contract split into 1 chunk(s)",
        "Parties: ['alice@supplier.example', 'bob@buyer.example']",
        "Key obligations: 60",
        "Risk flags: 60",
        "True",
    ]


def test_the_quick_start_examples_chunk_process_and_merge(tmp_path: Path) -> None:
    lines = _ran(
        _run(
            tmp_path,
            "quick_start.py",
            _script(
                _AGENT,
                # Seed 004, "Quick Start (Recommended: Smart Chunking)": a CV of a few lines.
                'cv_text = "# Jane Doe\\n\\nSkills: Python, SQL, Docker. Mail jane@example.org."',
                """
                from content_core import (
                    smart_chunk_text,  # Recommended - auto-sizes based on model
                    merge_results,
                    MergeStrategy,
                )

                # Smart chunking - automatically handles sizing
                chunks = smart_chunk_text(cv_text, model="gpt-4o")

                # For most CVs/resumes: chunks = [full_cv]  (no chunking needed!)
                # For huge documents: automatically splits optimally

                # Process each chunk with agent
                results = []


                async def process_chunks():
                    for chunk in chunks:
                        result = await agent.run(chunk)
                        results.append(result.output.model_dump())  # Always serialize!


                asyncio.run(process_chunks())

                # Merge results (no-op if single chunk)
                merged = merge_results(results, strategy=MergeStrategy.CONCATENATE_LIST)
                """,
                "print(chunks == [cv_text], merged == results[0], merged['emails'])",
                # "Quick Start (Manual Chunking)": a document of about 345,000 tokens.
                """
                large_document = "\\n".join(
                    f"Line {i}: lot {i} ships to desk{i}@example.org for ${i},000 on 2024-03-01."
                    for i in range(12000)
                )
                """,
                """
                from content_core import (
                    chunk_text,
                    merge_results,
                    MergeStrategy,
                    get_model_limits,
                    estimate_tokens,
                )

                # Check model limits
                limits = get_model_limits("gpt-4o")
                print(f"Max input tokens: {limits.max_input}")  # 111616

                # Estimate tokens in text
                text_tokens = estimate_tokens(large_document, model="gpt-4o")
                print(f"Document: {text_tokens} tokens")

                # Chunk if necessary
                if text_tokens > limits.max_input:
                    chunks = chunk_text(large_document, max_tokens=100000, model="gpt-4o")
                    print(f"Split into {len(chunks)} chunks")
                else:
                    chunks = [large_document]

                # Process each chunk with agent
                results = []


                async def process_chunks():
                    for i, chunk in enumerate(chunks):
                        print(f"Processing chunk {i+1}/{len(chunks)}")
                        result = await agent.run(chunk)
                        results.append(result.output.model_dump())  # Always serialize!


                asyncio.run(process_chunks())

                # Merge results
                merged = merge_results(results, strategy=MergeStrategy.CONCATENATE_LIST)
                """,
                "print(len(merged['emails']), merged['title'] == results[0]['title'])",
            ),
        )
    )

    assert lines[0] == "True True ['jane@example.org']"
    assert lines[1] == "Max input tokens: 111616"
    tokens = int(lines[2].removeprefix("Document: ").removesuffix(" tokens"))
    count = -(-tokens // 100_000)  # at least this many pieces of 100,000 tokens
    assert tokens > 111_616 and lines[3] == f"Split into {count} chunks"
    assert lines[4:-1] == [f"Processing chunk {i}/{count}" for i in range(1, count + 1)]
    # Every chunk's addresses, concatenated; the title is the first chunk's.
    assert lines[-1] == "12000 True"


def test_the_session_history_example_fits_gemini_in_one_shot(tmp_path: Path) -> None:
    # Seed 004, "Example 3": `agent` and `load_user_sessions` are the reader's; the history is
    # about 200,000 tokens.
    preamble = """
        def load_user_sessions(user_id):
            lines = (f"{user_id} asked about order {i} on 2024-05-01." for i in range(16000))
            return "\\n".join(lines)
    """
    example = """
        from content_core import chunk_text, estimate_tokens, get_model_limits

        # User's full session history (many conversations)
        session_history = load_user_sessions(user_id="user-123")  # 200K tokens

        # Get limits for Gemini (large context)
        limits = get_model_limits("gemini-1.5-pro")  # 1.992M tokens

        # Check if chunking needed
        history_tokens = estimate_tokens(session_history, model="gemini-1.5-pro")

        if history_tokens <= limits.max_input:
            # Fits in one shot!
            result = asyncio.run(agent.run(session_history))
        else:
            # Need to chunk
            chunks = chunk_text(session_history, max_tokens=500000, model="gemini-1.5-pro")

            results = []


            async def process_chunks():
                for chunk in chunks:
                    result = await agent.run(chunk)
                    results.append(result.output.model_dump())


            asyncio.run(process_chunks())

            # Merge user profile insights
            merged = merge_results(results, strategy=MergeStrategy.CONCATENATE_LIST)
    """
    show = "print(limits.max_input, 150_000 < history_tokens < 250_000, result.output.dates)"
    lines = _ran(_run(tmp_path, "sessions.py", _script(_AGENT, preamble, example, show)))

    assert lines == ["1991808 True ['2024-05-01']"]


def test_the_serialise_and_choose_strategy_practices(tmp_path: Path) -> None:
    preamble = """
        result1 = asyncio.run(agent.run("# One\\n\\nMail a@b.org on 2024-01-02."))
        result2 = asyncio.run(agent.run("# Two\\n\\nPay $5 to c@d.org."))
        skill_results = [{"skills": ["Python"]}, {"skills": ["SQL", "python"]}]
        contract_results = [
            {"contract": {"parties": ["Alice"], "terms": {"duration": "1 year"}}},
            {"contract": {"parties": ["Bob", "Alice"], "terms": {"renewal": "auto"}}},
        ]
        summary_results = [{"summary": "First half."}, {"summary": "Second half."}]
    """
    # Seed 004, "Best Practices" 2 and 3, up to the LLM_MERGE line.
    example = """
        from content_core import merge_results, MergeStrategy

        # BAD: Merge Pydantic model instances directly
        results = [result1.output, result2.output]  # Pydantic models
        merged = merge_results(results)  # May lose fields!

        models = merged

        # GOOD: Serialize first
        results = [result1.output.model_dump(), result2.output.model_dump()]
        merged = merge_results(results)  # All fields preserved

        # Extracting list of items → CONCATENATE_LIST
        skills = merge_results(skill_results, MergeStrategy.CONCATENATE_LIST)

        # Nested hierarchy → MERGE_JSON
        contract = merge_results(contract_results, MergeStrategy.MERGE_JSON)
    """
    show = """
        print(sorted(merged) == sorted(result1.output.model_dump()), models == merged)
        print(merged["emails"], merged["headings"])
        print(skills)
        print(contract)
    """
    # The seed's last line: LLM_MERGE is "future" there; here it needs an agent, and says so.
    llm_merge = """
        # Complex semantic merging → LLM_MERGE (future)
        summary = merge_results(summary_results, MergeStrategy.LLM_MERGE)
    """
    done = _run(tmp_path, "practices.py", _script(_AGENT, preamble, example, show, llm_merge))

    assert done.stdout.splitlines() == [
        "True True",
        "['a@b.org', 'c@d.org'] ['One', 'Two']",
        # Both strategies concatenate, repeats kept (the seed's semantics).
        str({"skills": ["Python", "SQL", "python"]}),
        str(
            {
                "contract": {
                    "parties": ["Alice", "Bob", "Alice"],
                    "terms": {"duration": "1 year", "renewal": "auto"},
                }
            }
        ),
    ]
    # No agent to merge with: a typed error naming what to pass, not another strategy's result.
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("content_core.errors.ConfigError: MergeStrategy.LLM_MERGE needs an ")
    assert "agent=" in last


@pytest.mark.parametrize(
    ("lines_of_text", "expected"),
    [
        pytest.param(3, "single", id="one-chunk"),
        pytest.param(40_000, "multi", id="several-chunks"),
    ],
)
def test_the_handle_single_chunk_practice(
    tmp_path: Path, lines_of_text: int, expected: str
) -> None:
    # Seed 004, "Best Practices" 4: the snippet returns, so it is a function's body (`text` its
    # argument); a reader calls it.
    preamble = f"""
        items = (f"Item {{i}} goes to desk{{i}}@example.org." for i in range({lines_of_text}))
        text = "\\n".join(items)
    """
    example = """
        from content_core import chunk_text, merge_results


        async def extract(text):
            chunks = chunk_text(text, max_tokens=100000, model="gpt-4o")

            if len(chunks) == 1:
                # No chunking needed, faster path
                result = await agent.run(chunks[0])
                return result.output.model_dump()
            else:
                # Multi-chunk processing
                results = [await agent.run(c) for c in chunks]
                return merge_results([r.output.model_dump() for r in results])


        extracted = asyncio.run(extract(text))
    """
    show = """
        chunks = chunk_text(text, max_tokens=100000, model="gpt-4o")
        print("single" if len(chunks) == 1 else "multi", len(extracted["emails"]))
    """
    lines = _ran(_run(tmp_path, "single.py", _script(_AGENT, preamble, example, show)))

    assert lines == [f"{expected} {lines_of_text}"]


def test_the_rate_limit_practice_waits_between_chunks(tmp_path: Path) -> None:
    # Seed 004, "Best Practices" 5 and "Troubleshooting: Lost Fields After Merge": three chunks.
    preamble = """
        import time

        from content_core import merge_results

        chunks = [f"Chunk {i}: write to desk{i}@example.org." for i in range(3)]
        started = time.monotonic()
    """
    example = """
        import asyncio

        # Process chunks with rate limiting
        results = []


        async def process_chunks():
            for i, chunk in enumerate(chunks):
                result = await agent.run(chunk)
                results.append(result.output.model_dump())

                # Wait between chunks (e.g., 1 second)
                if i < len(chunks) - 1:
                    await asyncio.sleep(1.0)


        asyncio.run(process_chunks())

        merged = merge_results(results)
    """
    lost_fields = """
        agent_results = [asyncio.run(agent.run(chunk)) for chunk in chunks]
        # Before merging
        results = [r.output.model_dump() for r in agent_results]
        merged_again = merge_results(results)
    """
    show = """
        print(2.0 <= time.monotonic() - started, merged["emails"], merged == merged_again)
    """
    lines = _ran(_run(tmp_path, "rate.py", _script(_AGENT, preamble, example, lost_fields, show)))

    emails = [f"desk{i}@example.org" for i in range(3)]
    assert lines == [f"True {emails} True"]


def test_the_ontology_extraction_example_chunks_a_large_file_and_concatenates(
    tmp_path: Path,
) -> None:
    # Seed 004, "Integration with REM: Ontology Extraction on Large Files". `File`, `Schema`,
    # `Ontology` and `extract_from_file` are the reader's application (the seed imports the
    # last from its own services, so that line is left out); the example uses
    # get_model_limits and MergeStrategy without importing them, so the preamble does.
    preamble = """
        import asyncio
        from dataclasses import dataclass, field

        from content_core import MergeStrategy, OfflineExtractor, get_model_limits


        @dataclass
        class File:
            name: str
            content: str
            mime_type: str
            tenant_id: str
            id: str = "file-1"


        @dataclass
        class Schema:
            provider_configs: list = field(default_factory=list)
            id: str = "schema-1"


        @dataclass
        class Ontology:
            name: str
            file_id: str
            agent_schema_id: str
            provider_name: str
            model_name: str
            extracted_data: dict
            tenant_id: str


        @dataclass
        class Extraction:
            extracted_data: dict


        async def extract_from_file(file, schema, tenant_id):
            result = await OfflineExtractor().run(file.content)
            return Extraction(result.output.model_dump())
    """
    example = '''
        from content_core import chunk_text, merge_results

        async def extract_from_large_file(
            file: File,
            schema: Schema,
            tenant_id: str
        ) -> Ontology:
            """Extract ontology from large file using chunking."""

            # Get model from schema provider_configs
            provider = schema.provider_configs[0] if schema.provider_configs else {}
            model = provider.get("model_name", "gpt-4o")

            # Chunk file content if needed
            limits = get_model_limits(model)
            chunks = chunk_text(file.content, max_tokens=int(limits.max_input * 0.75), model=model)

            if len(chunks) == 1:
                # Single chunk - normal extraction
                return await extract_from_file(file, schema, tenant_id)

            # Multi-chunk extraction
            results = []
            for chunk in chunks:
                # Create temporary file for chunk
                chunk_file = File(
                    name=f"{file.name} (chunk)",
                    content=chunk,
                    mime_type=file.mime_type,
                    tenant_id=tenant_id
                )

                # Extract from chunk
                result = await extract_from_file(chunk_file, schema, tenant_id)
                results.append(result.extracted_data)

            # Merge extracted data
            merged_data = merge_results(results, strategy=MergeStrategy.CONCATENATE_LIST)

            # Create final ontology
            return Ontology(
                name=file.name,
                file_id=file.id,
                agent_schema_id=schema.id,
                provider_name=provider.get("provider_name"),
                model_name=model,
                extracted_data=merged_data,
                tenant_id=tenant_id
            )
    '''
    show = """
        lines = (f"Line {i}: lot {i} ships to desk{i}@example.org." for i in range(12000))
        big = File(name="big.txt", content="\\n".join(lines), mime_type="text/plain",
                   tenant_id="t1")
        small = File(name="small.txt", content="Mail one@example.org.", mime_type="text/plain",
                     tenant_id="t1")
        ontology = asyncio.run(extract_from_large_file(big, Schema(), "t1"))
        print(type(ontology).__name__, ontology.model_name, len(ontology.extracted_data["emails"]))
        single = asyncio.run(extract_from_large_file(small, Schema(), "t1"))
        print(type(single).__name__, single.extracted_data["emails"])
    """
    lines = _ran(_run(tmp_path, "ontology.py", _script(preamble, example, show)))

    # Split in several chunks, each one's addresses concatenated (12,000 distinct ones); a small
    # file is one chunk, extracted directly.
    assert lines == ["Ontology gpt-4o 12000", "Extraction ['one@example.org']"]
