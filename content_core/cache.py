"""The extraction cache: validated agent outputs as files, written atomically, shared by processes.

Layout: `<root>/<key[:2]>/<key>.json`. A writer writes a temporary file beside the target and
renames it into place (`os.replace` is atomic on one filesystem), so a reader sees no file or
a whole one, and two processes caching the same key both succeed with identical content.

An entry that is costly to make (an OCR reading) can be claimed first (`claim`): a process
that misses the cache while another one holds the key's claim waits for that entry instead of
making it a second time. A claim is an `flock` on `<root>/<key[:2]>/.<key>.claim`, so a
process that dies holding one never leaves it held.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CACHE_FORMAT", "CachedOutput", "ExtractionCache", "cache_key"]

logger = logging.getLogger(__name__)

# Part of every key: bump it to invalidate all entries when the key recipe changes.
CACHE_FORMAT = "extraction-cache-v1"
# How often a process waiting for another one's claim looks again.
_CLAIM_POLL_S = 0.02


def cache_key(*, chunk_text: str, schema: str, model: str, prompt: str) -> str:
    """Hex SHA-256 over the chunk text, the schema identity, the model and the prompt.

    `schema` should carry the schema's fingerprint (so editing a field invalidates) and
    `prompt` the template or rendered prompt (so editing the instructions invalidates).
    """
    payload = json.dumps(
        [CACHE_FORMAT, chunk_text, schema, model, prompt], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedOutput:
    """One cache entry: the validated output as JSON and the usage of the call that made it."""

    output_json: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ExtractionCache:
    """Validated outputs on disk under `root`, keyed by `cache_key`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        if len(key) < 8 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedOutput | None:
        """Return the entry for `key`, or None when absent or unreadable (treated as a miss)."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return CachedOutput(
                output_json=str(data["output_json"]),
                model=str(data["model"]),
                prompt_tokens=int(data.get("prompt_tokens", 0)),
                completion_tokens=int(data.get("completion_tokens", 0)),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None

    def put(self, key: str, entry: CachedOutput) -> None:
        """Store `entry` under `key` atomically (write aside, then rename into place)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(
            {
                "key": key,
                "output_json": entry.output_json,
                "model": entry.model,
                "prompt_tokens": entry.prompt_tokens,
                "completion_tokens": entry.completion_tokens,
            },
            ensure_ascii=False,
        )
        # The temporary name starts with "." and lacks ".json", so it is never read as an entry.
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=path.parent)
        try:
            # No fsync: the rename already keeps readers from seeing half an entry, and an
            # entry torn by a power loss fails to parse, which `get` treats as a miss.
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @contextmanager
    def claim(self, key: str, *, deadline: float) -> Iterator[bool]:
        """Hold the claim on `key` while making its entry: True once held, False when
        another process still held it at `deadline` (a `time.monotonic()` value; make the
        entry anyway). Look the key up again once this yields: the holder that was waited
        for has usually stored it.

        The claim file goes when its holder is done. A process that was waiting on the
        removed file finds it gone and claims afresh, so two processes never both hold one."""
        path = self._path(key)
        claim_path = path.with_name(f".{key}.claim")
        claim_path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(claim_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if not _lock_until(fd, deadline):
                    yield False
                    return
                try:
                    current = os.stat(claim_path).st_ino
                except FileNotFoundError:
                    current = None
                if current == os.fstat(fd).st_ino:
                    try:
                        yield True
                    finally:
                        claim_path.unlink(missing_ok=True)
                    return
            finally:
                os.close(fd)  # releases the flock

    def __contains__(self, key: str) -> bool:
        return self._path(key).is_file()

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.is_dir() else 0


def _lock_until(fd: int, deadline: float) -> bool:
    """Take an exclusive flock on `fd`, polling until `deadline`; False if it never came."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_CLAIM_POLL_S)
