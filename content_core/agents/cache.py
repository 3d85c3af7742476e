"""The extraction cache: validated agent outputs as files, written atomically, shared by processes.

Layout: `<root>/<key[:2]>/<key>.json`. A writer writes a temporary file beside the target and
renames it into place (`os.replace` is atomic on one filesystem), so a reader sees no file or
a whole one, and two processes caching the same key both succeed with identical content.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CACHE_FORMAT", "CachedOutput", "ExtractionCache", "cache_key"]

logger = logging.getLogger(__name__)

# Part of every key: bump it to invalidate all entries when the key recipe changes.
CACHE_FORMAT = "extraction-cache-v1"


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

    def __contains__(self, key: str) -> bool:
        return self._path(key).is_file()

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.is_dir() else 0
