"""PageClaimed: the signal that another process is reading a page (by OCR or by the
vision-language model) and the caller asked not to wait for it."""

from __future__ import annotations

__all__ = ["PageClaimed"]


class PageClaimed(Exception):  # noqa: N818 (not an error: a reason to come back later)
    """Another process is reading this page now (raised instead of waiting for it when the
    caller asked to defer, so that the file can be processed again after the others)."""
