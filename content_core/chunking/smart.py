"""remdb's model-aware chunking: chunk_text and smart_chunk_text, returning plain strings."""

from __future__ import annotations

from content_core.chunking._common import LINE, WORD
from content_core.chunking._engine import Level, pack
from content_core.chunking._measure import CharDoc, CharMeasure, TokenDoc, TokenMeasure
from content_core.chunking._tablepack import Piece, pack_tables
from content_core.chunking._tables import find_tables
from content_core.tokens import encoding_for_model, estimate_tokens, get_model_limits

__all__ = ["chunk_text", "smart_chunk_text"]

_LINES: tuple[tuple[Level, float], ...] = ((LINE, 0.0), (WORD, 0.0))
_WORDS: tuple[tuple[Level, float], ...] = ((WORD, 0.0),)


def chunk_text(
    text: str, max_tokens: int, model: str = "gpt-4o", preserve_lines: bool = True
) -> list[str]:
    """Split `text` into pieces of at most `max_tokens` tokens for `model`.

    With preserve_lines (the default) pieces end at line breaks, and a line too long on its
    own is cut at spaces; otherwise pieces end at spaces. Counts are exact for OpenAI models
    (tiktoken) and the four-characters-per-token estimate of `estimate_tokens` for others.
    Pieces are exact slices of `text` without their outer whitespace, except the parts of a
    Markdown or HTML table too large for one piece: those are cut between rows, and each
    part after the first starts with the table's header again (an HTML part also ends with
    `</table>`).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    encoding = encoding_for_model(model)
    doc: TokenDoc | CharDoc
    if encoding is not None:
        name = encoding.name.removesuffix("_offline")
        doc = TokenMeasure(name).prepare(text)
        budget = max(4, max_tokens)
    else:
        measure = CharMeasure(scale=4.0)
        doc = measure.prepare(text)
        budget = measure.budget(max_tokens)
    levels = _LINES if preserve_lines else _WORDS
    spans = pack_tables(
        doc,
        0,
        len(text),
        budget=budget,
        tables=find_tables(text),
        region=lambda lo, hi: pack(doc, lo, hi, budget=budget, levels=levels),
    )
    return [
        s.head + text[s.span.start : s.span.end] + s.tail
        if isinstance(s, Piece)
        else text[s.start : s.end]
        for s in spans
    ]


def smart_chunk_text(
    text: str,
    model: str = "gpt-4o",
    system_prompt: str = "",
    buffer_ratio: float = 0.75,
    preserve_lines: bool = True,
) -> list[str]:
    """Split `text` only as much as `model`'s context window requires.

    The room per piece is (the model's max input - the system prompt's tokens) * buffer_ratio;
    a text that fits comes back whole as a one-item list.
    """
    if not 0 < buffer_ratio <= 1:
        raise ValueError("buffer_ratio must be in (0, 1]")
    limits = get_model_limits(model)
    room = int((limits.max_input - estimate_tokens(system_prompt, model)) * buffer_ratio)
    if room < 1:
        raise ValueError(f"the system prompt leaves no room in {model!r}'s context window")
    if estimate_tokens(text, model) <= room:
        return [text]
    return chunk_text(text, max_tokens=room, model=model, preserve_lines=preserve_lines)
