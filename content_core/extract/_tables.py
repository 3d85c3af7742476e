"""Table rendering shared by the spreadsheet, CSV, document and PDF handlers: Markdown, or
HTML when cells span rows or columns (Markdown cannot say it)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SpanCell", "html_table", "join_blocks", "markdown_table", "spanned_table"]

_ESCAPES = str.maketrans({"|": "\\|", "\n": " ", "\r": " ", "\t": " "})


def _cell(value: str) -> str:
    return value.strip().translate(_ESCAPES)


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """Render `rows` as a GitHub-flavoured Markdown table; the first row is the header.

    Rows are padded to the widest one; trailing columns empty in every row are dropped.
    Returns an empty string when there is no non-empty cell.
    """
    cleaned = [[_cell(value) for value in row] for row in rows]
    width = 0
    for row in cleaned:
        for index in range(len(row) - 1, -1, -1):
            if row[index]:
                width = max(width, index + 1)
                break
    if width == 0:
        return ""
    lines: list[str] = []
    for number, row in enumerate(cleaned):
        padded = (row + [""] * width)[:width]
        lines.append("| " + " | ".join(padded) + " |")
        if number == 0:
            lines.append("|" + "---|" * width)
    if len(cleaned) == 1:
        lines.append("| " + " | ".join([""] * width) + " |")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class SpanCell:
    """A cell of a table with merged cells: its text and how many rows and columns it covers."""

    text: str
    rows: int = 1
    columns: int = 1


def html_table(rows: Sequence[Sequence[SpanCell]], header_rows: int = 1) -> str:
    """Render `rows` (each cell listed once, in the row where it starts) as an HTML table;
    the cells of the first `header_rows` rows are `<th>`. Empty when no cell has text."""
    if not any(cell.text.strip() for row in rows for cell in row):
        return ""
    lines = ["<table>"]
    for number, row in enumerate(rows):
        tag = "th" if number < header_rows else "td"
        cells: list[str] = []
        for cell in row:
            spans = "".join(
                f' {name}="{count}"'
                for name, count in (("rowspan", cell.rows), ("colspan", cell.columns))
                if count > 1
            )
            text = html.escape(" ".join(cell.text.split()), quote=False)
            cells.append(f"<{tag}{spans}>{text}</{tag}>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def spanned_table(rows: Sequence[Sequence[SpanCell]], header_rows: int = 1) -> str:
    """Markdown when no cell spans and the header is one row, else HTML (`html_table`)."""
    if header_rows <= 1 and all(c.rows == 1 and c.columns == 1 for row in rows for c in row):
        return markdown_table([[cell.text for cell in row] for row in rows])
    return html_table(rows, header_rows)


def _is_list_item(block: str) -> bool:
    return block.lstrip(" ").startswith("- ")


def join_blocks(blocks: Sequence[str]) -> str:
    """Join Markdown blocks with blank lines, keeping consecutive list items tight."""
    out: list[str] = []
    previous_item = False
    for block in blocks:
        item = _is_list_item(block)
        if out:
            out.append("\n" if item and previous_item else "\n\n")
        out.append(block)
        previous_item = item
    return "".join(out)
