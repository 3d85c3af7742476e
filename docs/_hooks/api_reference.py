"""MkDocs hook: fill the API reference page with `content_core` and its public packages as they
are on disk, in the order of the floors (DESIGN.md section 1), so moving a module inside a
package, or adding a package, needs no edit here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MARKER = "<!-- api-reference: packages -->"
ROOT = Path(__file__).resolve().parents[2] / "content_core"
# Floor order; whatever else is public comes after these, alphabetically. Top-level modules
# are listed only when named here (the floor-1 declarations and `rag`).
FLOORS = (
    "errors", "formats", "tokens", "cache",
    "sources", "store",
    "binary", "extract", "ocr",
    "chunking", "compression", "embeddings",
    "agents",
    "search",
    "discovery",
    "pipeline",
    "chat", "rag",
)


def public_packages(root: Path = ROOT) -> list[str]:
    """Dotted names to document: the root package, then its public subpackages and the
    top-level modules named in FLOORS that exist."""
    found = {
        child.name
        for child in root.iterdir()
        if child.is_dir() and not child.name.startswith("_") and (child / "__init__.py").exists()
    }
    found |= {name for name in FLOORS if (root / f"{name}.py").exists()}
    ordered = [name for name in FLOORS if name in found]
    ordered += sorted(found - set(ordered))
    return [root.name] + [f"{root.name}.{name}" for name in ordered]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker with one section per package, rendered by mkdocstrings."""
    if MARKER not in markdown:
        return markdown
    sections = [f"## `{name}`\n\n::: {name}\n" for name in public_packages()]
    return markdown.replace(MARKER, "\n".join(sections))
