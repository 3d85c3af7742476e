"""The seeds' names are the contract: each one imports from content_core."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import content_core
from content_core._lazy import export_table

SEED_NAMES = {
    # Firefly content module
    "TextChunker", "DocumentSplitter", "MarkdownChunker", "ImageTiler", "BatchProcessor",
    "Chunker", "Chunk", "TokenEstimator", "ContextCompressor", "TruncationStrategy",
    "SummarizationStrategy", "MapReduceStrategy", "CompressionStrategy", "SlidingWindowManager",
    "ContentSource", "RawFile", "LocalFolderSource", "LocalFolderSourceConfig",
    "BinaryNormalizer", "BinaryConfig", "BinaryArtifact", "PdfGuard", "ImageNormalizer",
    "NormalisedImage", "ArchiveUnpacker", "EmailUnpacker", "OfficeConverter",
    "build_office_converter", "GotenbergConverter", "LibreOfficeConverter",
    "NoOpOfficeConverter", "OFFICE_MEDIA_TYPES", "sniff_media_type",
    "BinaryNormalizationError", "BinaryTooLargeError", "UnsupportedBinaryError",
    "CorruptPdfError", "EncryptedPdfError", "OfficeConversionError", "ImageConversionError",
    "ArchiveExtractionError", "EmailParseError", "BinaryFanoutError",
    # FFAI splitters
    "CharacterChunker", "RecursiveChunker", "CodeChunker", "HierarchicalChunker",
    "list_chunkers", "get_chunker",
    # FFAI RAG layer
    "RAG", "SearchHit", "format_hits",
    # remdb agentic chunking
    "estimate_tokens", "get_model_limits", "chunk_text", "smart_chunk_text", "merge_results",
    "MergeStrategy",
    # Yao content processing
    "prepare_messages",
}  # fmt: skip


REPO = Path(__file__).resolve().parents[2]


def test_every_name_resolves() -> None:
    for name in content_core.__all__:
        assert getattr(content_core, name) is not None, name


# Every package __init__ that writes its exports in the one-table form (content_core/_lazy.py).
ONE_TABLE = [
    "content_core",
    *(
        f"content_core.{name}"
        for name in (
            "agents", "binary", "chat", "chat.mcp", "chunking", "compression", "discovery",
            "embeddings", "extract", "ocr", "pipeline", "search", "sources", "store",
        )
    ),
]  # fmt: skip


def _times_written(source: str, name: str) -> int:
    """How often `source` binds `name` (an import, a def or class) or spells it as a string
    (an `__all__` or name -> module table entry); prose in docstrings does not count."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.alias):
            count += (node.asname or node.name) == name
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            count += node.name == name
        elif isinstance(node, ast.Constant):
            count += node.value == name
    return count


def test_each_public_name_is_written_once_in_content_core() -> None:
    # The whole file, docstring included: one line per name, `from <package> import X as X`.
    source = Path(content_core.__file__ or "").read_text(encoding="utf-8")
    for name in content_core.__all__:
        found = [line for line in source.splitlines() if re.search(rf"\b{name}\b", line)]
        assert len(found) == 1, (name, found)
        assert found[0].strip().endswith(f" import {name} as {name}"), (name, found)


@pytest.mark.parametrize("package", ONE_TABLE)
def test_each_public_name_is_written_once(package: str) -> None:
    module = importlib.import_module(package)
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    assert module.__all__, package
    for name in module.__all__:
        assert _times_written(source, name) == 1, name


@pytest.mark.parametrize("package", ONE_TABLE)
def test_star_import_binds_what_type_checkers_see(package: str) -> None:
    module = importlib.import_module(package)
    table = export_table(Path(module.__file__ or "").read_text(encoding="utf-8"))
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == module.__all__ == sorted(table)
    for name, where in table.items():
        if where is not None:  # lazy: the value is the one its module defines
            # == rather than `is`: binary.office derives OFFICE_MEDIA_TYPES on each lookup
            assert namespace[name] == getattr(importlib.import_module(where), name), name


def test_export_table_refuses_a_name_written_twice() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from a import X as X\n"
        "if TYPE_CHECKING:\n"
        "    from b import X as X\n"
    )
    with pytest.raises(ValueError, match="'X' is exported twice"):
        export_table(source)


def test_export_table_reads_only_re_exports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from a import Eager as Eager, helper\n"
        "if TYPE_CHECKING:\n"
        "    from b import Lazy as Lazy, Other as Renamed\n"
        "def public() -> None: ...\n"
        "def _private() -> None: ...\n"
    )
    assert export_table(source) == {"Eager": None, "Lazy": "b", "public": None}


@pytest.mark.timeout(600)  # mypy reads the whole package on a loaded machine
def test_mypy_sees_real_types_through_content_core(tmp_path: Path) -> None:
    user = tmp_path / "user_code.py"
    user.write_text(
        "from content_core import TextChunker, merge_results\n"
        "chunker: int = TextChunker()\n"
        "reveal_type(merge_results)\n"
    )
    env = {**os.environ, "MYPYPATH": str(REPO), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--ignore-missing-imports",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(user),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    # With `Any` both lines would pass silently; with real types the assignment fails.
    assert 'expression has type "TextChunker", variable has type "int"' in done.stdout, done.stdout
    assert "def (results: typing.Sequence[Any]" in done.stdout, done.stdout
    assert "does not explicitly export" not in done.stdout, done.stdout


def test_every_seed_name_is_public() -> None:
    assert SEED_NAMES <= set(content_core.__all__)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        content_core.NotAThing  # noqa: B018


def test_content_core_never_imports_dagster() -> None:
    code = (
        "import sys, content_core, content_core.pipeline, content_core.store;"
        "[getattr(content_core, n) for n in content_core.__all__];"
        "print('dagster' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240
    )
    assert completed.stdout.strip() == "False", completed.stderr
