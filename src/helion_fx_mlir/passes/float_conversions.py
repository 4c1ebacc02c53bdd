"""Float conversions LLVM cannot lower on CPU, rewritten as ones it can (f64 <-> half, fp8),
and float -> narrow int conversions as PyTorch does them."""

from __future__ import annotations

from collections.abc import Callable

from torch_mlir import ir
from torch_mlir.dialects import arith

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.registry import register


def _replace_each(
    module: ir.Module,
    names: set[str],
    wanted: Callable[[ir.Operation], bool],
    build: Callable[[ir.Operation], ir.Value],
) -> None:
    """Replace every op named in `names` that `wanted` accepts by the value `build` makes in
    its place."""
    with mlir_context():
        for op in ops_named(module, *names):
            if wanted(op):
                with ir.InsertionPoint(op), op.location:
                    value = build(op)
                op.results[0].replace_all_uses_with(value)
                op.erase()


def _conversion_types(op: ir.Operation) -> set[str]:
    """Source and result types of a scalar conversion (shaped types print as tensor<...>)."""
    return {str(op.operands[0].type), str(op.results[0].type)}


def _to_f32(x: ir.Value) -> ir.Value:
    f32 = ir.F32Type.get()
    if x.type == f32:
        return x
    return (arith.TruncFOp if str(x.type) == "f64" else arith.ExtFOp)(f32, x).result


def _from_f32(x: ir.Value, result: ir.Type) -> ir.Value:
    if x.type == result:
        return x
    return (arith.ExtFOp if str(result) == "f64" else arith.TruncFOp)(result, x).result


@register("helion-split-half-conversions", "f64 <-> f16/bf16 conversions as two steps through f32")
def split_half_conversions(module: ir.Module) -> None:
    """f64 <-> f16/bf16 as two steps through f32: the JIT has no __truncdfhf2-style
    runtime functions, while f32 <-> f16/bf16 lower natively (or via arith-expand)."""
    _replace_each(
        module,
        {"arith.truncf", "arith.extf"},
        lambda op: "f64" in _conversion_types(op) and bool(_conversion_types(op) & {"f16", "bf16"}),
        lambda op: _from_f32(_to_f32(op.operands[0]), op.results[0].type),
    )


@register(
    "helion-narrow-ints-through-i32", "float -> i8/i16 conversions as float -> i32, truncated"
)
def narrow_ints_through_i32(module: ir.Module) -> None:
    """float -> int8/uint8/int16 as PyTorch converts on CPU: to int32, then the low bits
    (300.0 -> 44 in int8, -1.0 -> 255 in uint8). LLVM's direct conversion of a value out of
    the narrow range is poison, and x86 saturates it in vector code (300.0 -> 127)."""
    _replace_each(
        module,
        {"arith.fptosi", "arith.fptoui"},
        lambda op: str(op.results[0].type) in ("i8", "i16"),
        lambda op: (
            arith.TruncIOp(
                op.results[0].type,
                arith.FPToSIOp(ir.IntegerType.get_signless(32), op.operands[0]).result,
            ).result
        ),
    )


@register("helion-expand-fp8-extensions", "arith.extf from f8E4M3FN -> integer bit manipulation")
def expand_fp8_extensions(module: ir.Module) -> None:
    """arith.extf from f8E4M3FN as integer bit manipulation, since LLVM has no fp8 type:
    normal numbers rebias the exponent (7 -> 127), subnormals are mant * 2^-9, S.1111.111 is NaN."""
    _replace_each(
        module,
        {"arith.extf"},
        lambda op: str(op.operands[0].type) == "f8E4M3FN",
        lambda op: _from_f32(_fp8_e4m3fn_to_f32(op.operands[0]), op.results[0].type),
    )


