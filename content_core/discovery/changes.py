"""What discoveries found, for people: the changed paths of some batches by kind (a deletion
and an addition of the same bytes read as a rename), and when a source last changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from content_core.store import ContentStore

__all__ = ["ChangeReport", "Rename", "describe_changes", "last_discovery"]

# Each entry of the batches with the bytes it names: a deletion's are those of the version it
# removed (the path's latest live row before it), so a rename can be matched by content.
_ENTRIES = """
WITH m AS (
    SELECT source_id, batch_seq, path, change, sha256 FROM batches
    WHERE batch_id IN (SELECT unnest(?::VARCHAR[]))
),
prev AS (  -- an equality join on the deleted paths only: cheap on a long history
    SELECT d.source_id, d.path, d.batch_seq, arg_max(p.sha256, p.batch_seq) AS sha256
    FROM m d JOIN batches p ON p.source_id = d.source_id AND p.path = d.path
    WHERE d.change = 'deleted' AND p.batch_seq < d.batch_seq AND p.change <> 'deleted'
    GROUP BY d.source_id, d.path, d.batch_seq
)
SELECT m.batch_seq, m.path, m.change, coalesce(m.sha256, prev.sha256) AS sha256
FROM m LEFT JOIN prev USING (source_id, path, batch_seq)
ORDER BY m.batch_seq, m.path
"""


@dataclass(frozen=True, slots=True)
class Rename:
    """A path deleted and the same bytes added under another path, in the same batches."""

    old: str
    new: str


@dataclass(frozen=True, slots=True)
class ChangeReport:
    """The paths some batches change, by kind, in batch then path order."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    renamed: tuple[Rename, ...] = ()

    @property
    def total(self) -> int:
        """How many changes (a rename counts once)."""
        return len(self.added) + len(self.modified) + len(self.deleted) + len(self.renamed)


def describe_changes(store: ContentStore, batch_ids: Sequence[str]) -> ChangeReport:
    """The changes `batch_ids` hold. A deleted path whose last bytes are added under a new path
    in the same batches is reported as renamed (discovery itself records a deletion and an
    addition: the store keys documents by path); each added path pairs with one deletion."""
    if not batch_ids:
        return ChangeReport()
    rows = store.query(_ENTRIES, [list(batch_ids)]).to_pylist()
    gone: dict[str, list[str]] = {}
    for row in rows:
        if row["change"] == "deleted" and row["sha256"] is not None:
            gone.setdefault(row["sha256"], []).append(row["path"])
    added: list[str] = []
    modified: list[str] = []
    renamed: list[Rename] = []
    moved: set[str] = set()
    for row in rows:
        if row["change"] == "modified":
            modified.append(row["path"])
        elif row["change"] == "added":
            olds = gone.get(row["sha256"] or "")
            if olds:
                old = olds.pop(0)
                moved.add(old)
                renamed.append(Rename(old=old, new=row["path"]))
            else:
                added.append(row["path"])
    deleted = [r["path"] for r in rows if r["change"] == "deleted" and r["path"] not in moved]
    return ChangeReport(
        added=tuple(added),
        modified=tuple(modified),
        deleted=tuple(deleted),
        renamed=tuple(renamed),
    )


def last_discovery(store: ContentStore, source_id: str) -> datetime | None:
    """When the latest batch of `source_id` was discovered (None: it has none)."""
    row = store.query(
        "SELECT max(discovered_at) AS at FROM batches WHERE source_id = ?", [source_id]
    ).to_pylist()
    at = row[0]["at"] if row else None
    return at if isinstance(at, datetime) else None
