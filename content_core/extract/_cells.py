"""Spreadsheet cell values to display strings, and the shared cell budget."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from content_core.extract._tables import markdown_table

__all__ = ["CellBudget", "cell_to_str", "sheet_markdown"]

TRUNCATION_MARKER = "[... rows omitted: cell limit reached ...]"


def cell_to_str(value: object) -> str:
    """Render one cell value: integral floats without `.0`, dates in ISO form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


class CellBudget:
    """Counts cells (and empty rows) read across a workbook against `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.exhausted = False

    def take(self, cells: int) -> bool:
        """Charge `cells` (at least one per row); return False once the budget is spent."""
        self.used += max(cells, 1)
        if self.used > self.limit:
            self.exhausted = True
        return not self.exhausted


def sheet_markdown(title: str | None, rows: Iterable[Sequence[object]], budget: CellBudget) -> str:
    """Render one sheet as an optional `## title` heading plus a Markdown table.

    Empty rows are dropped; reading stops (with a marker line) when `budget` runs out.
    """
    table: list[list[str]] = []
    for row in rows:
        if not budget.take(len(row)):
            break
        cells = [cell_to_str(v) for v in row]
        if any(cells):
            table.append(cells)
    parts = [f"## {title}"] if title else []
    rendered = markdown_table(table)
    if rendered:
        parts.append(rendered)
    if budget.exhausted:
        parts.append(TRUNCATION_MARKER)
    return "\n\n".join(parts)
