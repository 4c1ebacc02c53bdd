"""Run a function on a module once it is imported, without importing it ourselves.

Importing helion_fx_mlir must not import Helion (the MLIR-only tools would pay seconds for
torch), yet Helion needs two changes before any kernel binds: the recorded Inductor inputs
(`stripped_args`) and the `mlir` backend (`backend`). Each is applied to its Helion module
when that module finishes importing, or at once if it already has.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

ModuleHook = Callable[[ModuleType], None]


def after_import(name: str, hook: ModuleHook) -> None:
    """Call hook(module) now if `name` is imported, else right after its import."""
    module = sys.modules.get(name)
    if module is not None:
        hook(module)
    elif not any(
        isinstance(f, _HookOnImport) and f.name == name and f.hook is hook for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _HookOnImport(name, hook))


class _HookOnImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the module through the normal finders, executes it, then calls the hook."""

    def __init__(self, name: str, hook: ModuleHook) -> None:
        self.name = name
        self.hook = hook
        self._loader: Any = None

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        # The parent package is mid-import: look in its __path__, never import it again.
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: Any) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self.hook(module)
