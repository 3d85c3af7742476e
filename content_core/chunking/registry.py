"""The chunker registry: every chunker by name, built-in and plug-in, and FFAI's
list_chunkers() / get_chunker(name, **kwargs) on top of it.

A chunker is one module that declares a `ChunkerSpec`; a built-in one is added with one line in
`_BUILTIN` below. Another package adds its own through the entry point group
`content_pipeline.chunkers` (the entry point names a `ChunkerSpec`); plug-ins load on the first
look-up, and one that fails to load is logged and skipped.
"""

from __future__ import annotations

import functools
import logging
from importlib.metadata import entry_points
from typing import Any

from content_core.chunking.base import ChunkerSpec
from content_core.chunking.code import CODE_SPEC
from content_core.chunking.markdown import MARKDOWN_SPEC
from content_core.chunking.recursive import CHARACTER_SPEC, HIERARCHICAL_SPEC, RECURSIVE_SPEC
from content_core.chunking.text import PARAGRAPH_SPEC, SENTENCE_SPEC, TOKEN_SPEC

__all__ = ["ENTRY_POINT_GROUP", "chunker_spec", "list_chunkers"]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "content_pipeline.chunkers"
# get_chunker's arguments that are the budget every chunker gets, not a chunker's own option.

# Any: specs differ in their options model; each one's factory is checked against its own.
# FFAI's five first, in FFAI's order, then Firefly's TextChunker strategies.
_BUILTIN: tuple[ChunkerSpec[Any], ...] = (
    CHARACTER_SPEC,
    RECURSIVE_SPEC,
    MARKDOWN_SPEC,
    CODE_SPEC,
    HIERARCHICAL_SPEC,
    TOKEN_SPEC,
    SENTENCE_SPEC,
    PARAGRAPH_SPEC,
)


@functools.cache
def _registry() -> dict[str, ChunkerSpec[Any]]:
    specs = {spec.name: spec for spec in _BUILTIN}
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            spec = entry.load()
        except Exception:  # a broken plug-in must not take the built-in chunkers down
            logger.exception(
                "chunker plug-in %r (%s) failed to load; skipped", entry.name, entry.value
            )
            continue
        if not isinstance(spec, ChunkerSpec):
            logger.error(
                "chunker plug-in %r (%s) is a %s, not a ChunkerSpec; skipped",
                entry.name,
                entry.value,
                type(spec).__name__,
            )
        elif spec.name in specs:
            logger.error("chunker plug-in %r reuses the name %r; skipped", entry.value, spec.name)
        else:
            specs[spec.name] = spec
    return specs


def list_chunkers() -> list[str]:
    """Every chunker name the pipeline accepts: FFAI's five in FFAI's order, then Firefly's
    TextChunker strategies, then the plug-ins'."""
    return list(_registry())


def chunker_spec(name: str) -> ChunkerSpec[Any]:  # Any: whichever options model it declares
    """The registered chunker called `name` (case and outer spaces ignored).

    Raises:
        ValueError: no chunker has that name.
    """
    spec = _registry().get(name.strip().lower())
    if spec is None:
        raise ValueError(f"unknown chunker {name!r}; choose one of {', '.join(_registry())}")
    return spec
