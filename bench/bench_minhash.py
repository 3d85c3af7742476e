"""MinHash for document_similarity: datasketch against rensa on the corpus's texts.

    .venv/bin/python bench/bench_minhash.py --store DIR [--repeat 5]

Reads the text of every current artifact of the store at DIR (ingest tests/corpus into it
first: `content-pipeline ingest tests/corpus` with CONTENT_STORE_DIR=DIR), shingles it as
`content_core.search.similarity` does (word 3-shingles) and times, best of --repeat:
signatures by datasketch (`MinHash.update_batch`, and `MinHash.bulk`) and by rensa
(`RMinHash.update`), 128 permutations each; then the Jaccard estimates of both against the
exact Jaccard of every pair whose exact Jaccard is 0.2 or more (mean absolute error), and how
many pairs each finds at the threshold. Prints the figures; shingling is timed apart.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from content_core.search.similarity import NUM_PERM, THRESHOLD, shingles  # noqa: E402
from content_core.store import ContentStore  # noqa: E402


def _best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import datasketch
    import rensa

    rows = ContentStore(args.store).query(
        "SELECT DISTINCT artifact_id, text FROM current_normalised_artifacts "
        "WHERE text IS NOT NULL AND error_type IS NULL ORDER BY artifact_id"
    ).to_pylist()
    texts = [str(r["text"]) for r in rows]
    start = time.perf_counter()
    sets = [shingles(t) for t in texts]
    shingle_s = time.perf_counter() - start
    sets = [s for s in sets if s]
    encoded = [[s.encode() for s in items] for items in sets]
    total = sum(len(s) for s in sets)
    chars = sum(len(t) for t in texts)
    print(f"{len(sets)} texts, {chars:,} characters, {total:,} shingles "
          f"(shingling {shingle_s * 1000:.1f} ms)")

    def by_datasketch() -> list[datasketch.MinHash]:
        out = []
        for items in encoded:
            sketch = datasketch.MinHash(num_perm=NUM_PERM, seed=1)
            sketch.update_batch(items)
            out.append(sketch)
        return out

    def by_datasketch_bulk() -> list[datasketch.LeanMinHash]:
        return list(datasketch.MinHash.bulk(encoded, num_perm=NUM_PERM, seed=1))

    def by_rensa() -> list[rensa.RMinHash]:
        out = []
        for items in sets:
            sketch = rensa.RMinHash(num_perm=NUM_PERM, seed=1)
            sketch.update(items)
            out.append(sketch)
        return out

    figures = {
        "datasketch MinHash.update_batch": _best(by_datasketch, args.repeat),
        "datasketch MinHash.bulk": _best(by_datasketch_bulk, args.repeat),
        "rensa RMinHash.update": _best(by_rensa, args.repeat),
    }
    for name, seconds in figures.items():
        print(f"{name:34s} {seconds * 1000:8.1f} ms  "
              f"{total / seconds / 1e6:6.2f} M shingles/s")
    base = figures["datasketch MinHash.update_batch"]
    print(f"rensa is {base / figures['rensa RMinHash.update']:.1f}x datasketch (update_batch)")

    ds, rs = by_datasketch(), by_rensa()
    exact_sets = [set(s) for s in sets]
    errors = {"datasketch": 0.0, "rensa": 0.0}
    found = {"exact": 0, "datasketch": 0, "rensa": 0}
    pairs = 0
    for a, b in itertools.combinations(range(len(sets)), 2):
        exact = len(exact_sets[a] & exact_sets[b]) / len(exact_sets[a] | exact_sets[b])
        if exact < 0.2:
            continue
        pairs += 1
        estimates = {"datasketch": ds[a].jaccard(ds[b]), "rensa": rs[a].jaccard(rs[b])}
        found["exact"] += exact >= THRESHOLD
        for name, value in estimates.items():
            errors[name] += abs(value - exact)
            found[name] += value >= THRESHOLD
    print(f"{pairs} pairs at exact Jaccard >= 0.2; at the threshold {THRESHOLD}: {found}")
    for name, error in errors.items():
        print(f"{name} mean absolute error {error / max(pairs, 1):.3f}")


if __name__ == "__main__":
    from figures import run_main  # bench/figures.py: --write-docs records the figures

    run_main(main)
