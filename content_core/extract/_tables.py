"""Markdown table rendering shared by the spreadsheet, CSV and document handlers."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["join_blocks", "markdown_table"]

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
