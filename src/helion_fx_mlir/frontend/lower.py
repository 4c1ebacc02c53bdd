"""The frontend's entry point: Helion bound kernel -> MLIR text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import helion


def generate_mlir(
    bound_kernel: Any,
    kernel_name: str | None = None,
    *,
    config: helion.Config | None = None,
    debug_info: bool = False,
) -> str:
    """The kernel's MLIR for a config (default: the kernel's own, else the spec default).

    With debug_info, every op carries loc("kernel.py":LINE:COL) of the kernel line that
    produced it. Deterministic: the same kernel and config give the same bytes."""
    from helion_fx_mlir.frontend.lowering_context import LoweringContext
    from helion_fx_mlir.frontend.visitor import (
        IRVisitor,
    )  # torch and Helion load only when generating

    ctx = LoweringContext.from_bound_kernel(bound_kernel, config, kernel_name)
    ctx.builder.debug_info = debug_info
    return IRVisitor(ctx).lower()
