"""helion_fx_mlir: Helion Device IR -> MLIR, validated, lowered and run on CPU."""

from . import stripped_args

stripped_args.install()

from .errors import HelionMLIRError, LoweringError, MLIRTextError  # noqa: E402
from .helion_mlir import generate_mlir, validate_with_helion_opt  # noqa: E402
from .mlir_text import ValidationResult  # noqa: E402
from .passes import lower_to_linalg, lower_to_llvm  # noqa: E402
from .runtime import CompiledKernel, compile_kernel  # noqa: E402

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
