"""Entry points: Helion bound kernel -> MLIR text, and validation of MLIR text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .mlir_text import ValidationResult, validate_text

if TYPE_CHECKING:
    import helion


def generate_mlir(bound_kernel: Any, kernel_name: str | None = None, *, config: "helion.Config | None" = None,
                  debug_info: bool = False) -> str:
    """The kernel's MLIR for a config (default: the kernel's own, else the spec default).

    With debug_info, every op carries loc("kernel.py":LINE:COL) of the kernel line that
    produced it. Deterministic: the same kernel and config give the same bytes."""
    from .ir_visitor import IRVisitor  # torch and Helion load only when generating
    from .lowering_context import LoweringContext

    ctx = LoweringContext.from_bound_kernel(bound_kernel, config, kernel_name)
    ctx.builder.debug_info = debug_info
    return IRVisitor(ctx).lower()


def validate_with_helion_opt(mlir_text: str, filename: str = "<mlir>") -> ValidationResult:
    """Parse and verify in process with torch, torch_c, helion and loom registered."""
    return validate_text(mlir_text, filename)