def _fp8_e4m3fn_to_f32(x: ir.Value) -> ir.Value:
    i8, i32, f32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32), ir.F32Type.get()
    const = lambda v: arith.ConstantOp(i32, v).result  # noqa: E731
    bits = arith.ExtUIOp(i32, arith.BitcastOp(i8, x).result).result
    sign = arith.ShRUIOp(bits, const(7)).result
    exp = arith.AndIOp(arith.ShRUIOp(bits, const(3)).result, const(15)).result
    mant = arith.AndIOp(bits, const(7)).result
    normal = arith.OrIOp(
        arith.OrIOp(
            arith.ShLIOp(sign, const(31)).result,
            arith.ShLIOp(arith.AddIOp(exp, const(120)).result, const(23)).result,
        ).result,
        arith.ShLIOp(mant, const(20)).result,
    ).result
    magnitude = arith.MulFOp(
        arith.UIToFPOp(f32, mant).result, arith.ConstantOp(f32, 2.0**-9).result
    ).result
    negative = arith.CmpIOp(arith.CmpIPredicate.ne, sign, const(0)).result
    subnormal = arith.SelectOp(negative, arith.NegFOp(magnitude).result, magnitude).result
    is_subnormal = arith.CmpIOp(arith.CmpIPredicate.eq, exp, const(0)).result
    value = arith.SelectOp(is_subnormal, subnormal, arith.BitcastOp(f32, normal).result).result
    is_nan = arith.CmpIOp(
        arith.CmpIPredicate.eq, arith.AndIOp(bits, const(127)).result, const(127)
    ).result
    return arith.SelectOp(is_nan, arith.ConstantOp(f32, float("nan")).result, value).result


@register("helion-expand-fp8-truncations", "arith.truncf to f8E4M3FN -> integer bit manipulation")
def expand_fp8_truncations(module: ir.Module) -> None:
    """arith.truncf to f8E4M3FN as integer bit manipulation (LLVM has no fp8 type), rounding
    as PyTorch does: to nearest even, saturating at +-448 (inf too), NaN to NaN (sign kept),
    below 2^-6 to subnormals."""
    _replace_each(
        module,
        {"arith.truncf"},
        lambda op: str(op.results[0].type) == "f8E4M3FN",
        lambda op: (
            arith.BitcastOp(
                op.results[0].type, _f32_to_fp8_e4m3fn_bits(_to_f32(op.operands[0]))
            ).result
        ),
    )


def _f32_to_fp8_e4m3fn_bits(x: ir.Value) -> ir.Value:
    i8, i32, f32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32), ir.F32Type.get()
    const = lambda v: arith.ConstantOp(i32, v).result  # noqa: E731
    bits = arith.BitcastOp(i32, x).result
    sign = arith.AndIOp(bits, const(-(1 << 31))).result
    magnitude = arith.XOrIOp(bits, sign).result
    # Subnormal range: adding 2^14 (exponent 141) leaves the rounded fp8 mantissa in the low bits.
    denorm = const(141 << 23)
    shifted = arith.AddFOp(
        arith.BitcastOp(f32, magnitude).result, arith.BitcastOp(f32, denorm).result
    ).result
    subnormal = arith.SubIOp(arith.BitcastOp(i32, shifted).result, denorm).result
    # Normal range: rebias the exponent (127 -> 7), round the 20 dropped bits to nearest even.
    odd = arith.AndIOp(arith.ShRUIOp(magnitude, const(20)).result, const(1)).result
    rounded = arith.AddIOp(
        arith.AddIOp(magnitude, const(((7 - 127) << 23) + 0x7FFFF)).result, odd
    ).result
    normal = arith.ShRUIOp(rounded, const(20)).result
    is_subnormal = arith.CmpIOp(arith.CmpIPredicate.ult, magnitude, const(121 << 23)).result
    finite = arith.MinUIOp(
        arith.SelectOp(is_subnormal, subnormal, normal).result, const(0x7E)
    ).result
    is_nan = arith.CmpIOp(arith.CmpIPredicate.ugt, magnitude, const(0x7F800000)).result
    value = arith.SelectOp(is_nan, const(0x7F), finite).result
    with_sign = arith.OrIOp(value, arith.ShRUIOp(sign, const(24)).result).result
    return arith.TruncIOp(i8, with_sign).result
