"""Exports imported on first use (PEP 562).

A package whose `__init__` would otherwise import every module it exports names, instead,
the module each export lives in; the module is imported when the name is first read, so a
program that needs one corner of the package (`a2a-hub --help` needs the strategy names, not
the HTTP client) does not pay for the rest. The package imports the same names under
`TYPE_CHECKING`, so type checkers and editors see ordinary imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, for the names `homes` lists by module.

    Args:
        package: the package's `__name__`.
        homes: each module and the names it exports through the package.
    """
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value  # found once: later reads skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *home_of})

    return __getattr__, __dir__
