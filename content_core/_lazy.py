"""Package exports written once: a package `__init__` names each public name in one import,
`from module import Name as Name` (the form strict type checkers take as a re-export), and
`lazy_exports` derives `__all__`, lazy loading (PEP 562) and `dir()` from those imports."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

Getattr = Callable[[str], Any]  # Any: the exported object, whatever its type
Dir = Callable[[], list[str]]


def export_table(source: str) -> dict[str, str | None]:
    """Return the public names of a package `__init__` source: name -> module for each name
    imported as `Name as Name` under `if TYPE_CHECKING:` (loaded on first use), None for one
    bound when the package is imported (a top-level `Name as Name` import, a public function or
    class defined there).

    Raises:
        ValueError: a name is exported twice, or a relative import is used.
    """
    import ast  # here, not at the top: only the first lookup of an exported name pays for it

    table: dict[str, str | None] = {}

    def add(name: str, module: str | None) -> None:
        if name in table:
            raise ValueError(f"{name!r} is exported twice")
        table[name] = module

    def imports(statements: list[ast.stmt], lazy: bool) -> None:
        for node in statements:
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level or node.module is None:
                raise ValueError(f"relative import on line {node.lineno}: write the full path")
            for alias in node.names:
                if alias.asname == alias.name:
                    add(alias.name, node.module if lazy else None)

    tree = ast.parse(source)
    imports(tree.body, lazy=False)
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            imports(node.body, lazy=True)
        elif isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ) and not node.name.startswith("_"):
            add(node.name, None)
    return table


def lazy_exports(namespace: dict[str, Any], /) -> tuple[Getattr, Dir]:
    """Return the `__getattr__` and `__dir__` of the package whose `globals()` is `namespace`.

    Call it as the package's last statement, out of type checkers' sight (they would take every
    unknown name for an export):

        if not TYPE_CHECKING:
            __getattr__, __dir__ = lazy_exports(globals())

    The package's own source is read once, on the first lookup: `__all__` lists its exports
    (see `export_table`), a name imported under `if TYPE_CHECKING:` is imported on first use
    and kept in `namespace`, and `dir()` lists what an eager import would bind.
    """
    return _from_source(namespace)


def _from_source(namespace: dict[str, Any]) -> tuple[Getattr, Dir]:
    package: str = namespace["__name__"]
    found: list[dict[str, str | None]] = []

    def table() -> dict[str, str | None]:
        if not found:
            source = namespace["__spec__"].loader.get_source(package)
            if source is None:
                raise ImportError(f"no source for {package!r}: its exports are read from it")
            found.append(export_table(source))
        return found[0]

    def getattr_(name: str) -> Any:  # Any: the exported object, whatever its type
        if name == "__all__":
            value: Any = sorted(table())
        else:
            module = table().get(name)
            if module is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(namespace.keys() | table().keys() | {"__all__"})

    return getattr_, dir_
