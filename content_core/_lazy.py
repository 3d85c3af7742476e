"""Lazy package attributes (PEP 562): a package lists where each public name lives, and a name's
module is imported on first use, so importing the package stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, resolving `exports` (name -> module) and
    caching each resolved name in the package's `namespace`."""
    names = sorted(exports)

    def getattr_(name: str) -> Any:  # Any: the exported object, whatever its type
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return names

    return getattr_, dir_
