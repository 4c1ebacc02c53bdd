"""The frontend's entry point: Helion bound kernel -> MLIR text and the func's signature."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from helion_fx_mlir.frontend.signature import KernelSignature

if TYPE_CHECKING:
    import helion


def lower_kernel(
    bound_kernel: Any,
    config: helion.Config | None = None,
    kernel_name: str | None = None,
    *,
    debug_info: bool = False,
) -> tuple[str, KernelSignature]:
    """The kernel's MLIR for a config (default: the kernel's own, else the spec default),
    and its signature, known only once lowered (host scalars become arguments on use)."""
    from helion_fx_mlir.frontend.lowering_context import LoweringContext
    from helion_fx_mlir.frontend.size_checks import size_checks
    from helion_fx_mlir.frontend.visitor import IRVisitor  # torch and Helion load here

    ctx = LoweringContext.from_bound_kernel(bound_kernel, config, kernel_name)
    ctx.builder.debug_info = debug_info
    text = IRVisitor(ctx).lower()
    ctx.publish_guards()
    signature = KernelSignature(
        ctx.kernel_name,
        tuple(ctx.kernel_args),
        tuple(ctx.output_args),
        ctx.config,
        ctx.block_size_values,
        size_checks(ctx.size_requirements, ctx.kernel_args),
    )
    return text, signature


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
    text, _ = lower_kernel(bound_kernel, config, kernel_name, debug_info=debug_info)
    return text
