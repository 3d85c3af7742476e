"""Python's statement structure from one scan of its lines, without building a syntax tree.

`ast.parse` costs about twice a tokeniser pass; the chunker needs only where statements start
and how deep they sit. One regex pass finds strings and comments (so brackets and `#` inside
them are ignored), numpy sums bracket depths, and every line that starts a statement (outside
any string, bracket or backslash continuation) is classified by its indentation and first word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["PythonLayout", "python_layout"]

# Strings (triple-quoted across lines, single-quoted up to the line's end) and comments, in
# the order they occur, so a quote inside a comment or a `#` inside a string is not mistaken.
_LEXEME = re.compile(
    r"#[^\n]*"
    r'|"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:"""|\Z)'
    r"|'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)"
    r'|"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"?'
    r"|'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'?"
)
# A line whose first word opens a definition (group 1), an `elif` (group 2: a nested `if`, as
# `ast` reads it, so never a top-level statement) or a clause that continues a compound
# statement (group 3: not a place to cut). Starting at the newline lets the regex engine skip
# ahead from line to line.
_KEYWORD_LINE = re.compile(
    r"\n[ \t]*(?:(async[ \t]+def|def|class)[ \t]|(elif)\b|(else|except|finally)\b)"
)
_UNTERMINATED = re.compile(r'"""|\'\'\'')
_BLANKS = re.compile(r"[ \t]*")
# Indentation walked in numpy steps before the deeper lines are finished one by one.
_INDENT_STEPS = 64


@dataclass(frozen=True, slots=True)
class PythonLayout:
    """Char offsets where statements begin (each with the comments and decorators above it),
    sorted, by kind."""

    top_defs: list[int]
    nested_defs: list[int]
    top_statements: list[int]
    inner_statements: list[int]


