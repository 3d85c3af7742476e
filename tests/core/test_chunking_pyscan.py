"""The CodeChunker's line scan of Python agrees with `ast` on where definitions and statements
begin: on every Python file of this repository and on generated source."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from content_core.chunking import CodeChunker
from content_core.chunking._pyscan import python_layout
from content_core.tokens import TokenEstimator

ROOT = Path(__file__).resolve().parents[2]


def ast_layout(text: str) -> tuple[list[int], list[int], list[int]]:
    """(top defs, nested defs, top statements) by `ast`: the first decorator or comment line
    directly above each statement."""
    tree = ast.parse(text)
    lines = [0]
    lines.extend(i + 1 for i, ch in enumerate(text) if ch == "\n")

    def start_of(node: ast.stmt) -> int:
        row = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while row > 0 and text[lines[row - 1] : lines[row]].strip().startswith("#"):
            row -= 1
        return lines[row]

    top_defs: list[int] = []
    nested: list[int] = []
    top_statements: list[int] = []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

    def visit(body: Sequence[ast.stmt], depth: int) -> None:
        for node in body:
            if isinstance(node, defs):
                (top_defs if depth == 0 else nested).append(start_of(node))
            elif depth == 0:
                top_statements.append(start_of(node))
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    visit([child], depth + 1)
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    visit(child.body, depth + 1)

    visit(tree.body, 0)
    return sorted(set(top_defs)), sorted(set(nested)), sorted(set(top_statements))


def test_scan_matches_ast_on_the_repository() -> None:
    files = sorted(
        p
        for folder in ("content_core", "content_assets", "tests", "bench")
        for p in (ROOT / folder).rglob("*.py")
    )
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        layout = python_layout(text, sure=True)
        assert layout is not None, path
        top_defs, nested, top_statements = ast_layout(text)
        assert layout.top_defs == top_defs, path
        assert layout.nested_defs == nested, path
        assert layout.top_statements == top_statements, path


_STATEMENTS = st.sampled_from(
    [
        "x = 1",
        "y = (1,\n     2)",
        "z = [\n    'a',\n]",
        's = """\ndef not_a_function():\n    pass\n"""',
        "t = '# not a comment' + \"(\"",
        "u = 1 + \\\n    2",
        "# a comment",
        "import os",
        "print('x')  # trailing (",
    ]
)


@st.composite
def python_source(draw: st.DrawFn) -> str:
    """Valid Python: statements, decorated and nested definitions, compound statements."""
    parts: list[str] = []
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["stmt", "def", "class", "if", "try"]))
        body = draw(_STATEMENTS)
        # Indented once, and never only a comment (a block needs a statement).
        inner = "\n".join("    " + line if line else line for line in body.split("\n"))
        inner += "\n    pass"
        if kind == "stmt":
            parts.append(body)
        elif kind == "def":
            decorator = draw(st.sampled_from(["", "@cache\n", "@wraps(\n    f,\n)\n", "# doc\n"]))
            parts.append(f"{decorator}async def f{i}(a,\n        b):\n{inner}\n    return a")
        elif kind == "class":
            method = inner.replace("\n", "\n    ")
            parts.append(f"class C{i}(Base):\n    '''Doc.'''\n\n    def m(self):\n    {method}")
        elif kind == "if":
            parts.append(f"if x:\n{inner}\nelif y:\n    pass\nelse:\n{inner}")
        else:
            parts.append(f"try:\n{inner}\nexcept E:\n    pass\nfinally:\n    done()")
    return "\n\n".join(parts) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=python_source())
def test_scan_matches_ast_on_generated_python(text: str) -> None:
    layout = python_layout(text, sure=True)
    assert layout is not None
    top_defs, nested, top_statements = ast_layout(text)
    assert (layout.top_defs, layout.nested_defs, layout.top_statements) == (
        top_defs,
        nested,
        top_statements,
    )


def test_broken_python_and_braces_are_not_read_as_python() -> None:
    assert python_layout("def f(:\n    pass\n" * 3) is None
    assert python_layout('x = """never closed\n') is None
    js = "function f(a) {\n  const b = a;\n  return b;\n}\n" * 3
    assert python_layout(js) is None
    assert python_layout(js, sure=True) is not None


def test_code_chunker_cuts_python_at_top_level_definitions() -> None:
    source = "".join(
        f"@decorator\ndef f{i}(x):\n    '''Doc.\n\ndef fake():\n'''\n    return x + {i}\n\n"
        for i in range(12)
    )
    exact = TokenEstimator(encoding_name="cl100k_base")
    chunks = CodeChunker(chunk_size=60, chunk_overlap=0, tokenizer=exact).chunk(source)
    assert len(chunks) > 1
    assert all(c.content.startswith("@decorator\ndef f") for c in chunks)


def test_deeply_indented_lines_are_measured() -> None:
    # Deeper than the numpy steps walk: the rest of the indentation is found line by line.
    deep = " " * 100
    text = f"def f():\n    x = [\n{deep}1,\n    ]\n    if x:\n{deep}return x\n"
    layout = python_layout(text, sure=True)
    assert layout is not None
    assert layout.top_defs == [0]
    assert text.index(f"{deep}return") in layout.inner_statements
