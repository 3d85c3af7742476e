"""Ingest benchmark, two questions:

1. Cores (default): one ingest (`run_batch`, every stage) of a folder of real documents, the
   test corpus (tests/corpus) repeated to `--files` files, given 1 core and 2 cores: the run's
   process is pinned to that many CPUs (its affinity, as a container's cpuset; the pool's
   processes inherit it) and its pool has that many worker processes (the default:
   `ProcessingConfig.workers` follows the affinity). Prints files/s for each, their ratio
   (goal >= 1.7 on a 2-core machine), seconds per stage and the peak RSS of every worker
   process against the worker memory cap. Each run is a fresh interpreter (`--one-run`), so
   pools, caches and peaks start from nothing. `--no-pin` leaves every run all the cores and
   only changes the number of worker processes.
2. `--dagster`: the sample inbox (examples/make_inbox.py) through the Dagster job against a
   plain loop over the same library stages (goal: ratio <= 1.3).

Copies of a corpus file get distinct bytes (a PDF comment after %%EOF, a zip archive comment,
trailing white space or padding where the format ignores it), so that deduplication by
content does not skip them; files whose format allows no harmless change are left out.

    .venv/bin/python bench/bench_ingest.py --files 1000 [--workers 1 2] [--ocr auto] [--no-pin]
    .venv/bin/python bench/bench_ingest.py --dagster --files 1000 --repeat 3
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "examples"))

from content_core.discovery import discover_pending  # noqa: E402
from content_core.ocr import OcrConfig  # noqa: E402
from content_core.pipeline import PipelineConfig, run_batch  # noqa: E402
from content_core.pipeline.config import ProcessingConfig  # noqa: E402
from content_core.pipeline.report import StageReport  # noqa: E402
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig  # noqa: E402
from content_core.store import ContentStore  # noqa: E402

CORPUS = REPO / "tests" / "corpus"
# How each format family is made distinct without changing what it reads as.
_ZIPS = (".docx", ".xlsx", ".pptx", ".odt", ".zip", ".epub")
_TEXTS = (".txt", ".md", ".csv", ".tsv", ".json", ".ndjson", ".xml", ".html", ".htm", ".svg",
          ".eml", ".rtf")
_PADDED = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".tar")


def _variant(data: bytes, suffix: str, copy: int) -> bytes | None:
    """Copy number `copy` of a file: different bytes, same content; None when the format
    has no harmless change (it is left out)."""
    if copy == 0:
        return data
    if not data:
        return None  # an empty file stays empty only once
    if suffix == ".pdf":
        return data + b"\n%%copy-%d\n" % copy
    if suffix in _ZIPS:
        buffer = io.BytesIO(data)
        try:
            with zipfile.ZipFile(buffer, "a") as archive:
                archive.comment = b"copy-%d" % copy
        except (zipfile.BadZipFile, OSError, ValueError):
            return None
        return buffer.getvalue()
    if suffix in _TEXTS:
        # A UTF-16 text (a NUL in its first unit) takes its newlines in UTF-16: a lone byte
        # would shift every unit after it.
        newline = b"\n"
        if b"\x00" in (data[1:2], data[3:4]):  # little-endian: "M\0I\0", or after FF FE
            newline = b"\n\x00"
        elif b"\x00" in (data[0:1], data[2:3]):  # big-endian: "\0M\0I", or after FE FF
            newline = b"\x00\n"
        return data + newline * copy
    if suffix in _PADDED:
        return data + b"\0" * (512 * copy if suffix == ".tar" else copy)
    return None


def make_corpus(folder: Path, files: int) -> int:
    """Write up to `files` files, copy k of the test corpus in folder/copy-k/; return the
    count written."""
    sources = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.parent != CORPUS)
    written = copy = 0
    while written < files:
        before = written
        for path in sources:
            if written == files:
                break
            data = _variant(path.read_bytes(), path.suffix.lower(), copy)
            if data is None:
                continue
            target = folder / f"copy-{copy:05d}" / path.relative_to(CORPUS)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written += 1
        copy += 1
        if written == before:
            break
    return written


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (the forkserver and the workers it started)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process `pid` so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # Its own time and that of the children it waited for (an OCR or Office subprocess).
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def one_run(folder: Path, work: Path, workers: int, ocr: str, pin: bool) -> dict[str, object]:
    """Discover and ingest `folder` once in this process (pinned to `workers` CPUs when `pin`);
    return the figures as JSON data."""
    if pin:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:workers])
    store = ContentStore(work / "store")
    processing = ProcessingConfig(workers=workers, ocr=OcrConfig(mode=ocr))  # type: ignore[arg-type]
    config = PipelineConfig(processing=processing)
    stages: dict[str, float] = {}
    started = last = time.perf_counter()
    found = discover_pending(
        LocalFolderSource(LocalFolderSourceConfig(folder=folder)),
        store,
        set(),
        time_budget_s=float("inf"), settle_s=0.0,
    )
    stages["discovery"] = time.perf_counter() - last
    failures = 0

    def on_stage(report: StageReport) -> None:
        nonlocal last, failures
        now = time.perf_counter()
        stages[report.table] = stages.get(report.table, 0.0) + now - last
        failures += report.failures
        last = now

    for batch_id in found.batch_ids:
        run_batch(store, batch_id, config, on_stage=on_stage)
    elapsed = time.perf_counter() - started
    me = os.getpid()
    children = _descendants(me)
    workers_rss = sorted(rss for pid in children if (rss := _peak_rss_mb(pid)) is not None)
    main_cpu = time.process_time()
    return {
        "seconds": elapsed,
        "stages": stages,
        "failures": failures,
        "batches": len(found.batch_ids),
        "main_peak_rss_mb": _peak_rss_mb(me),
        "child_peak_rss_mb": workers_rss,
        "memory_cap_mb": processing.memory_mb,
        # The workers' CPU includes their children's (soffice, tesseract).
        "main_cpu_s": main_cpu,
        "workers_cpu_s": sum(_cpu_s(pid) for pid in children),
    }


def bench_cores(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = root / "corpus"
        files = make_corpus(corpus, args.files)
        given = "all cores, N worker processes" if args.no_pin else "N cores, N worker processes"
        print(f"corpus: {files} files (tests/corpus, distinct copies), OCR {args.ocr}; runs "
              f"given {given}; load average before: {os.getloadavg()[0]:.2f}", flush=True)
        results: dict[int, list[dict[str, object]]] = {n: [] for n in args.workers}
        for attempt in range(args.repeat):
            order = list(args.workers) if attempt % 2 == 0 else list(reversed(args.workers))
            for workers in order:
                work = root / f"run-{workers}-{attempt}"
                command = [sys.executable, __file__, "--one-run", "--folder", str(corpus),
                           "--work", str(work), "--workers", str(workers), "--ocr", args.ocr,
                           *(["--no-pin"] if args.no_pin else [])]
                done = subprocess.run(command, capture_output=True, text=True, timeout=7200,
                                      check=False)
                if done.returncode != 0:
                    print(done.stderr[-4000:])
                    raise SystemExit(f"run with {workers} workers failed")
                figures = json.loads(done.stdout.strip().splitlines()[-1])
                results[workers].append(figures)
                seconds = float(figures["seconds"])
                print(f"run {attempt + 1}, {workers} worker(s): {seconds:7.1f} s, "
                      f"{files / seconds:6.1f} files/s, load {os.getloadavg()[0]:.2f}",
                      flush=True)
        print(f"\nfiles: {files}")
        rates: dict[int, float] = {}
        for workers, runs in results.items():
            seconds = statistics.median(float(r["seconds"]) for r in runs)
            rates[workers] = files / seconds
            last = runs[-1]
            stages = last["stages"]
            assert isinstance(stages, dict)
            split = ", ".join(f"{name} {value:.1f}" for name, value in stages.items())
            print(f"{workers} worker(s): {rates[workers]:6.1f} files/s "
                  f"(median {seconds:.1f} s); failure rows {last['failures']}")
            print(f"    seconds per stage: {split}")
            main_cpu, workers_cpu = float(last["main_cpu_s"]), float(last["workers_cpu_s"])
            print(f"    CPU s: main process {main_cpu:.1f} (imports included; its threads update "
                  f"the search index and start the pool beside the stages), workers "
                  f"{workers_cpu:.1f}")
            print(f"    peak RSS MB: main {float(last['main_peak_rss_mb'] or 0):.0f}, "
                  f"forkserver and workers {last['child_peak_rss_mb']} "
                  f"(worker cap {last['memory_cap_mb']} MB address space)")
        if len(rates) >= 2:
            low, high = min(rates), max(rates)
            print(f"ratio {high} vs {low} worker(s): {rates[high] / rates[low]:.2f} "
                  f"(goal >= 1.7 with 2 against 1 on 2 idle cores); "
                  f"load average after: {os.getloadavg()[0]:.2f}")


def _inbox_corpus(folder: Path, files: int) -> None:
    """Write `files` files: copy k of the sample inbox lives in folder/copy-k/."""
    from make_inbox import build

    written, variant = 0, 1
    while written < files:
        target = folder / f"copy-{variant:05d}"
        target.mkdir(parents=True)
        for name, data in build(variant).items():
            if written == files:
                break
            (target / name).write_bytes(data)
            written += 1
        variant += 1


def _run_dagster(folder: Path, work: Path) -> float:
    import dagster as dg

    from content_assets.definitions import build_definitions
    from content_assets.partitions import INGEST_BATCHES

    store = ContentStore(work / "store")
    defs = build_definitions({"CONTENT_STORE_DIR": str(store.root)})
    job = defs.resolve_job_def("ingest_batch_job")
    # The instance exists before an ingest (a user's DAGSTER_HOME): its setup is not timed.
    with dg.instance_for_test() as instance:
        started = time.perf_counter()
        found = discover_pending(
            LocalFolderSource(LocalFolderSourceConfig(folder=folder)),
            store,
            set(),
            time_budget_s=float("inf"), settle_s=0.0,
        )
        instance.add_dynamic_partitions(INGEST_BATCHES, list(found.new_batch_ids))
        for batch_id in found.batch_ids:
            assert job.execute_in_process(instance=instance, partition_key=batch_id).success
        return time.perf_counter() - started


def _run_plain(folder: Path, work: Path) -> float:
    store = ContentStore(work / "store")
    started = time.perf_counter()
    found = discover_pending(
        LocalFolderSource(LocalFolderSourceConfig(folder=folder)),
        store,
        set(),
        time_budget_s=float("inf"), settle_s=0.0,
    )
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, PipelineConfig())
    return time.perf_counter() - started


def bench_dagster(files: int, repeat: int) -> None:
    """The sample inbox through the Dagster job and through a plain loop; times and ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["DAGSTER_HOME"] = str(root)
        corpus = root / "corpus"
        _inbox_corpus(corpus, files)
        dagster_times, plain_times = [], []
        for attempt in range(repeat):
            # Alternate the order so neither path always runs on a warm page cache.
            order = [("plain", _run_plain), ("dagster", _run_dagster)]
            if attempt % 2:
                order.reverse()
            for name, runner in order:
                elapsed = runner(corpus, root / f"{name}-{attempt}")
                (dagster_times if name == "dagster" else plain_times).append(elapsed)
                print(f"run {attempt + 1} {name:<8} {elapsed:7.2f} s", flush=True)
        dagster_median = statistics.median(dagster_times)
        plain_median = statistics.median(plain_times)
        print(f"files: {files}")
        print(f"dagster median: {dagster_median:.2f} s ({files / dagster_median:.0f} files/s)")
        print(f"plain   median: {plain_median:.2f} s ({files / plain_median:.0f} files/s)")
        print(f"ratio dagster/plain: {dagster_median / plain_median:.2f} (goal <= 1.3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--ocr", default="auto", help="OCR mode: auto, off, tesseract, rapidocr")
    parser.add_argument("--dagster", action="store_true", help="Dagster job against a plain loop")
    parser.add_argument("--no-pin", action="store_true", help="do not pin runs to N cores")
    parser.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_run:
        print(json.dumps(
            one_run(args.folder, args.work, args.workers[0], args.ocr, pin=not args.no_pin)
        ))
    elif args.dagster:
        bench_dagster(args.files, args.repeat)
    else:
        bench_cores(args)


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main, modes=("--dagster",))
