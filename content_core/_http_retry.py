"""Retry timing shared by the HTTP clients (chat completions, embeddings)."""

from __future__ import annotations

import email.utils
import random
import time

import httpx

__all__ = ["backoff_s", "retry_after_s"]


def retry_after_s(response: httpx.Response) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, or `Retry-After` seconds or date."""
    millis = response.headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def backoff_s(attempt: int, base_s: float, cap_s: float) -> float:
    """Exponential backoff for retry `attempt` (0-based), capped, with jitter so that clients
    do not retry in step."""
    return float(min(cap_s, base_s * 2.0**attempt) * random.uniform(0.5, 1.0))
