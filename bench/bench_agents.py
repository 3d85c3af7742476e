"""Benchmark: agentic extraction of 200 chunks against a local chat-completions server.

The server (tests/support/chat_server.py) answers every call after a fixed latency (100 ms by
default). With concurrency 8 the ideal wall time is 200 / 8 x 0.1 s = 2.5 s; the goal is at
most 1.3x that. The same batch is then run again with the warm cache (zero calls expected).

    .venv/bin/python bench/bench_agents.py [--chunks 200] [--latency 0.1] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from content_core.agents import AgentConfig, ExtractionInput, run_extractions  # noqa: E402
from tests.support.chat_server import ChatServer  # noqa: E402


def make_chunks(n: int) -> list[ExtractionInput]:
    """`n` distinct chunks over 20 documents."""
    return [
        ExtractionInput(
            chunk_id=f"chunk-{i:04d}",
            artifact_id=f"doc-{i % 20:02d}",
            path=f"inbox/doc-{i % 20:02d}.md",
            content=(
                f"Section {i}. The harbour authority logged {i * 3} lantern repairs in week {i}. "
                f"Contact ops{i}@harbour.example; invoice total EUR {i * 11}."
            ),
            index=i // 20,
            total_chunks=-(-n // 20),
        )
        for i in range(n)
    ]


def main() -> None:
    """Run the cold and warm passes and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    items = make_chunks(args.chunks)
    ideal = args.chunks / args.concurrency * args.latency
    with ChatServer(latency_s=args.latency) as server, tempfile.TemporaryDirectory() as cache:
        config = AgentConfig(
            kind="openai",
            model="gpt-4o-mini",
            base_url=server.base_url,
            api_key="bench",
            concurrency=args.concurrency,
        )
        started = time.perf_counter()
        cold = run_extractions(items, config, cache_dir=Path(cache))
        cold_s = time.perf_counter() - started
        in_flight = server.max_in_flight
        cold_calls = len(server.calls)

        server.reset()
        started = time.perf_counter()
        warm = run_extractions(items, config, cache_dir=Path(cache))
        warm_s = time.perf_counter() - started

    errors = sum(r.error_type is not None for r in cold.records)
    print(
        f"chunks={args.chunks} latency={args.latency * 1000:.0f}ms concurrency={args.concurrency}"
    )
    print(f"ideal wall          : {ideal:.3f} s")
    print(
        f"cold run wall       : {cold_s:.3f} s  ({cold_s / ideal:.2f}x ideal; goal <= 1.30x)  "
        f"calls={cold.calls} http_requests={cold_calls} errors={errors} "
        f"max_in_flight={in_flight} prompt_tokens={cold.prompt_tokens} "
        f"completion_tokens={cold.completion_tokens}"
    )
    print(
        f"warm-cache rerun    : {warm_s:.3f} s  calls={warm.calls} cache_hits={warm.cache_hits} "
        f"http_requests={len(server.calls)}"
    )


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