def _code_points(text: str) -> np.ndarray:
    """One array element per character of `text` (so indices are char offsets)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _looks_like_python(chars: np.ndarray, newlines: np.ndarray) -> bool:
    """True unless lines end in braces or semicolons (C-like statements) more than twice as
    often as in colons (Python's block headers; a Python dict literal may open with '{')."""
    last = chars[newlines[newlines > 0] - 1]
    colon = int(np.count_nonzero(last == ord(":")))
    brace = int(np.count_nonzero((last == ord("{")) | (last == ord(";"))))
    return 2 * colon >= brace


def _inside(starts: np.ndarray, ends: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """For each position, True when it lies in one of the sorted, disjoint [start, end) spans."""
    k = ends.searchsorted(positions, "right")
    hit = k < len(starts)
    hit[hit] = starts[k[hit]] <= positions[hit]
    return hit


def _first_solid(text: str, chars: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The first position at or after each line start that is not a space or a tab."""
    n = len(chars)
    first = starts.copy()
    active = np.arange(len(starts))
    for _ in range(_INDENT_STEPS):
        at = first[active]
        pad = at < n
        more = np.zeros(len(active), dtype=bool)
        more[pad] = (chars[at[pad]] == 32) | (chars[at[pad]] == 9)
        active = active[more]
        if not len(active):
            return first
        first[active] += 1
    # Rare deep indentation: finish those lines one by one.
    for row in active.tolist():
        match = _BLANKS.match(text, int(first[row]))
        if match is not None:  # always: the pattern matches the empty string
            first[row] = match.end()
    return first


def _keyword_lines(text: str) -> tuple[list[int], list[int], list[int]]:
    """Char offsets of the lines that open a definition, an `elif`, and another clause."""
    found: tuple[list[int], list[int], list[int]] = ([], [], [])
    head = _KEYWORD_LINE.match("\n" + text[:64])  # the first line has no newline before it
    if head is not None:
        found[head.lastindex - 1 if head.lastindex else 0].append(0)
    for match in _KEYWORD_LINE.finditer(text):
        found[match.lastindex - 1 if match.lastindex else 0].append(match.start() + 1)
    return found


def python_layout(text: str, *, sure: bool = False) -> PythonLayout | None:
    """The statement starts of Python source `text`, or None when it does not read as Python.

    None when brackets do not balance or a triple-quoted string is left open (broken code:
    its depths would be wrong from there on), and, unless `sure` (the caller knows the text is
    Python), when its lines end more often in braces or semicolons than in colons.
    """
    n = len(text)
    if n == 0:
        return PythonLayout([], [], [], [])
    chars = _code_points(text)
    newlines = np.flatnonzero(chars == 10)
    if not sure and not _looks_like_python(chars, newlines):
        return None
    spans = [m.span() for m in _LEXEME.finditer(text)]
    bounds = np.array(spans, dtype=np.int64).reshape(-1, 2)
    lex_starts, lex_ends = bounds[:, 0], bounds[:, 1]
    if len(spans) and lex_ends[-1] == n and _UNTERMINATED.match(text, int(lex_starts[-1])):
        return None  # a triple-quoted string runs to the end: not valid Python
    # Bracket depth, from the brackets outside strings and comments only.
    opening = (chars == 40) | (chars == 91) | (chars == 123)
    brackets = np.flatnonzero(opening | (chars == 41) | (chars == 93) | (chars == 125))
    brackets = brackets[~_inside(lex_starts, lex_ends, brackets)]
    steps = np.where(opening[brackets], 1, -1)
    depth = np.cumsum(steps)
    if len(depth) and (depth[-1] != 0 or depth.min() < 0):
        return None
    starts = np.concatenate(([0], newlines + 1))
    starts = starts[starts < n]
    first = _first_solid(text, chars, starts)
    line_end = np.append(starts[1:], n)
    blank = first >= line_end
    first_char = np.where(blank, 0, chars[np.minimum(first, n - 1)])
    blank |= (first_char == 10) | (first_char == 13) | (first_char == 12)
    # A line continues the one above when a bracket or a string is open at its start, or when
    # the one above ends with a backslash outside a string or comment.
    open_before = brackets.searchsorted(starts)
    carried = np.zeros(len(starts), dtype=bool)
    carried[open_before > 0] = depth[open_before[open_before > 0] - 1] != 0
    carried[1:] |= _inside(lex_starts, lex_ends, starts[1:] - 1)
    slash = starts[1:] - 2
    escaped = slash >= 0
    rows = np.flatnonzero(escaped) + 1
    carried[rows] |= (chars[slash[escaped]] == 92) & ~_inside(lex_starts, lex_ends, slash[escaped])
    comment = ~blank & ~carried & (first_char == 35)
    statement = ~blank & ~carried & ~comment
    def_lines, elif_lines, clause_lines = _keyword_lines(text)
    is_def = np.zeros(len(starts), dtype=bool)
    is_def[starts.searchsorted(def_lines)] = True
    nested = np.zeros(len(starts), dtype=bool)
    nested[starts.searchsorted(elif_lines)] = True
    statement[starts.searchsorted(clause_lines)] = False
    rows = np.flatnonzero(statement)
    # A line right after a decorator (only continuation lines between) belongs to it.
    after_decorator = np.zeros(len(rows), dtype=bool)
    after_decorator[1:] = first_char[rows[:-1]] == 64
    heads = rows[~after_decorator]
    # Comments directly above a statement belong to it.
    index = np.arange(len(starts))
    last_other = np.maximum.accumulate(np.where(comment, -1, index))
    top = np.where(heads > 0, last_other[np.maximum(heads - 1, 0)] + 1, heads)
    offsets = starts[np.minimum(top, heads)]
    defs = is_def[heads] | (first_char[heads] == 64)
    margin = (first[heads] == starts[heads]) & ~nested[heads]
    return PythonLayout(
        top_defs=offsets[defs & margin].tolist(),
        nested_defs=offsets[defs & ~margin].tolist(),
        top_statements=offsets[~defs & margin].tolist(),
        inner_statements=offsets[~defs & ~margin].tolist(),
    )
