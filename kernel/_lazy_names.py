"""``lazy_exports``: a package's public names, imported from their modules on first use (PEP 562).

A package whose ``__init__`` imports every submodule makes each user pay for all of them:
``import toolmesh.contracts`` would load the node, ``toolmesh --help`` every plugin.  With
``lazy_exports`` the package lists where each name lives and imports it when it is first used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, module_of: Mapping[str, str], *, load_on_dir: bool = False
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``module_of`` is imported from
    ``<package>.<module>`` on first use and kept in the package.

    ``load_on_dir=True`` makes ``dir(package)`` import every name first; a plugin package needs it,
    because pluggy finds hook implementations through ``dir()`` and ``inspect.getattr_static``, which
    never call ``__getattr__``.
    """

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        vars(sys.modules[package])[name] = value  # later look-ups skip __getattr__
        return value

    def __dir__() -> list[str]:
        names = vars(sys.modules[package])
        if load_on_dir:
            for name in module_of.keys() - names.keys():
                __getattr__(name)
        return sorted({*names, *names.get("__all__", ())})

    return __getattr__, __dir__
