"""helion_fx_mlir: Helion Device IR -> MLIR, validated, lowered and run on CPU.

The public names load on first use, so tools that only handle MLIR text (helion-opt,
`helion-mlir validate`) do not pay for importing torch and Helion.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import stripped_args

stripped_args.install()

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
