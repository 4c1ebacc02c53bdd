"""AVX-512's vscalefps as a call of its intrinsic, in the intrinsic's operand order.

`approximations.py` scales exp's polynomial by 2^n with `x86.avx512.mask.scalef`, whose
documented form is dst = k ? a * 2^floor(b) : src; the intrinsic takes (a, b, src, k,
rounding), and upstream's lowering passes the op's operands in the op's order, (src, a, b,
...): src * 2^floor(a). Here each op becomes the call with the operands in the intrinsic's
order: after buffer deallocation, which rejects an intrinsic call (its memory effects are
unknown), and before the x86 lowering. Also the helpers that split vectors into zmm
registers for such ops, and whether a module's target has them.

Tried and not kept: `vrangeps` for f32 maximumf/minimumf (one instruction where LLVM emits
four): it orders -0 below +0, but returns the number where one operand is a quiet NaN
(measured: range(NaN, 1) = range(1, NaN) = 1), so a row's max lost its NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from torch_mlir import ir
from torch_mlir.dialects import arith, llvm, vector

from helion_fx_mlir.mlir.attributes import DEFAULT_VECTOR_REGISTERS
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named, reshaped
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vector_width import vector_registers, vector_width

ZMM_LANES = 16  # f32 lanes of a zmm register
CURRENT_ROUNDING = 4  # _MM_FROUND_CUR_DIRECTION
EVERY_LANE = -1  # a 16-bit write mask with every bit set
SCALEF = "x86.avx512.mask.scalef"
SCALEF_INTRINSIC = "llvm.x86.avx512.mask.scalef.ps.512"


def zmm_target(module: ir.Module) -> bool:
    """Whether the module's target has AVX-512 (its 32 vector registers, the default) at the
    default, 512-bit, vector width."""
    return vector_registers(module) == DEFAULT_VECTOR_REGISTERS and vector_width(module) is None


def whole_zmms(type_: ir.Type) -> bool:
    """An f32 vector of whole zmm registers."""
    return (
        isinstance(type_, ir.VectorType)
        and isinstance(type_.element_type, ir.F32Type)
        and math.prod(type_.shape) % ZMM_LANES == 0
    )


def _flat(value: ir.Value) -> ir.Value:
    """An f32 vector as one dimension, for slicing it into zmm registers."""
    lanes = math.prod(ir.VectorType(value.type).shape)
    return reshaped(ir.VectorType.get([lanes], ir.F32Type.get()), value)


def _zmm(flat: ir.Value, lane: int) -> ir.Value:
    """The zmm register's worth of lanes from `lane` on."""
    zmm = ir.VectorType.get([ZMM_LANES], ir.F32Type.get())
    return vector.extract_strided_slice(zmm, flat, [lane], [ZMM_LANES], [1])


def zmm_parts(value: ir.Value) -> list[ir.Value]:
    """The lanes of each zmm register of an f32 vector of whole zmms, flattened."""
    flat = _flat(value)
    return [_zmm(flat, lane) for lane in range(0, ir.VectorType(flat.type).shape[0], ZMM_LANES)]


def per_zmm(values: Sequence[ir.Value], build: Callable[[list[ir.Value]], ir.Value]) -> ir.Value:
    """`build` on each zmm's lanes of the values (f32 vectors of one shape, flattened), the
    results put back together in that shape."""
    flattened = [_flat(v) for v in values]
    result = flattened[0]
    for lane in range(0, ir.VectorType(result.type).shape[0], ZMM_LANES):
        built = build([_zmm(v, lane) for v in flattened])
        result = vector.insert_strided_slice(built, result, [lane], [1])
    return reshaped(values[0].type, result)


def int_constant(width: int, value: int) -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(width), value).result


@register(
    "helion-x86-intrinsics",
    "x86.avx512.mask.scalef -> its LLVM intrinsic, operands in the intrinsic's order",
)
def x86_intrinsics(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, SCALEF):
            src, a, b, k, rounding = op.operands
            with ir.InsertionPoint(op), op.location:
                operands = [a, b, src, k, rounding]
                call = llvm.call_intrinsic(a.type, SCALEF_INTRINSIC, operands, [], [])
            op.results[0].replace_all_uses_with(call)
            op.erase()
