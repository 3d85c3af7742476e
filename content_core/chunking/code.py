"""CodeChunker: source code cut at function and class boundaries.

Python is read by one scan of its lines (strings, brackets, indentation: see `_pyscan`); other
languages (and Python whose brackets or strings do not close) by their syntax: declaration
keywords, indentation and closing braces at the start of a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import Field

from content_core.chunking._common import LINE, PARAGRAPH, WORD
from content_core.chunking._engine import Level, Pattern, Positions
from content_core.chunking._measure import CharDoc, TokenDoc
from content_core.chunking._pyscan import python_layout
from content_core.chunking.base import ChunkBudget, ChunkerOptions, ChunkerSpec
from content_core.chunking.recursive import FixedSizeChunker
from content_core.tokens import TokenEstimator

__all__ = ["CODE_SPEC", "CodeChunker", "CodeOptions", "code_boundaries"]

_MODIFIERS = (
    r"(?:export|default|public|private|protected|internal|static|async|abstract|final|pub"
    r"(?:\([^)\n]*\))?|unsafe|extern|inline|virtual|override|open|sealed|data|suspend|const|"
    r"partial|readonly|declare)"
)
_DECL = (
    r"(?:function\*?|class|def|fn|func|interface|struct|impl|enum|trait|type|module|namespace|"
    r"object|record|union|template|macro_rules!|sub|proc|package|mod)\b"
)
# A declaration at the left margin, with the comments, attributes and decorators just above it
# (at most 64 lines of them: every line start of a comment block tries this, so an unbounded
# block would be rescanned from each of its lines).
_LEAD = r"(?:[ \t]*(?://|#|/\*|\*|@|\[\[|#\[)[^\n]*+\n){0,64}"
_TOP_DECL = re.compile(rf"(?m)^(?={_LEAD}(?:{_MODIFIERS}\s+)*{_DECL})")
# The same, right after a blank line: the preferred place to cut.
_TOP_DECL_AFTER_BLANK = re.compile(rf"(?m)^[ \t]*\n(?={_LEAD}(?:{_MODIFIERS}\s+)*{_DECL})")
_NESTED_DECL = re.compile(rf"(?m)^(?=[ \t]+(?:{_MODIFIERS}\s+)*{_DECL})")
# Functions in C-like languages: "type name(args) {" at the margin. The return type may sit on
# the line above the name (GNU style); the arguments span at most 2,000 characters. Both bounds
# keep the scan from each line start short (unbounded, it ran to the end of the window).
_SIGNATURE_NAME = r"[\w:<>,\t \*&]*+(?:\n[\w:<>,\t \*&]*+)?"
_C_FUNC = re.compile(
    rf"(?m)^(?=[A-Za-z_]{_SIGNATURE_NAME}\([^;{{}}]{{0,2000}}\)[ \t]*+(?:const[ \t]*+)?\{{?\s*$)"
)
# After a closing brace at the margin the next top-level item begins.
_AFTER_CLOSE = Pattern(re.compile(r"(?m)^[}\)\]][^\n]*\n"), lookbehind=0)
_MARGIN = Pattern(re.compile(r"(?m)^(?=[^\s}\)\]])"), lookbehind=0)

_PY_NAMES = frozenset({"python", "py", "python3"})


def code_boundaries(text: str, language: str | None = None) -> list[tuple[Level, float]]:
    """Boundary levels for source `text`, strongest first, each with its least fill."""
    language = (language or "").lower() or None
    if language is None or language in _PY_NAMES:
        layout = python_layout(text, sure=language is not None)
        if layout is not None:
            return [
                (Positions(layout.top_defs), 0.3),
                (Positions(layout.nested_defs), 0.4),
                (Positions(layout.top_statements), 0.5),
                (Positions(layout.inner_statements), 0.5),
                (PARAGRAPH, 0.5),
                (LINE, 0.5),
                (WORD, 0.5),
            ]
    return [
        (Pattern(_TOP_DECL_AFTER_BLANK, lookbehind=16), 0.3),
        (Pattern(_TOP_DECL, lookbehind=0), 0.3),
        (_AFTER_CLOSE, 0.3),
        (Pattern(_C_FUNC, lookbehind=0), 0.3),
        (Pattern(_NESTED_DECL, lookbehind=0), 0.4),
        (_MARGIN, 0.5),
        (PARAGRAPH, 0.5),
        (LINE, 0.5),
        (WORD, 0.5),
    ]


class CodeChunker(FixedSizeChunker):
    """Cuts source code at function and class boundaries, else statements, lines, words.

    `language` is a hint ("python", "javascript", "go", ...); with None, text whose lines end
    in colons rather than braces or semicolons is read as Python, anything else by its
    braces and declaration keywords.
    """

    name = "code"
    _overlap_levels = (LINE, WORD)

    def __init__(
        self,
        *,
        chunk_size: int = 500,
        chunk_overlap: int = 50,
        language: str | None = None,
        tokenizer: TokenEstimator | None = None,
    ) -> None:
        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap, tokenizer=tokenizer)
        self.language = language

    def _levels_for(self, doc: CharDoc | TokenDoc) -> Sequence[tuple[Level, float]]:
        return code_boundaries(doc.text, self.language)


class CodeOptions(ChunkerOptions):
    """The code chunker's own settings."""

    language: str | None = Field(default=None, description="Language, or None to detect.")


def _build_code(budget: ChunkBudget, options: CodeOptions) -> CodeChunker:
    return CodeChunker(
        chunk_size=budget.chunk_size,
        chunk_overlap=budget.chunk_overlap,
        language=options.language,
        tokenizer=TokenEstimator(encoding_name=budget.encoding_name),
    )


CODE_SPEC = ChunkerSpec(
    "code",
    CodeOptions,
    _build_code,
    "Cuts source code at function and class boundaries.",
    CodeChunker,
)
