"""JSON and NDJSON pretty-printed with two-space indents, after a nesting-depth check.

`json.loads` raises `RecursionError` on deep nesting (a few thousand `[`), so the depth is
measured first on the bracket characters outside strings, and over-deep input is refused.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate

from content_core.binary import media_types as mt
from content_core.errors import ExtractionError, LimitExceededError
from content_core.extract._decode import decode_bytes
from content_core.extract.base import Blob, ExtractedText, ExtractOptions, SniffInfo, build_text
from content_core.formats import PRIORITY_TEXT_FORMAT, Format, Handler

__all__ = ["FORMATS", "JsonExtractor", "json_depth"]

_JSON_TYPES = frozenset({mt.JSON, "application/ld+json", "text/json"})
_NDJSON_TYPES = frozenset({mt.NDJSON, "application/jsonl", "application/x-jsonlines"})
# A string, or an unterminated one up to the end: a start that could fail would be retried from
# every later (escaped) quote, rescanning the rest of the text each time.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """Return the deepest bracket nesting of `text`, ignoring brackets inside strings."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(accumulate(_STEP[c] for c in brackets))


def _pretty(text: str, options: ExtractOptions, media_type: str) -> str:
    depth = json_depth(text)
    if depth > options.max_json_depth:
        raise LimitExceededError(
            f"JSON nesting depth {depth} over max_json_depth={options.max_json_depth}",
            media_type=media_type,
            stage="extract",
            limit="max_json_depth",
            value=depth,
            maximum=options.max_json_depth,
        )
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ExtractionError(f"not valid JSON: {exc}", media_type=media_type) from exc
    return json.dumps(value, indent=2, ensure_ascii=False)


class JsonExtractor:
    """Pretty-prints JSON documents and each record of newline-delimited JSON."""

    name = "json"

    def accepts(self, info: SniffInfo) -> bool:
        """Accept JSON and NDJSON media types."""
        return info.media_type in _JSON_TYPES or info.media_type in _NDJSON_TYPES

    def extract(self, blob: Blob, options: ExtractOptions) -> ExtractedText:
        """Return the indented JSON (NDJSON: records separated by blank lines).

        Raises:
            LimitExceededError: nesting deeper than `options.max_json_depth`.
            ExtractionError: the text is not valid JSON (the plain-text handler takes over).
        """
        media_type = blob.info.media_type
        text = decode_bytes(blob.data, declared=blob.info.charset).lstrip("\ufeff")
        if media_type in _NDJSON_TYPES:
            records = [line for line in text.splitlines() if line.strip()]
            parts = [_pretty(line, options, media_type) for line in records]
        else:
            parts = [_pretty(text, options, media_type)]
        return build_text(["\n\n".join(parts)], handler=self.name, paged=False)


FORMATS = (
    Format(name="json", media_types=(mt.JSON, mt.NDJSON), kind="json",
           handlers=(Handler(JsonExtractor(), PRIORITY_TEXT_FORMAT),), extension=".json"),
)
