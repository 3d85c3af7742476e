"""StageReport: what a stage wrote, as the assets show it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from content_core.store import TableRow

if TYPE_CHECKING:
    from content_core.store import ContentStore

__all__ = ["StageReport", "current_row_count", "preview"]


class StageReport(BaseModel):
    """What one stage wrote for one batch."""

    model_config = ConfigDict(frozen=True)

    table: str
    batch_id: str
    rows: int
    failures: int = 0
    figures: dict[str, int | float | str] = Field(default_factory=dict)
    preview_markdown: str = ""
    current_rows: int | None = None
    """Rows of the table current for the batch's source once written (None: not counted)."""


def current_row_count(store: ContentStore, table: str, batch_id: str) -> int:
    """Rows of `table` current for the source of `batch_id` once it is written: the rows of
    its `current_<table>` view (each live file's latest version) from that source, the
    batch's own rows among them."""
    sources = set(store.read_manifest(batch_id).column("source_id").to_pylist())
    # The table name is a stage's (a constant), never user input; the values are bound.
    result = store.query(
        f"SELECT count(*) AS n FROM current_{table} WHERE source_id IN (SELECT unnest(?))",
        [sorted(sources)],
    )
    return int(result.column("n")[0].as_py())


# Columns holding file or member names: control characters made visible and never
# whitespace-folded (a name with a newline or two spaces shows them), the middle elided when
# long so the extension stays in sight.
_NAME_COLUMNS = frozenset({"path", "filename"})
_WIDTH = 60
# Line breaks end a Markdown table row; other control characters garble a terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Markdown punctuation that could end a cell or start formatting, a link or an HTML tag.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+!|~&$])")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def _name_cell(text: str) -> str:
    """A name in its text form (`escape_path`: a literal backslash is doubled, an undecodable
    byte is `\\xNN`) with control characters as `\\n`, `\\r`, `\\t`, `\\uNNNN`: escapes the
    text form never makes, so what a cell shows stays unambiguous, on one line."""
    text = _CONTROL.sub(_visible, text)
    if len(text) > _WIDTH:
        half = (_WIDTH - 3) // 2
        text = f"{text[:half]}...{text[-half:]}"
    return text


def _text_cell(text: str) -> str:
    text = " ".join(text.split())
    text = _CONTROL.sub(_visible, text)  # controls that str.split() keeps (NUL, ESC, ...)
    return text if len(text) <= _WIDTH else text[: _WIDTH - 3] + "..."


def _value(row: TableRow | Mapping[str, object], column: str) -> object:
    """A column of a row model, or of a row read back as a mapping (an unknown one raises)."""
    return row[column] if isinstance(row, Mapping) else getattr(row, column)


def preview(
    rows: Sequence[TableRow | Mapping[str, object]], columns: Sequence[str], limit: int = 5
) -> str:
    """A small Markdown table of the first rows, values shortened, for the Dagster UI.

    One table row per row whatever the values hold (newlines, pipes, Markdown syntax): every
    cell is escaped, and names are shown so that two distinct names never look the same.
    """
    if not rows:
        return "_no rows_"

    def cell(column: str, value: object) -> str:
        text = "" if value is None else str(value)
        text = _name_cell(text) if column in _NAME_COLUMNS else _text_cell(text)
        return _MARKDOWN.sub(r"\\\1", text)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += [
        "| " + " | ".join(cell(c, _value(r, c)) for c in columns) + " |" for r in rows[:limit]
    ]
    return "\n".join(lines)
