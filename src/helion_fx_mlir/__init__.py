"""helion_fx_mlir: Helion Device IR -> MLIR, validated, lowered and run on CPU.

The public names load on first use, so tools that only handle MLIR text (helion-opt,
`helion-mlir validate`) do not pay for importing torch and Helion.
"""

from __future__ import annotations

import importlib
from typing import Any

from helion_fx_mlir.frontend import stripped_args
from helion_fx_mlir.frontend.import_hooks import after_import


def _install_backend(kernel_module: Any) -> None:
    from helion_fx_mlir.runtime.backend import install

    install(kernel_module)


stripped_args.install()
# Helion's `mlir` backend, once Helion's kernel module is loaded (see backend.py).
after_import("helion.runtime.kernel", _install_backend)

_EXPORTS = {
    "CompiledKernel": "runtime.jit",
    "HelionMLIRError": "errors",
    "LoweringError": "errors",
    "MLIRTextError": "errors",
    "ValidationResult": "mlir.parse",
    "compile_kernel": "runtime.jit",
    "generate_mlir": "frontend.lower",
    "lower_to_linalg": "passes.pipelines",
    "lower_to_llvm": "passes.pipelines",
    "validate_with_helion_opt": "mlir.parse",
}
__all__ = [
    "CompiledKernel",
    "HelionMLIRError",
    "LoweringError",
    "MLIRTextError",
    "ValidationResult",
    "compile_kernel",
    "generate_mlir",
    "lower_to_linalg",
    "lower_to_llvm",
    "validate_with_helion_opt",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
