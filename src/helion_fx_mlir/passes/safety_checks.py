"""Checks before LLVM: ops the CPU pipeline cannot lower are reported, divisions guarded."""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith

from helion_fx_mlir.errors import RewriteError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named, ops_where
from helion_fx_mlir.passes.registry import register


def _ops_in_dialect(module: ir.Module, dialect: str) -> list[ir.Operation]:
    return ops_where(module, lambda op: op.name.partition(".")[0] == dialect)


@register(
    "helion-reject-tm-tensor-ops", "report tm_tensor ops (no CPU lowering) at their kernel line"
)
def reject_tm_tensor_ops(module: ir.Module) -> None:
    """torch-mlir lowers a few ATen ops (sort, cumsum, scatter, ...) to tm_tensor ops, which
    one-shot-bufferize cannot handle: say so at the kernel line rather than mid-pipeline."""
    with mlir_context():
        found = [
            op
            for op in _ops_in_dialect(module, "tm_tensor")
            if op.parent.name.partition(".")[0] != "tm_tensor"
        ]
    if found:
        raise RewriteError(
            "linalg-to-llvm",
            [
                (
                    op.location,
                    f"torch-mlir lowers this ATen op to {op.name}, which the CPU pipeline cannot "
                    "bufferize; it has no lowering here",
                )
                for op in found
            ],
        )


INTEGER_DIVISIONS = {
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.ceildivui",
}


@register(
    "helion-guard-integer-division", "integer division by a non-constant divides by 1 where it is 0"
)
def guard_integer_division(module: ir.Module) -> None:
    """Integer division and remainder by a divisor that is not a constant divide by 1 where
    it is 0: x86 traps on it (SIGFPE ends the user's process), and padded tile lanes hold 0.
    Eager PyTorch raises there; the lanes that divide by 0 get an unspecified value."""
    with mlir_context():
        for op in ops_named(module, *INTEGER_DIVISIONS):
            divisor = op.operands[1]
            if not isinstance(divisor.owner, ir.OpView) or divisor.owner.name != "arith.constant":
                with ir.InsertionPoint(op), op.location:
                    zero = _constant_like(divisor.type, 0)
                    one = _constant_like(divisor.type, 1)
                    is_zero = arith.CmpIOp(arith.CmpIPredicate.eq, divisor, zero).result
                    safe = arith.SelectOp(is_zero, one, divisor).result
                    guarded = ir.Operation.create(
                        op.name, results=[op.results[0].type], operands=[op.operands[0], safe]
                    )
                op.results[0].replace_all_uses_with(guarded.results[0])
                op.erase()


def _constant_like(type_: ir.Type, value: int) -> ir.Value:
    """An integer constant of the divisor's type: a splat for vectors and tensors (a plain
    integer attribute of a shaped type crashes MLIR)."""
    if isinstance(type_, ir.ShapedType):
        element = ir.IntegerAttr.get(ir.ShapedType(type_).element_type, value)
        return arith.ConstantOp(type_, ir.DenseElementsAttr.get_splat(type_, element)).result
    return arith.ConstantOp(type_, value).result
