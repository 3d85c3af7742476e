"""ExpansionBudget: decompressed bytes and member files allowed for one raw file, charged by
every container met while normalising it (archives, emails, gzip, Office zip packages)."""

from __future__ import annotations

from dataclasses import dataclass

from content_core.errors import BinaryFanoutError, BinaryTooLargeError

__all__ = ["ExpansionBudget"]


@dataclass
class ExpansionBudget:
    """Decompressed bytes and member files left for one raw file, shared by all containers."""

    max_bytes: int
    max_files: int
    max_ratio: float = 200.0
    used_bytes: int = 0
    used_files: int = 0

    def charge_bytes(self, count: int, what: str) -> None:
        """Count `count` more decompressed bytes; raise `BinaryTooLargeError` past the limit."""
        self.used_bytes += count
        if self.used_bytes > self.max_bytes:
            raise BinaryTooLargeError(
                f"{what}: decompressed data passes the budget of {self.max_bytes} bytes "
                "(max_uncompressed_bytes)",
                limit="max_uncompressed_bytes",
                value=self.used_bytes,
                maximum=self.max_bytes,
            )

    def charge_file(self, what: str) -> None:
        """Count one more member; raise `BinaryFanoutError` past the limit."""
        self.used_files += 1
        if self.used_files > self.max_files:
            raise BinaryFanoutError(
                f"{what}: more than {self.max_files} members in total (max_expanded_files)",
                limit="max_expanded_files",
                value=self.used_files,
                maximum=self.max_files,
            )

    def check_ratio(self, produced: int, compressed: int, what: str, member: str) -> None:
        """Raise `BinaryTooLargeError` when `produced` bytes inflated from `compressed` pass the
        ratio limit; members under 1 MiB are exempt (small XML parts compress very well)."""
        if produced > 1_048_576 and produced > self.max_ratio * max(compressed, 1):
            raise BinaryTooLargeError(
                f"{what}: member {member!r} expands more than {self.max_ratio:.0f} times "
                "(max_compression_ratio)",
                limit="max_compression_ratio",
                value=produced / max(compressed, 1),
                maximum=self.max_ratio,
            )

    @property
    def bytes_left(self) -> int:
        """Decompressed bytes still allowed."""
        return max(0, self.max_bytes - self.used_bytes)
