"""The extraction cache: keys, atomic files, and several processes sharing one directory."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from content_core.agents import AgentConfig, ExtractionInput, run_extractions
from content_core.cache import CachedOutput, ExtractionCache, cache_key
from tests.support.chat_server import ChatServer


def _key(i: int) -> str:
    return cache_key(chunk_text=f"chunk {i}", schema="s@1", model="offline:m", prompt="p")


def test_key_covers_every_component() -> None:
    base = {"chunk_text": "t", "schema": "s", "model": "m", "prompt": "p"}
    keys = {cache_key(**base)} | {cache_key(**{**base, k: v + "!"}) for k, v in base.items()}
    assert len(keys) == 5 and all(len(k) == 64 for k in keys)


def test_roundtrip_miss_and_corrupt_entry(tmp_path: Path) -> None:
    cache = ExtractionCache(tmp_path)
    key = _key(1)
    assert cache.get(key) is None and key not in cache and len(cache) == 0
    cache.put(key, CachedOutput('{"a": 1}', "m", 3, 4))
    assert cache.get(key) == CachedOutput('{"a": 1}', "m", 3, 4)
    assert key in cache and len(cache) == 1
    (tmp_path / key[:2] / f"{key}.json").write_text("{truncated", encoding="utf-8")
    assert cache.get(key) is None  # unreadable entries are misses, so they get recomputed
    with pytest.raises(ValueError):
        cache.get("../../etc/passwd")


def _writer(root: str, worker: int) -> None:
    cache = ExtractionCache(Path(root))
    for round_ in range(2):
        for i in range(40):
            cache.put(_key(i), CachedOutput(f'{{"i": {i}}}', "m", worker, round_))
            hit = cache.get(_key((i * 7) % 40))
            assert hit is None or hit.output_json == f'{{"i": {(i * 7) % 40}}}'


def test_processes_writing_the_same_keys_never_corrupt_entries(tmp_path: Path) -> None:
    # spawn, never fork: pytest's process runs threads, and a forked child can inherit a lock
    # that one of them held and wait on it for ever.
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w)) for w in range(4)]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)
        assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
                w.join(timeout=10)
    cache = ExtractionCache(tmp_path)
    assert len(cache) == 40
    assert all(cache.get(_key(i)).output_json == f'{{"i": {i}}}' for i in range(40))  # type: ignore[union-attr]
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".json"]


def _extract(root: str) -> int:
    items = [
        ExtractionInput(
            chunk_id=f"c{i}",
            artifact_id="a",
            path="p",
            content=f"text {i} a@b.org",
            index=i,
            total_chunks=30,
        )
        for i in range(30)
    ]
    return run_extractions(items, AgentConfig(), cache_dir=Path(root)).calls


def test_concurrent_pipeline_runs_share_the_cache(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        calls = pool.map_async(_extract, [str(tmp_path)] * 2).get(timeout=240)
    assert all(c <= 30 for c in calls)
    assert _extract(str(tmp_path)) == 0
    assert len(ExtractionCache(tmp_path)) == 30


def test_identical_chunks_cost_one_call(tmp_path: Path) -> None:
    """The same boilerplate chunk in many files is asked once and cached for every copy."""
    with ChatServer() as server:
        config = AgentConfig(kind="openai", model="gpt-4o-mini", base_url=server.base_url)
        items = [
            ExtractionInput(
                chunk_id=f"c{n}",
                artifact_id=f"a{n}",
                path=f"copy-{n}/footer.txt",
                content="Contact billing@example.org about invoice 42.",
                index=0,
                total_chunks=1,
            )
            for n in range(5)
        ]
        run = run_extractions(items, config, cache_dir=tmp_path)
        assert run.calls == 1 and len(server.calls) == 1
        assert all(r.output_json and not r.error_type for r in run.records)
        assert run.prompt_tokens == run.records[0].prompt_tokens > 0
        rerun = run_extractions(items, config, cache_dir=tmp_path)
        assert rerun.calls == 0 and rerun.cache_hits == 5 and len(server.calls) == 1


def _hold_claim(root: str, key: str, held: Any, release: Any) -> None:
    with ExtractionCache(Path(root)).claim(key, deadline=time.monotonic() + 60) as got:
        assert got
        held.set()
        release.wait(60)


@contextmanager
def _claim_holder(root: Path, key: str) -> Iterator[tuple[Any, Any]]:
    """Another process holding `key`'s claim (spawned: no fork from pytest's threads); its
    process and the event that lets it go."""
    context = multiprocessing.get_context("spawn")
    held, release = context.Event(), context.Event()
    holder = context.Process(target=_hold_claim, args=(str(root), key, held, release))
    holder.start()
    try:
        assert held.wait(120)
        yield holder, release
    finally:
        # Never set the event after the holder was killed: a process killed while waiting on
        # it leaves its condition counting a sleeper that never wakes, and `set` would wait
        # for it for ever.
        if holder.is_alive():
            release.set()
            holder.join(timeout=10)
        if holder.is_alive():
            holder.kill()
            holder.join(timeout=10)


def test_a_claim_is_held_by_one_process_at_a_time(tmp_path: Path) -> None:
    key = _key(1)
    cache = ExtractionCache(tmp_path)
    with _claim_holder(tmp_path, key) as (holder, release):
        with cache.claim(key, deadline=time.monotonic() + 0.2) as got:
            assert got is False  # still held past the deadline: the caller makes the entry
        release.set()
        holder.join(timeout=60)
        assert holder.exitcode == 0
    with cache.claim(key, deadline=time.monotonic() + 60) as got:
        assert got is True
    # A claim leaves no file behind, and is not counted as an entry.
    assert not list(tmp_path.rglob("*.claim")) and len(cache) == 0


def test_a_claim_dies_with_the_process_that_held_it(tmp_path: Path) -> None:
    key = _key(2)
    with _claim_holder(tmp_path, key) as (holder, _release):
        os.kill(holder.pid, signal.SIGKILL)
        holder.join(timeout=60)
        assert list(tmp_path.rglob("*.claim"))  # killed: its file stays, its flock does not
        with ExtractionCache(tmp_path).claim(key, deadline=time.monotonic() + 60) as got:
            assert got is True


def test_waiters_on_one_claim_take_it_one_after_another(tmp_path: Path) -> None:
    """Threads stand for processes here (an flock belongs to an open file, not a process):
    however the claim file comes and goes, no two of them ever hold it together."""
    cache = ExtractionCache(tmp_path)
    key = _key(3)
    inside: list[int] = []
    overlaps: list[int] = []
    held: list[bool] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        for _ in range(20):
            with cache.claim(key, deadline=time.monotonic() + 60) as got:
                with lock:
                    held.append(got)
                    inside.append(n)
                    if len(inside) > 1:
                        overlaps.append(n)
                time.sleep(0.001)
                with lock:
                    inside.remove(n)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and overlaps == []
    assert held == [True] * 80
    assert not list(tmp_path.rglob("*.claim"))
