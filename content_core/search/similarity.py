"""Near-duplicate documents: MinHash signatures of an artifact's text (word 3-shingles, rensa),
the LSH band keys that find candidate pairs, and the Jaccard estimate that confirms them.

The threshold was chosen on the corpus's real copies (tests/corpus eml/ and msg/): the same
email as plain, base64 and UTF-16 `.eml` and as `.msg` differs in its header lines (the To:
line, the date's format), which in a 260-character email is a large share of the words. Their
exact Jaccard over word 3-shingles is 1.0 (plain and base64), 0.77 (UTF-16), 0.56 and 0.45
(`.msg`), 0.60 for the eml/msg pair with an attachment; the most similar pair that is not a
copy (a page photographed and the slides it came from) is 0.32. So a pair is near-duplicate at
an estimated Jaccard of 0.5 or more; copies below it (0.45) still join their group through a
copy above it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rensa import RMinHash

__all__ = [
    "BANDS",
    "NUM_PERM",
    "SHINGLE_WORDS",
    "SIMILARITY_FINGERPRINT",
    "THRESHOLD",
    "Signed",
    "band_keys",
    "estimate_jaccard",
    "minhash",
    "near_pairs",
    "shingles",
    "signature_of",
]

SHINGLE_WORDS = 3
NUM_PERM = 128
_SEED = 1
# LSH: 42 bands of 3 values (126 of the 128): a pair at Jaccard 0.5 shares a band with
# probability 1 - (1 - 0.5**3)**42 = 0.996, at 0.3 with 0.68 (then rejected on the signature).
BANDS = 42
_ROWS = 3
THRESHOLD = 0.5
SIMILARITY_FINGERPRINT = hashlib.sha256(
    f"rensa-rminhash:{NUM_PERM}:{_SEED}:words{SHINGLE_WORDS}:{BANDS}x{_ROWS}".encode()
).hexdigest()[:16]

# Words: runs of letters, digits and underscore (linear, no backtracking); case folded.
_WORD = re.compile(r"\w+")


def shingles(text: str) -> list[str]:
    """The distinct word `SHINGLE_WORDS`-shingles of `text` (case folded); a text of fewer
    words is one shingle, a text without words none."""
    words = _WORD.findall(text.casefold())
    if len(words) <= SHINGLE_WORDS:
        return [" ".join(words)] if words else []
    return list(
        dict.fromkeys(
            " ".join(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)
        )
    )


def minhash(text: str) -> tuple[int, ...] | None:
    """The MinHash signature of `text` (`NUM_PERM` unsigned 32-bit values), None when it has
    no words."""
    return signature_of(shingles(text))


def signature_of(items: Sequence[str]) -> tuple[int, ...] | None:
    """The MinHash signature of a text's `shingles`, None when there are none."""
    if not items:
        return None
    sketch = RMinHash(num_perm=NUM_PERM, seed=_SEED)
    sketch.update(items)
    return tuple(int(v) for v in sketch.digest())


def band_keys(signature: Sequence[int]) -> tuple[int, ...]:
    """One signed 64-bit key per LSH band (the band's number and values hashed): two
    signatures that share a key agree on a whole band, so they are a candidate pair."""
    keys: list[int] = []
    for band in range(BANDS):
        values = signature[band * _ROWS : (band + 1) * _ROWS]
        data = band.to_bytes(2, "little") + b"".join(v.to_bytes(4, "little") for v in values)
        digest = hashlib.blake2b(data, digest_size=8).digest()
        keys.append(int.from_bytes(digest, "little", signed=True))
    return tuple(keys)


def estimate_jaccard(a: Sequence[int], b: Sequence[int]) -> float:
    """The Jaccard estimate of two signatures: the share of positions where they agree."""
    if len(a) != len(b) or not a:
        raise ValueError("signatures of different lengths cannot be compared")
    return sum(1 for x, y in zip(a, b, strict=True) if x == y) / len(a)


@dataclass(frozen=True, slots=True)
class Signed:
    """A document and its signature: `key` names it for the caller (any hashable value)."""

    key: object
    signature: tuple[int, ...]


def near_pairs(
    new: Sequence[Signed], old: Sequence[Signed] = ()
) -> list[tuple[int, int, float]]:
    """Near-duplicate pairs among `new` and between `new` and `old`, as (index in `new`, index
    in `new` + `old` of the other, Jaccard estimate), the estimate at least `THRESHOLD`. A pair
    within `new` is given once, from the later document to the earlier; pairs within `old` are
    not looked for. Candidates come from shared LSH bands, so the work grows with the documents
    and their candidates, never with all pairs."""
    everything = [*new, *old]
    by_key: dict[int, list[int]] = {}
    for index, doc in enumerate(everything):
        for key in band_keys(doc.signature):
            by_key.setdefault(key, []).append(index)
    candidates: set[tuple[int, int]] = set()
    for members in by_key.values():
        fresh = [m for m in members if m < len(new)]
        for a in fresh:
            for b in members:
                if b != a and not (b < len(new) and b > a):
                    candidates.add((a, b))
    pairs: list[tuple[int, int, float]] = []
    for a, b in sorted(candidates):
        score = estimate_jaccard(everything[a].signature, everything[b].signature)
        if score >= THRESHOLD:
            pairs.append((a, b, score))
    return pairs
