"""The README and docs/: every relative link reaches a file, and bench/figures.py writes a
bench's figures into its docs page without touching the rest of the page."""

from __future__ import annotations

import datetime
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# Fenced blocks and inline code hold example syntax ([...](...) in Python, TOML tables), not links.
_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def relative_links(page: Path) -> list[str]:
    """Link targets of a Markdown page that are paths (no URL scheme, not a bare #anchor)."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    targets = _INLINE_LINK.findall(text) + _REFERENCE.findall(text)
    return [t for t in targets if not _SCHEME.match(t) and not t.startswith("#")]


def test_the_pages_hold_links() -> None:
    # Guards the parser: a regex that found nothing would pass the test below vacuously.
    assert "docs/index.md" in relative_links(REPO / "README.md")
    assert len(PAGES) > 20


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    broken = [
        target
        for target in relative_links(page)
        if not (page.parent / target.split("#", 1)[0]).exists()
    ]
    assert not broken, f"{page.relative_to(REPO)} links to missing files: {broken}"


def _figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_figures", REPO / "bench" / "figures.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STARTED = datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.UTC)


def test_figures_replace_only_their_section(tmp_path: Path) -> None:
    figures = _figures()
    recall, latency = figures.markers("recall"), figures.markers("latency")
    page = tmp_path / "search.md"
    page.write_text(
        f"# Search\n\n{recall[0]}\nold recall\n{recall[1]}\n\n{latency[0]}\nold latency\n"
        f"{latency[1]}\n\n## Recorded by hand\n\nMARKER-HISTORY-1c7e\n"
    )
    figures.write_figures(
        "search", "python bench/bench_search.py recall", "recall@1 0.9\n", STARTED, "recall",
        docs=tmp_path,
    )
    text = page.read_text()
    assert "old recall" not in text and "recall@1 0.9" in text
    assert "old latency" in text and "MARKER-HISTORY-1c7e" in text
    assert "Command: `python bench/bench_search.py recall`" in text
    assert "Date: 2026-01-02 03:04 UTC" in text and "Machine: " in text and " cores" in text


def test_figures_make_a_section_where_a_page_has_none(tmp_path: Path) -> None:
    figures = _figures()
    figures.write_figures("tables", "python bench/bench_tables.py", "```x```\n", STARTED,
                          docs=tmp_path)
    text = (tmp_path / "tables.md").read_text()
    assert text.startswith("# tables\n") and "## Latest run\n" in text
    assert "````text\n```x```\n````" in text  # a fence the output cannot close
    begin, end = figures.markers()
    assert text.index(begin) < text.index("```x```") < text.index(end)
