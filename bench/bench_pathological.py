"""Pathological-input benchmark: every text stage on the inputs that stalled batches (issue 9).

    .venv/bin/python bench/bench_pathological.py [--scale 1.0] [--repeat 3] [--only NAME]

For each input (a 12 MB single line, a million one-character lines, 10 MB of one character, a
million-column CSV, 200,000 nested JSON brackets, 5 MB of emoji and combining marks, a 2 MB
base64 blob) it times, in CPU seconds of this process (median of --repeat runs):

- extract:   text extraction from the file's bytes (`extract_text`, the sniffed media type)
- markdown / recursive / token: chunking with the default (Markdown) chunker, the recursive
  one and the token TextChunker, 512 cl100k tokens, 64 overlap (`build_chunker`)
- compress:  `compress_text` with the default extractive strategy, 1024 tokens
- offline:   the offline extractor (`extract_facts`) over every chunk of the default chunker,
  as the `agentic_extractions` stage runs it

Each figure is printed as a ratio to one tiktoken `encode_ordinary` pass over the same
extracted text (the goal is <= 3x). CPU time is disturbed less than wall time by other load.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from content_core.agents import extract_facts  # noqa: E402
from content_core.chunking import Chunker, ChunkingConfig, build_chunker  # noqa: E402
from content_core.compression import CompressionConfig, compress_text  # noqa: E402
from content_core.errors import ContentError  # noqa: E402
from content_core.extract import extract_text  # noqa: E402
from content_core.tokens import get_encoding  # noqa: E402
from tests.fixtures.pathological import PATHOLOGICAL, Pathological  # noqa: E402

STAGES = ("extract", "markdown", "recursive", "token", "compress", "offline")


def _median_cpu(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _extract(data: bytes, media_type: str, filename: str) -> object:
    try:
        return extract_text(data, media_type, filename=filename)
    except ContentError as exc:
        return exc


def main() -> None:
    """Print one row per input: the baseline in seconds and each stage as a ratio to it."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input size factor")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--only", default=None, help="run only the input of this name")
    args = parser.parse_args()
    encoding = get_encoding("cl100k_base")
    chunkers = {
        name: build_chunker(ChunkingConfig(chunker=name))
        for name in ("markdown", "recursive", "token")
    }
    header = f"{'input':<22}{'MB':>6}{'tiktoken s':>12}" + "".join(f"{s:>11}" for s in STAGES)
    print(header)
    print("-" * len(header))
    for case in PATHOLOGICAL:
        if args.only and case.name != args.only:
            continue
        base, ratios, size = _measure(case, args.scale, args.repeat, encoding, chunkers)
        print(
            f"{case.name:<22}{size / 1e6:>6.1f}{base:>12.3f}"
            + "".join(f"{r:>10.2f}x" for r in ratios),
            flush=True,
        )


def _measure(
    case: Pathological,
    scale: float,
    repeat: int,
    encoding: Any,  # Any: tiktoken.Encoding
    chunkers: dict[str, Chunker],
) -> tuple[float, list[float], int]:
    """The baseline in CPU seconds, each stage's ratio to it, and the input's size."""
    data = case.data(scale)
    try:
        text = extract_text(data, case.media_type, filename=case.filename).text
    except ContentError as exc:
        # Refused on purpose (JSON nested past max_json_depth): the later stages get the
        # bytes as plain text, as a user's .txt copy of the file would give them.
        print(f"  ({case.name}: {exc.error_type}; later stages read it as plain text)")
        text = extract_text(data, "text/plain", filename=case.filename).text
    base = _median_cpu(lambda: encoding.encode_ordinary(text), repeat)
    chunks = [c.content for c in chunkers["markdown"].chunk(text)]
    compression = CompressionConfig()
    work: dict[str, Callable[[], object]] = {
        "extract": lambda: _extract(data, case.media_type, case.filename),
        **{
            name: (lambda chunker=chunker: chunker.chunk(text))
            for name, chunker in chunkers.items()
        },
        "compress": lambda: compress_text(text, compression),
        "offline": lambda: [extract_facts(chunk) for chunk in chunks],
    }
    return base, [_median_cpu(work[stage], repeat) / base for stage in STAGES], len(data)


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
