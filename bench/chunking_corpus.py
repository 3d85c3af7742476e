"""Build the chunking benchmark's corpus from files already installed, without internet.

Prose and Markdown: package descriptions (METADATA), README/CHANGELOG-style .md, .rst and
.txt files, topped up with docstrings of installed modules. Code: installed .py files. Files
are read in sorted path order, so the corpus is the same on every run in one environment.
"""

from __future__ import annotations

import ast
import sys
import sysconfig
from pathlib import Path

PROSE_SUFFIXES = (".md", ".rst", ".txt", ".markdown")
DOC_TARGET_CHARS = 100_000  # files are grouped into documents of about this size


def site_packages() -> Path:
    """The site-packages directory of the running interpreter."""
    return Path(sysconfig.get_paths()["purelib"])


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _group(texts: list[str], target: int) -> list[str]:
    """Join consecutive texts into documents of about `target` characters."""
    docs: list[str] = []
    current: list[str] = []
    size = 0
    for text in texts:
        current.append(text)
        size += len(text)
        if size >= target:
            docs.append("\n\n".join(current))
            current, size = [], 0
    if current:
        docs.append("\n\n".join(current))
    return docs


def _docstrings(path: Path) -> list[str]:
    try:
        tree = ast.parse(_read(path))
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if doc and len(doc) > 200:
                found.append(doc)
    return found


def build_corpus(prose_chars: int = 5_000_000, code_chars: int = 5_000_000) -> dict[str, list[str]]:
    """Return {"prose": documents, "python": documents}, each about the requested size."""
    root = site_packages()
    files = sorted(p for p in root.rglob("*") if p.is_file())
    prose: list[str] = []
    total = 0
    for path in files:
        if path.name == "METADATA" or path.suffix.lower() in PROSE_SUFFIXES:
            text = _read(path)
            if len(text) < 1000 or "\x00" in text:
                continue
            prose.append(text)
            total += len(text)
            if total >= prose_chars:
                break
    py_files = [p for p in files if p.suffix == ".py" and 2_000 < p.stat().st_size < 200_000]
    for path in py_files:
        if total >= prose_chars:
            break
        for doc in _docstrings(path):
            prose.append(doc)
            total += len(doc)
    code: list[str] = []
    total_code = 0
    for path in py_files:
        text = _read(path)
        code.append(text)
        total_code += len(text)
        if total_code >= code_chars:
            break
    return {"prose": _group(prose, DOC_TARGET_CHARS), "python": _group(code, DOC_TARGET_CHARS)}


if __name__ == "__main__":
    corpus = build_corpus()
    for name, docs in corpus.items():
        sys.stdout.write(f"{name}: {len(docs)} documents, {sum(map(len, docs)):,} chars\n")
