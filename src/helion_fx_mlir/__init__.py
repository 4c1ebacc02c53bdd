"""helion_fx_mlir: Helion Device IR -> MLIR, validated, lowered and run on CPU.

The public names load on first use, so tools that only handle MLIR text (helion-opt,
`helion-mlir validate`) do not pay for importing torch and Helion.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import stripped_args
from .import_hooks import after_import


def _install_backend(kernel_module: Any) -> None:
    from .backend import install

    install(kernel_module)


stripped_args.install()
# Helion's `mlir` backend, once Helion's kernel module is loaded (see backend.py).
after_import("helion.runtime.kernel", _install_backend)

_EXPORTS = {
    "CompiledKernel": "runtime",
    "HelionMLIRError": "errors",
    "LoweringError": "errors",
    "MLIRTextError": "errors",
    "ValidationResult": "mlir_text",
    "compile_kernel": "runtime",
    "generate_mlir": "helion_mlir",
    "lower_to_linalg": "passes",
    "lower_to_llvm": "passes",
    "validate_with_helion_opt": "helion_mlir",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
