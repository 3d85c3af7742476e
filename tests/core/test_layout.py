"""The store's layout: every path under a store root is named in content_core/store, and no
module elsewhere joins one by hand."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from content_core.store import ContentStore, StoreLayout, table_prefix
from content_core.store.layout import (
    BATCHES_DIR,
    BLOBS_DIR,
    CACHE_DIR,
    CATALOG_FILE,
    SEARCH_INDEX_FILE,
    STATE_DIR,
    TABLES_DIR,
)

REPO = Path(__file__).resolve().parents[2]
STORE_PACKAGE = REPO / "content_core" / "store"
_FOLDERS = (BLOBS_DIR, TABLES_DIR, BATCHES_DIR, STATE_DIR, CACHE_DIR)
_FILES = (CATALOG_FILE, SEARCH_INDEX_FILE)


def test_layout_names_the_paths_of_design_section_4(tmp_path: Path) -> None:
    layout = StoreLayout(tmp_path)
    assert layout.blobs == tmp_path / "blobs"
    assert layout.tables == tmp_path / "tables"
    assert layout.batches == tmp_path / "batches"
    assert layout.catalog == tmp_path / "content.duckdb"
    assert layout.search_index == tmp_path / "search.duckdb"
    assert layout.cache("ocr") == tmp_path / "cache" / "ocr"
    assert layout.state("docs.known.parquet") == tmp_path / "state" / "docs.known.parquet"
    assert StoreLayout.of_blobs(layout.blobs) == layout
    assert table_prefix("chunks") == "tables/chunks/"


def test_the_store_uses_its_layout(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "store")
    assert store.layout == StoreLayout(store.root)
    assert Path(store.blobs.root) == store.layout.blobs
    assert store.catalog_path == store.layout.catalog
    assert store.table_path("chunks", "b1").is_relative_to(store.layout.tables)
    assert store.manifest_path("b1").parent == store.layout.batches


def _is_layout_name(text: str) -> bool:
    """A store folder or file name, or a key under one ("tables/x", "state/finished")."""
    head = text.strip("/").split("/", 1)[0]
    return head in _FOLDERS or head in _FILES or text.endswith(".duckdb")


def _path_literals(tree: ast.AST) -> Iterator[ast.Constant]:
    """String constants used to build a path or key: an operand of `/`, a piece of an
    f-string, or an argument of a call (`os.path.join`, `joinpath`, `storage.list`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            operands: list[ast.expr] = [node.left, node.right]
        elif isinstance(node, ast.JoinedStr):
            operands = list(node.values)
        elif isinstance(node, ast.Call):
            operands = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        for operand in operands:
            if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
                yield operand


def _modules() -> list[Path]:
    found = []
    for package in ("content_core", "content_assets"):
        for path in sorted((REPO / package).rglob("*.py")):
            if not path.is_relative_to(STORE_PACKAGE):
                found.append(path)
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_outside_the_store_builds_a_store_path(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    by_hand = [
        f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}"
        for node in _path_literals(tree)
        if _is_layout_name(node.value)
    ]
    assert by_hand == [], "use StoreLayout / table_prefix (content_core.store.layout)"


def test_the_check_finds_a_path_built_by_hand() -> None:
    # Why the check can fail: each shape of a hand-built store path is caught.
    sources = [
        'root / "cache" / "ocr"',
        'f"tables/{table}/"',
        'storage.list("batches/")',
        'os.path.join(root, "content.duckdb")',
    ]
    for source in sources:
        assert [n.value for n in _path_literals(ast.parse(source)) if _is_layout_name(n.value)]
