"""The seeds' names are the contract: each one imports from content_core."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import content_core

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


def test_type_checkers_see_what_the_lazy_loader_returns() -> None:
    # The imports under TYPE_CHECKING name exactly what _EXPORTS loads, from the same place.
    tree = ast.parse(Path(content_core.__file__).read_text(encoding="utf-8"))
    (block,) = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    seen = {
        alias.asname: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name  # `X as X`: re-exported under strict type checking
    }
    assert seen == content_core._EXPORTS


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
