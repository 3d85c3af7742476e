"""StageReport: what a stage wrote, as the assets show it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["StageReport", "preview"]


class StageReport(BaseModel):
    """What one stage wrote for one batch."""

    model_config = ConfigDict(frozen=True)

    table: str
    batch_id: str
    rows: int
    failures: int = 0
    figures: dict[str, int | float | str] = Field(default_factory=dict)
    preview_markdown: str = ""


def preview(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], limit: int = 5) -> str:
    """A small Markdown table of the first rows, values shortened, for the Dagster UI."""
    if not rows:
        return "_no rows_"

    def cell(value: Any) -> str:
        text = "" if value is None else str(value)
        text = " ".join(text.split()).replace("|", "\\|")
        return text if len(text) <= 60 else text[:57] + "..."

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows[:limit]]
    return "\n".join(lines)
