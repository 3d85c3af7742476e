"""`LocalPolicy`: which folders a message may name local files in (`/path`, `file:///path`);
without one, local paths are refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from content_core.errors import LimitExceededError, LocalPathRefusedError, SourceError

__all__ = ["LocalPolicy", "is_local_ref", "read_local"]

_NO_POLICY = "local paths are refused: pass LocalPolicy(allow_dirs=[...]) to allow a folder"


class LocalPolicy(BaseModel):
    """The folders whose files a message may name by path, and a size cap.

    A path is resolved first (symlinks and `..` followed, relative paths taken from the first
    folder) and read only when the resolved file lies inside one of `allow_dirs` (themselves
    resolved when the policy is made). A symlink inside an allowed folder that points outside
    it is refused like the outside path itself.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow_dirs: tuple[Path, ...] = Field(min_length=1)
    max_bytes: int = Field(default=50 * 1024 * 1024, ge=1)

    @field_validator("allow_dirs", mode="after")
    @classmethod
    def _resolved(cls, value: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(Path(folder).expanduser().resolve() for folder in value)

    def resolve(self, ref: str) -> Path:
        """The real path of the file `ref` names.

        Raises:
            LocalPathRefusedError: it resolves outside every allowed folder.
            SourceError: it does not exist or is not a regular file.
        """
        path = Path(_path_of(ref)).expanduser()
        if not path.is_absolute():
            path = self.allow_dirs[0] / path
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            # An outside path is refused before saying whether it exists.
            if not any(path.resolve().is_relative_to(d) for d in self.allow_dirs):
                raise LocalPathRefusedError(f"{ref!r} is outside the allowed folders") from exc
            raise SourceError(f"no file at {ref!r}") from exc
        if not any(real.is_relative_to(folder) for folder in self.allow_dirs):
            raise LocalPathRefusedError(
                f"{ref!r} resolves to {str(real)!r}, outside the allowed folders"
            )
        return real


def _path_of(ref: str) -> str:
    if ref.startswith("file:"):
        parts = urlsplit(ref)
        if parts.netloc not in ("", "localhost"):
            raise LocalPathRefusedError(f"{ref!r} names another host")
        return unquote(parts.path)
    return ref


def is_local_ref(ref: str) -> bool:
    """Whether a part's `url` names a local file: a `file:` URL or a bare path (no scheme)."""
    if ref.startswith("file:"):
        return True
    return bool(ref) and "://" not in ref and not ref.startswith("data:")


def read_local(ref: str, policy: LocalPolicy | None) -> tuple[Path, bytes]:
    """The resolved path and the bytes of the local file `ref`, as `policy` allows.

    Raises:
        LocalPathRefusedError: no policy, or the path resolves outside its folders.
        LimitExceededError: the file is larger than `policy.max_bytes`.
        SourceError: no such regular file.
    """
    if policy is None:
        raise LocalPathRefusedError(_NO_POLICY)
    real = policy.resolve(ref)
    # O_NOFOLLOW: a symlink put in place of the checked file after the check is not followed;
    # O_NONBLOCK: opening a FIFO returns at once (and is refused below) instead of hanging.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise SourceError(f"cannot open {ref!r}: {exc.strerror}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SourceError(f"{ref!r} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(policy.max_bytes + 1)
    if len(data) > policy.max_bytes:
        raise LimitExceededError(
            f"{ref!r} is larger than the local policy's {policy.max_bytes} bytes",
            limit="max_bytes",
            maximum=policy.max_bytes,
        )
    return real, data
