"""Reading a page once across processes: the cache is asked first, then the page's claim is
taken so that a process already reading the same pixels (by OCR or by the vision-language
model) is waited for instead of read a second time; `PageClaimed` is the signal that such a
process exists and the caller asked not to wait for it."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from content_core.cache import ExtractionCache

__all__ = ["PageClaimed", "read_once"]

# The longest wait for another process reading the same page, when no deadline is nearer.
CLAIM_WAIT_S = 300.0

T = TypeVar("T")


class PageClaimed(Exception):  # noqa: N818 (not an error: a reason to come back later)
    """Another process is reading this page now (raised instead of waiting for it when the
    caller asked to defer, so that the file can be processed again after the others)."""


def read_once(
    cache: ExtractionCache,
    key: str,
    *,
    cached: Callable[[], T | None],
    read: Callable[[], T],
    store: Callable[[T], None],
    deadline: float | None,
    defer_claimed: bool,
) -> T:
    """`cached()` when it holds the page's reading, else `read()` under the page's claim,
    handed to `store`. A claim held elsewhere is waited for until `deadline` or at most
    `CLAIM_WAIT_S` (then the cache is asked again); with `defer_claimed` it is not waited
    for: `PageClaimed` is raised."""
    if (hit := cached()) is not None:
        return hit
    now = time.monotonic()
    wait_until = now if defer_claimed else min(now + CLAIM_WAIT_S, deadline or math.inf)
    with cache.claim(key, deadline=wait_until) as held:
        if not held and defer_claimed:
            raise PageClaimed(key)
        if (hit := cached()) is not None:
            return hit
        value = read()
        store(value)
    return value
