"""Rules for ATen ops torch-mlir cannot lower as Helion writes them: each is rewritten
into ATen ops it can lower (every other ATen op goes through torch-mlir unchanged)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from helion._compiler.inductor_lowering import PointwiseLowering
from torch import fx

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.emitter import GenericOp, identity_map, slice_operands
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.rules.compute import accumulate_dtype, dim_size, insert_along
from helion_fx_mlir.frontend.rules.memory import arange, fake_empty, tile_lanes
from helion_fx_mlir.frontend.rules.tensors import emit_full, expand_dims
from helion_fx_mlir.frontend.stripped_args import restored_args
from helion_fx_mlir.frontend.values import (
    HALVES,
    TypedValue,
    Value,
    element_type,
    mlir_type,
    tensor_dims,
)

aten = torch.ops.aten


def aten_compute(cx: RuleContext) -> Any:
    """Any ATen/prims op: imported through torch-mlir, bridged with torch_c."""
    node = cx.node
    args, kwargs = restored_args(node)
    kwargs = {k: value for k, value in kwargs.items() if not k.startswith("_extra")}
    if (
        isinstance(node.meta.get("lowering"), PointwiseLowering)
        or node.target in BROADCASTING_VIEWS
    ):
        args = [aligned_by_tile(cx, a) for a in args]
    return cx.emit_torch_op(node.name, node.target, args, kwargs, cx.result_meta)


def aligned_by_tile(cx: RuleContext, arg: Any) -> Any:
    """An operand of lower rank whose dims are tiles of the result, but not its trailing
    ones (`a[t0, t1] + b[t0]`): Helion broadcasts by tile, so unit dims go where the
    result's other tiles are (b as [t0, 1]); torch's trailing rule would pair t0 with t1."""
    val = arg.meta.get("val") if isinstance(arg, fx.Node) else None
    result = cx.node.meta["val"]
    if (
        not isinstance(val, torch.Tensor)
        or not isinstance(result, torch.Tensor)
        or not 0 < val.dim() < result.dim()
    ):
        return arg
    out = result.shape
    positions = tile_positions(val.shape, out)
    if positions is None:
        return arg
    index = [slice(None) if d in positions else None for d in range(len(out))]
    fake = fake_empty(
        val,
        [val.shape[positions.index(d)] if d in positions else 1 for d in range(len(out))],
        val.dtype,
    )
    static = cx.static_meta(fake)
    return TypedValue(
        expand_dims(cx, f"{arg.name}_by_tile", cx.value(arg), index, mlir_type(static)), static
    )


# Ops besides the pointwise ones whose operand broadcasts to the result's shape.
BROADCASTING_VIEWS = (
    torch.ops.aten.expand.default,
    torch.ops.aten.expand_as.default,
    torch.ops.aten.broadcast_to.default,
)


def tile_positions(shape: Sequence[Any], out: Sequence[Any]) -> list[int] | None:
    """Where each dim of `shape` lies in `out` when torch's trailing alignment would pair
    different symbols but matching the same symbols in order places every dim; else None."""
    trailing = all(
        _same(a, b) or (isinstance(a, int) and a == 1)
        for a, b in zip(reversed(shape), reversed(out))
    )
    if trailing:
        return None
    positions, start = [], 0
    for size in shape:
        found = next((d for d in range(start, len(out)) if _same(size, out[d])), None)
        if found is None:
            return None
        positions.append(found)
        start = found + 1
    return positions


def _same(a: Any, b: Any) -> bool:
    """SymInts compare by expression: `==` would guard on their hints."""
    return str(a) == str(b)


# torch-mlir imports the Scalar operand of these as a torch constant that torch-to-linalg
# cannot legalize; the overload taking two tensors lowers.
SCALAR_OPERAND_FORMS: dict[Any, Any] = {
    aten.remainder.Scalar_Tensor: aten.remainder.Tensor,
    aten.bitwise_and.Scalar_Tensor: aten.bitwise_and.Tensor,
    aten.bitwise_or.Scalar: aten.bitwise_or.Tensor,
    aten.bitwise_or.Scalar_Tensor: aten.bitwise_or.Tensor,
    aten.bitwise_xor.Scalar: aten.bitwise_xor.Tensor,
    aten.bitwise_xor.Scalar_Tensor: aten.bitwise_xor.Tensor,
}


@lowers(*SCALAR_OPERAND_FORMS)
def scalar_operand(cx: RuleContext) -> Value:
    """The .Tensor overload, the scalar a 0-d torch.aten.scalar_tensor of the result dtype."""
    node = cx.node
    args, kwargs = restored_args(node)
    return tensor_form(cx, node, SCALAR_OPERAND_FORMS[node.target], args, kwargs)


def tensor_form(
    cx: RuleContext, node: fx.Node, target: Any, args: list[Any], kwargs: dict[str, Any]
) -> Value:
    """`target` on the node's first two operands as tensors of the result dtype (scalars as
    0-d tensors), with its remaining arguments unchanged."""
    result = cx.meta(node)
    operands = [
        as_tensor(cx, f"{node.name}_operand{i}", arg, result) for i, arg in enumerate(args[:2])
    ]
    return cx.torch_call(node.name, target, *operands, *args[2:], **kwargs).value


# prims ops torch-mlir imports but does not lower (torch.isclose decomposes to
# prims.bitwise_and): the ATen op of the same meaning.
PRIMS_AS_ATEN: dict[Any, Any] = {
    torch.ops.prims.bitwise_and.default: aten.bitwise_and.Tensor,
    torch.ops.prims.bitwise_or.default: aten.bitwise_or.Tensor,
}


@lowers(*PRIMS_AS_ATEN)
def prims_as_aten(cx: RuleContext) -> Value:
    """The ATen op on the same operands, aligned by tile as any pointwise op."""
    node = cx.node
    args, kwargs = restored_args(node)
    aligned = [aligned_by_tile(cx, a) for a in args]
    target = PRIMS_AS_ATEN[node.target]
    return cx.emit_torch_op(node.name, target, aligned, kwargs, cx.result_meta)


@lowers(torch.ops.prims.rev.default)
def reverse(cx: RuleContext) -> Value:
    """torch.flip: refused with an error (torch-mlir does not lower it either).

    A tile's dim is as wide as its block, masked lanes past the tensor's end, and
    reversing it would bring those lanes to the front."""
    raise LoweringError(cx.node, "torch.flip of a tile is not supported")


# Arithmetic with a number operand, and the .Tensor overload each becomes when the number
# is taken as a 0-d tensor.
NUMBER_OPERAND_FORMS: dict[Any, Any] = {
    aten.add.Scalar: aten.add.Tensor,
    aten.add.Tensor: aten.add.Tensor,
    aten.sub.Scalar: aten.sub.Tensor,
    aten.sub.Tensor: aten.sub.Tensor,
    aten.mul.Scalar: aten.mul.Tensor,
    aten.mul.Tensor: aten.mul.Tensor,
    aten.div.Scalar: aten.div.Tensor,
    aten.div.Tensor: aten.div.Tensor,
    aten.remainder.Scalar: aten.remainder.Tensor,
}
BYTES = (torch.int8, torch.uint8)
# Eager multiplies and divides an f16/bf16 tensor by a number in f32, the number unrounded
# (its CPU kernels take the original scalar as opmath), and rounds once; adds and
# subtracts round the number to the tensor's dtype first (measured on torch 2.13).
OPMATH_NUMBER_OPS = {aten.mul.Scalar, aten.mul.Tensor, aten.div.Scalar, aten.div.Tensor}


@lowers(*NUMBER_OPERAND_FORMS)
def number_operand(cx: RuleContext) -> Value:
    """A number operand as eager takes it: f16/bf16 multiplied or divided by a number in
    f32 and rounded once (torch-mlir rounds the number first: `x * 1e6` in f16 was nan at
    x = 0); on int8/uint8 (torch-mlir crashes the process converting a number to an 8-bit
    element type) and where the number comes first (`s - x` with s a kernel argument,
    which torch-mlir's verifier refused), the number as a 0-d tensor of the result dtype.
    Two tensors, or a tensor then a number otherwise: the op through torch-mlir."""
    node = cx.node
    args, kwargs = restored_args(node)
    dtype = node.meta["val"].dtype
    if all(_is_tensor(arg) for arg in args[:2]):
        return cx.aten_compute()
    if dtype in HALVES and node.target in OPMATH_NUMBER_OPS:
        wide = fake_empty(cx.meta(node), [], torch.float32)
        return in_dtype(cx, node, NUMBER_OPERAND_FORMS[node.target], args, kwargs, wide)
    if dtype in BYTES or not _is_tensor(args[0]):
        return tensor_form(cx, node, NUMBER_OPERAND_FORMS[node.target], args, kwargs)
    return cx.aten_compute()


def in_dtype(
    cx: RuleContext,
    node: fx.Node,
    target: Any,
    args: list[Any],
    kwargs: dict[str, Any],
    like: torch.Tensor,
) -> Value:
    """`target` on the node's first two operands as tensors of `like`'s dtype (numbers as
    0-d tensors, unrounded), its result converted to the node's dtype."""
    operands = [
        as_tensor(cx, f"{node.name}_operand{i}", aligned_by_tile(cx, arg), like)
        for i, arg in enumerate(args[:2])
    ]
    value = cx.torch_call(f"{node.name}_wide", target, *operands, *args[2:], **kwargs)
    return cx.convert(value, cx.meta(node).dtype, node.name).value


@lowers(aten.fmod.Tensor, aten.fmod.Scalar)
def fmod(cx: RuleContext) -> Value:
    """On floats `exact_fmod`, in f32 for f16/bf16 (the exact result is the same), a number
    divisor rounded to the tensor's dtype first as eager's (0.1 is 0.10009765625 in bf16).
    On integers torch-mlir's own (the Scalar overload as the Tensor one, whose scalar
    operand torch-to-linalg cannot legalize)."""
    node = cx.node
    args, kwargs = restored_args(node)
    result = cx.meta(node)
    if result.dtype.is_floating_point:
        wide = fake_empty(result, [], accumulate_dtype(result.dtype))
        a, b = (widened(cx, f"{node.name}_{i}", arg, wide) for i, arg in enumerate(args[:2]))
        return cx.convert(exact_fmod(cx, node.name, a, b), result.dtype, node.name).value
    if node.target == aten.fmod.Tensor:
        return cx.aten_compute()
    return tensor_form(cx, node, aten.fmod.Tensor, args, kwargs)


def exact_fmod(cx: RuleContext, name: str, a: TypedValue, b: TypedValue) -> TypedValue:
    """fmod(a, b) of floats, exact as C's: `remainder(|a|, |b|)` (torch-mlir lowers it with
    `arith.remf`, and both operands non-negative it needs no sign fix) with a's sign bit.
    torch-mlir's fmod, `a - b * trunc(a / b)`, is nan at an infinite b (eager: a), loses
    the remainder where the quotient is large (16777217 fmod 0.1: 0, eager 0.05) and the
    sign of a zero."""
    magnitude = cx.torch_call(
        f"{name}_magnitude",
        aten.remainder.Tensor,
        cx.torch_call(f"{name}_abs_a", aten.abs.default, a),
        cx.torch_call(f"{name}_abs_b", aten.abs.default, b),
    )
    return cx.torch_call(
        f"{name}_signed",
        aten.where.self,
        sign_bit(cx, f"{name}_a_sign", a),
        cx.torch_call(f"{name}_negated", aten.neg.default, magnitude),
        magnitude,
    )


@lowers(aten.div.Tensor_mode)
def div_with_mode(cx: RuleContext) -> Value:
    """On int8/uint8: torch.aten.div.Tensor_mode in i32, cast back (torch-to-linalg has no
    8-bit integer division; the i32 quotient wraps back as eager's does). Floor division of
    floats as PyTorch's (`float_floor_div`). A symbolic scalar operand (`x // n` of an int
    argument) is a 0-d tensor: the op takes two tensors."""
    node = cx.node
    result = cx.meta(node)
    args, kwargs = restored_args(node)
    if result.dtype.is_floating_point and kwargs.get("rounding_mode") == "floor":
        return float_floor_div(cx, args[0], args[1]).value
    if result.dtype not in BYTES:
        if any(isinstance(a, fx.Node) and not _is_tensor(a) for a in args[:2]):
            return tensor_form(cx, node, aten.div.Tensor_mode, args, kwargs)
        return cx.aten_compute()
    wide = fake_empty(result, [], torch.int32)
    operands = [
        as_tensor(cx, f"{node.name}_operand{i}", arg, wide) for i, arg in enumerate(args[:2])
    ]
    quotient = cx.torch_call(f"{node.name}_i32", aten.div.Tensor_mode, *operands, **kwargs)
    return cx.convert(quotient, result.dtype, node.name).value


def float_floor_div(cx: RuleContext, dividend: Any, divisor: Any) -> TypedValue:
    """a // b as PyTorch computes it on floats (Python's rule): `(a - fmod(a, b)) / b`, one
    less where the remainder's sign is not b's, rounded to the nearest integer, a zero
    quotient signed as a / b, and a / b itself for b == 0. `floor(a / b)` differs where
    a / b is inf (inf // 2 is nan) or rounds (a / b of 1e30 and 3).

    In f32 for f16/bf16, as eager's vector code computes them, cast back. Scalars are
    floats: torch-mlir folds a constant float tensor compared with an int wrongly (its
    `2.0 < 0` is true), and b is often a constant."""
    name, result = cx.node.name, cx.result_meta
    wide = fake_empty(result, [], accumulate_dtype(result.dtype))
    a, b = (
        as_tensor(cx, f"{name}_{part}", aligned_by_tile(cx, arg), wide)
        for part, arg in (("a", dividend), ("b", divisor))
    )

    def call(part: str, target: Any, *args: Any) -> TypedValue:
        return cx.torch_call(f"{name}_{part}", target, *args)

    quotient = call("quotient", aten.div.Tensor, a, b)
    rem = exact_fmod(cx, f"{name}_rem", a, b)
    exact = call("exact", aten.div.Tensor, call("whole", aten.sub.Tensor, a, rem), b)
    signs_differ = call(
        "signs_differ",
        aten.ne.Tensor,
        call("b_neg", aten.lt.Scalar, b, 0.0),
        call("rem_neg", aten.lt.Scalar, rem, 0.0),
    )
    step_down = call(
        "step_down",
        aten.logical_and.default,
        call("rem_nonzero", aten.ne.Scalar, rem, 0.0),
        signs_differ,
    )
    exact = call(
        "stepped", aten.where.self, step_down, call("less", aten.sub.Scalar, exact, 1.0), exact
    )
    floor = call("floor", aten.floor.default, exact)
    rounds_up = call("rounds_up", aten.gt.Scalar, call("frac", aten.sub.Tensor, exact, floor), 0.5)
    floor = call(
        "rounded", aten.where.self, rounds_up, call("up", aten.add.Scalar, floor, 1.0), floor
    )
    signed_zero = call(
        "signed_zero",
        aten.where.self,
        sign_bit(cx, f"{name}_zero_sign", quotient),
        as_tensor(cx, f"{name}_neg_zero", -0.0, wide),
        as_tensor(cx, f"{name}_zero", 0.0, wide),
    )
    floor = call(
        "nonzero", aten.where.self, call("is_zero", aten.eq.Scalar, exact, 0.0), signed_zero, floor
    )
    floor = call(
        "by_zero", aten.where.self, call("b_zero", aten.eq.Scalar, b, 0.0), quotient, floor
    )
    return cx.convert(floor, result.dtype, name)


def widened(cx: RuleContext, name: str, arg: Any, wide: torch.Tensor) -> TypedValue:
    """An operand of the node's result dtype (a scalar rounded to it, as eager's iterator
    does: 0.1 is 0.10009765625 in bf16), then converted to `wide`'s for computing."""
    operand = as_tensor(cx, name, aligned_by_tile(cx, arg), cx.result_meta)
    return cx.convert(operand, wide.dtype, f"{name}_wide")


def _is_tensor(arg: Any) -> bool:
    return isinstance(arg, fx.Node) and isinstance(arg.meta["val"], torch.Tensor)


def as_tensor(cx: RuleContext, name: str, arg: Any, like: torch.Tensor) -> TypedValue:
    """A tensor operand (node or value) cast to `like`'s dtype, or a scalar (literal or
    symbol) as a 0-d one."""
    if isinstance(arg, TypedValue):
        return cx.convert(arg, like.dtype, name)
    if _is_tensor(arg):
        return cx.convert(cx.typed(arg), like.dtype, name)
    meta = fake_empty(like, [], like.dtype)
    return TypedValue(
        cx.emit_torch_op(name, aten.scalar_tensor.default, [arg], {"dtype": like.dtype}, meta), meta
    )


# Bounds by PyTorch's rules: NaN from either side wins, a lower bound above the upper one
# gives the upper. torch-mlir lowers maximum and minimum as `select(a > b, a, b)` and clamp as
# `select(x <u lo, lo, x)`, which take the bound for a NaN x (and has no pattern for tensor
# bounds): each bound here is `where((x > b) | isnan(x), x, b)` (`<` for upper bounds).
BOUNDS: dict[Any, tuple[tuple[str, int, str], ...]] = {
    aten.maximum.default: (("lower", 1, "other"),),
    aten.minimum.default: (("upper", 1, "other"),),
    aten.clamp_min.default: (("lower", 1, "min"),),
    aten.clamp_min.Tensor: (("lower", 1, "min"),),
    aten.clamp_max.default: (("upper", 1, "max"),),
    aten.clamp_max.Tensor: (("upper", 1, "max"),),
    aten.clamp.default: (("lower", 1, "min"), ("upper", 2, "max")),
    aten.clamp.Tensor: (("lower", 1, "min"), ("upper", 2, "max")),
}


@lowers(*BOUNDS)
def bounded(cx: RuleContext) -> Value:
    """where((x > lo) | isnan(x), x, lo), then `<` hi alike: NaN wins from either side.

    Each bound the op has (None is no bound), in the result's dtype."""
    node = cx.node
    args, kwargs = restored_args(node)
    result = cx.meta(node)
    x = as_tensor(cx, f"{node.name}_x", aligned_by_tile(cx, args[0]), result)
    bounds = [
        (kind, bound)
        for kind, position, keyword in BOUNDS[node.target]
        if (bound := args[position] if len(args) > position else kwargs.get(keyword)) is not None
    ]
    for i, (kind, bound) in enumerate(bounds):
        operand = as_tensor(cx, f"{node.name}_{kind}", aligned_by_tile(cx, bound), result)
        name = node.name if i == len(bounds) - 1 else f"{node.name}_{kind}_held"
        x = _held(cx, name, x, operand, kind)
    return x.value


def _held(cx: RuleContext, name: str, x: TypedValue, bound: TypedValue, kind: str) -> TypedValue:
    """x where it is inside the bound or NaN, else the bound (NaN if the bound is)."""
    inside = cx.torch_call(
        f"{name}_inside", aten.gt.Tensor if kind == "lower" else aten.lt.Tensor, x, bound
    )
    keep = cx.torch_call(f"{name}_keep", aten.logical_or.default, inside, _is_nan(cx, name, x))
    return cx.torch_call(name, aten.where.self, keep, x, bound)


def _is_nan(cx: RuleContext, name: str, x: TypedValue) -> TypedValue:
    """x != x: true on NaN lanes only."""
    return cx.torch_call(f"{name}_nan", aten.ne.Tensor, x, x)


@lowers(aten.eq.Tensor)
def float_equal(cx: RuleContext) -> Value:
    """`a == b` on floats as `not (a != b)`, which torch-mlir does not fold.

    torch-mlir folds `eq.Tensor(x, x)` to true, which is false on a NaN lane
    (`torch.isfinite` is `x == x and |x| != inf`)."""
    node = cx.node
    args, _ = restored_args(node)
    if not any(_is_tensor(a) and a.meta["val"].dtype.is_floating_point for a in args):
        return cx.aten_compute()
    return compared(cx, aten.eq.Tensor, [aligned_by_tile(cx, a) for a in args]).value


# Comparisons with a number, and the .Tensor overload each becomes when the number is a
# 0-d tensor of the compared tensor's dtype.
NUMBER_COMPARISONS: dict[Any, Any] = {
    aten.lt.Scalar: aten.lt.Tensor,
    aten.le.Scalar: aten.le.Tensor,
    aten.gt.Scalar: aten.gt.Tensor,
    aten.ge.Scalar: aten.ge.Tensor,
    aten.eq.Scalar: aten.eq.Tensor,
    aten.ne.Scalar: aten.ne.Tensor,
}


@lowers(*NUMBER_COMPARISONS)
def number_comparison(cx: RuleContext) -> Value:
    """A tensor compared with a number as eager compares: in their common dtype (a bool
    tensor with an int in int64, an int tensor with a float in f32), the number converted
    to it first: rounded to a float dtype (`x == 0.1` holds where x is 0.1 rounded;
    torch-mlir compared with the number unrounded, false), through f32 for f16/bf16 as c10
    converts a Scalar; wrapped into an integer one (`int8 <= 300` is `<= 44` in eager).
    Numbers the dtype holds exactly (`x > 0`): the op through torch-mlir."""
    node = cx.node
    args, _ = restored_args(node)
    like = args[0].meta["val"]
    common = torch.result_type(torch.empty((), dtype=like.dtype), _sample(args[1]))
    if common == like.dtype and exact_in(args[1], common):
        return cx.aten_compute()
    wide = fake_empty(like, [], common)
    tensor = as_tensor(cx, f"{node.name}_tensor", aligned_by_tile(cx, args[0]), wide)
    if common in HALVES:
        single = as_tensor(cx, f"{node.name}_single", args[1], fake_empty(like, [], torch.float32))
        number = cx.convert(single, common, f"{node.name}_number")
    else:
        number = as_tensor(cx, f"{node.name}_number", args[1], wide)
    return compared(cx, NUMBER_COMPARISONS[node.target], [tensor, number]).value


def _sample(number: Any) -> bool | int | float:
    """A Python number of `number`'s kind (a literal, or a SymInt/SymFloat/SymBool node)."""
    if not isinstance(number, fx.Node):
        return number
    kinds = {torch.SymBool: False, torch.SymInt: 0, torch.SymFloat: 0.0}
    return next(v for kind, v in kinds.items() if isinstance(number.meta["val"], kind))


def exact_in(number: Any, dtype: torch.dtype) -> bool:
    """Whether converting `number` to `dtype` leaves it unchanged: a literal it holds, or a
    symbol of the dtype's own kind (an int argument compared with an int64 tensor)."""
    if isinstance(number, fx.Node):
        kinds = {bool: torch.bool, int: torch.int64, float: torch.float64}
        return kinds[type(_sample(number))] == dtype
    if not isinstance(number, int | float):
        return False
    if dtype.is_floating_point:
        return torch.tensor(float(number), dtype=torch.float32).to(dtype).item() == number
    if dtype == torch.bool:
        return number in (0, 1)
    info = torch.iinfo(dtype)
    return isinstance(number, int) and info.min <= number <= info.max


def compared(cx: RuleContext, target: Any, operands: list[Any]) -> TypedValue:
    """The node's comparison `target` of two operands; `==` as `not (a != b)` (torch-mlir
    folds `eq.Tensor(x, x)` to true, false on a NaN lane)."""
    name, meta = cx.node.name, cx.result_meta
    if target != aten.eq.Tensor:
        return TypedValue(cx.emit_torch_op(name, target, operands, {}, meta), meta)
    differs = TypedValue(cx.emit_torch_op(f"{name}_ne", aten.ne.Tensor, operands, {}, meta), meta)
    return cx.torch_call(name, aten.logical_not.default, differs)


@lowers(aten.reciprocal.default)
def reciprocal(cx: RuleContext) -> Value:
    """1 / x as aten.div, which gives inf at 0 as PyTorch does.

    torch-mlir's reciprocal asserts x != 0 at run time, and the assertion aborts the user's
    process (`1.0 / x` in a kernel is a reciprocal once Helion has decomposed it)."""
    node = cx.node
    args, _ = restored_args(node)
    result = cx.result_meta
    x = as_tensor(cx, f"{node.name}_x", args[0], result)
    one = as_tensor(cx, f"{node.name}_one", 1.0, result)
    return cx.torch_call(node.name, aten.div.Tensor, one, x).value


@lowers(aten.hypot.default)
def hypot(cx: RuleContext) -> Value:
    """torch.aten.sqrt(a * a + b * b), in f32 for f16/bf16 (one rounding, as eager's single
    op): torch-mlir has no hypot. |a|, |b| above ~1e19 overflow where eager's does not."""
    node = cx.node
    args, _ = restored_args(node)
    dtype = node.meta["val"].dtype
    a, b = (
        cx.convert(cx.typed(arg), accumulate_dtype(dtype), f"{node.name}_in{i}")
        for i, arg in enumerate(args[:2])
    )
    squares = [
        cx.torch_call(f"{node.name}_sq{i}", aten.mul.Tensor, t, t) for i, t in enumerate((a, b))
    ]
    root = cx.torch_call(
        f"{node.name}_root",
        aten.sqrt.default,
        cx.torch_call(f"{node.name}_sum", aten.add.Tensor, *squares),
    )
    return cx.convert(root, dtype, node.name).value


# Integer types of the same width as a float type: its bits, for the sign bit.
FLOAT_BITS = {"f16": "i16", "bf16": "i16", "f32": "i32", "f64": "i64"}


@lowers(aten.signbit.default)
def signbit(cx: RuleContext) -> Value:
    """linalg.generic of arith.bitcast + cmpi slt 0 (set for -0.0 and negative NaNs too);
    torch-mlir's decomposition leaves a dtype constant torch-to-linalg cannot lower."""
    node = cx.node
    args, _ = restored_args(node)
    return sign_bit(cx, node.name, cx.typed(args[0])).value


@lowers(aten.copysign.Tensor, aten.copysign.Scalar)
def copysign(cx: RuleContext) -> Value:
    """torch.aten.where(signbit(other), -|self|, |self|) in the result dtype."""
    node = cx.node
    args, _ = restored_args(node)
    result = cx.meta(node)
    magnitude = cx.torch_call(
        f"{node.name}_abs", aten.abs.default, as_tensor(cx, f"{node.name}_self", args[0], result)
    )
    negative = cx.torch_call(f"{node.name}_neg", aten.neg.default, magnitude)
    sign = sign_bit(cx, f"{node.name}_sign", as_tensor(cx, f"{node.name}_other", args[1], result))
    return cx.torch_call(node.name, aten.where.self, sign, negative, magnitude).value


def sign_bit(cx: RuleContext, name: str, x: TypedValue) -> TypedValue:
    """An i1 tensor: x's sign bit (x < 0 for integers)."""
    if not x.meta.dtype.is_floating_point:
        return cx.torch_call(name, aten.lt.Scalar, x, 0)
    empty = empty_like(cx, f"{name}_empty", fake_empty(x.meta, list(x.meta.shape), torch.bool), x)
    meta, ty, elt = empty.meta, empty.value.type, element_type(x.value.type)
    rank = x.meta.dim()
    b = cx.builder
    ssa = b.fresh(name)
    item, out, bits, zero, negative = (
        b.fresh(f"{name}_{part}") for part in ("in", "out", "bits", "zero", "neg")
    )
    body = (
        f"{bits} = arith.bitcast {item} : {elt} to {FLOAT_BITS[elt]}",
        f"{zero} = arith.constant 0 : {FLOAT_BITS[elt]}",
        f"{negative} = arith.cmpi slt, {bits}, {zero} : {FLOAT_BITS[elt]}",
        f"linalg.yield {negative} : i1",
    )
    maps = (identity_map(rank), identity_map(rank))
    args = ((item, elt), (out, "i1"))
    b.generic(
        ssa, GenericOp(rank, maps, ((x.value.ssa, x.value.type),), empty.value.ssa, ty, args, body)
    )
    return TypedValue(Value(ssa, ty), meta)


@lowers(aten.addcmul.default)
def addcmul(cx: RuleContext) -> Value:
    """`self + value * t1 * t2` as eager's kernel: `fma(value * t1, t2, self)`, in f32 for
    f16/bf16 and rounded once (torch.lerp with a tensor weight traces to addcmul).
    torch-mlir's `self + value * (t1 * t2)` in the dtype differed from eager in 20-30% of
    the lanes, in f32 too."""
    if not cx.result_meta.dtype.is_floating_point:
        return cx.aten_compute()
    base, first, second = scaled_operands(cx)
    return fused_multiply_add(cx, cx.node.name, first, second, base)


@lowers(aten.addcdiv.default)
def addcdiv(cx: RuleContext) -> Value:
    """`self + value * t1 / t2` in eager's order, `(value * t1) / t2 + self`, in f32 for
    f16/bf16 and rounded once."""
    if not cx.result_meta.dtype.is_floating_point:
        return cx.aten_compute()
    name = cx.node.name
    base, first, second = scaled_operands(cx)
    quotient = cx.torch_call(f"{name}_quotient", aten.div.Tensor, first, second)
    total = cx.torch_call(f"{name}_wide", aten.add.Tensor, base, quotient)
    return cx.convert(total, cx.result_meta.dtype, name).value


def scaled_operands(cx: RuleContext) -> tuple[TypedValue, TypedValue, TypedValue]:
    """addcmul's or addcdiv's self, `value * tensor1` and tensor2, in the computing dtype."""
    node = cx.node
    args, kwargs = restored_args(node)
    base, first, second = (wide_operand(cx, f"{node.name}_{i}", a) for i, a in enumerate(args[:3]))
    value = kwargs.get("value", args[3] if len(args) > 3 else 1)
    if value != 1:
        scale = as_tensor(cx, f"{node.name}_value", value, first.meta)
        first = cx.torch_call(f"{node.name}_scaled", aten.mul.Tensor, first, scale)
    return base, first, second


def wide_operand(cx: RuleContext, name: str, arg: Any) -> TypedValue:
    """An operand of a pointwise node in its computing dtype (f32 for f16/bf16), expanded to
    the node's shape."""
    result = cx.result_meta
    wide = fake_empty(result, [], accumulate_dtype(result.dtype))
    operand = as_tensor(cx, name, aligned_by_tile(cx, arg), wide)
    shape = list(result.shape)
    if len(operand.meta.shape) == len(shape) and all(map(_same, operand.meta.shape, shape)):
        return operand
    return cx.torch_call(f"{name}_expanded", aten.expand.default, operand, shape)


def fused_multiply_add(
    cx: RuleContext, name: str, a: TypedValue, b: TypedValue, c: TypedValue
) -> Value:
    """`a * b + c` rounded once (math.fma in a linalg.generic), converted to the node's
    dtype; the operands of the node's shape, of one float type."""
    result = cx.result_meta
    out = empty_like(cx, f"{name}_empty", result, c)
    rank, elt, out_elt = result.dim(), element_type(c.value.type), element_type(out.value.type)
    builder = cx.builder
    lanes = [builder.fresh(f"{name}_{part}") for part in ("a", "b", "c", "out", "fma", "rounded")]
    body = [f"{lanes[4]} = math.fma {lanes[0]}, {lanes[1]}, {lanes[2]} : {elt}"]
    if out_elt != elt:
        body.append(f"{lanes[5]} = arith.truncf {lanes[4]} : {elt} to {out_elt}")
    body.append(f"linalg.yield {lanes[5] if out_elt != elt else lanes[4]} : {out_elt}")
    ssa = builder.fresh(name)
    op = GenericOp(
        rank,
        tuple(identity_map(rank) for _ in range(4)),
        tuple((v.value.ssa, v.value.type) for v in (a, b, c)),
        out.value.ssa,
        out.value.type,
        (*((lane, elt) for lane in lanes[:3]), (lanes[3], out_elt)),
        tuple(body),
    )
    builder.generic(ssa, op)
    return Value(ssa, out.value.type)


# Powers eager computes as roots (its pow kernel's special cases; not in float16, where it
# calls pow).
ROOTS = {0.5: aten.sqrt.default, -0.5: aten.rsqrt.default}


@lowers(aten.pow.Tensor_Scalar)
def integer_pow(cx: RuleContext) -> Value:
    """On integer tensors: torch.aten.mul by repeated squaring (torch-to-linalg has no
    integer pow); a float result pows the input cast to it. On floats, `x ** 0.5` and
    `x ** -0.5` are sqrt and rsqrt where eager's are (nan at -inf, where C's pow gives inf
    and 0); other float powers unchanged."""
    node = cx.node
    args, _ = restored_args(node)
    x, exponent, result = cx.typed(args[0]), args[1], cx.meta(node)
    if x.meta.dtype in (torch.float32, torch.float64, torch.bfloat16) and exponent in ROOTS:
        return cx.torch_call(node.name, ROOTS[exponent], x).value
    if x.meta.dtype.is_floating_point or x.meta.dtype == torch.bool:
        return cx.aten_compute()
    if result.dtype.is_floating_point:
        return cx.torch_call(
            node.name, aten.pow.Tensor_Scalar, cx.convert(x, result.dtype, node.name), exponent
        ).value
    if not isinstance(exponent, int) or exponent < 0:
        raise LoweringError(
            node,
            f"an integer tensor to the power {exponent!r} needs a non-negative integer literal",
        )
    return power_by_squaring(cx, node.name, x, exponent).value


def power_by_squaring(cx: RuleContext, name: str, x: TypedValue, exponent: int) -> TypedValue:
    """x ** exponent with ceil(log2) squarings and a multiply per set bit (wrapping as
    eager does)."""
    product = cx.torch_call(f"{name}_one", aten.ones_like.default, x)
    square = x
    while exponent:
        if exponent & 1:
            product = cx.torch_call(f"{name}_acc", aten.mul.Tensor, product, square)
        exponent >>= 1
        if exponent:
            square = cx.torch_call(f"{name}_sq", aten.mul.Tensor, square, square)
    return product


@lowers(aten.bmm.dtype)
def bmm_out_dtype(cx: RuleContext) -> Value:
    """torch.aten.bmm on operands cast to the out dtype (torch-mlir has no bmm.dtype)."""
    node = cx.node
    out_dtype = node.meta["val"].dtype
    lhs = cx.convert(cx.typed(node.args[0]), out_dtype, f"{node.name}_lhs")
    rhs = cx.convert(cx.typed(node.args[1]), out_dtype, f"{node.name}_rhs")
    return cx.torch_call(node.name, aten.bmm.default, lhs, rhs).value


def schema_args(node: fx.Node) -> dict[str, Any]:
    """The op's arguments by schema name, defaults filled in."""
    schema = node.target._schema
    args = {a.name: a.default_value for a in schema.arguments if a.has_default_value()}
    args.update(zip((a.name for a in schema.arguments), node.args))
    args.update(node.kwargs)
    return args


def extreme(dtype: torch.dtype, largest: bool) -> float | int | bool:
    """The value that never beats a real element: -inf (or the type's min) when picking
    the largest."""
    if dtype == torch.bool:
        return not largest
    if dtype.is_floating_point:
        return float("-inf") if largest else float("inf")
    info = torch.iinfo(dtype)
    return info.min if largest else info.max


@lowers(aten.topk.default)
def topk(cx: RuleContext) -> list[Value]:
    """scf.for over k: amax (amin) of the elements not yet taken, the first index holding it
    (amin of masked positions), both written with tensor.insert_slice. Ties go to the lower
    index. torch-mlir's own form, tm_tensor.sort, does not bufferize on CPU."""
    node = cx.node
    args = schema_args(node)
    x = cx.typed(args["self"])
    dim, largest = args["dim"] % x.meta.dim(), bool(args["largest"])
    k = args["k"]
    upper = cx.index_value(k) if isinstance(k, fx.Node) else cx.builder.index(k)
    positions = axis_positions(cx, f"{node.name}_pos", x, dim)
    available = tile_lanes(
        cx, f"{node.name}_all", args["self"].meta["val"]
    )  # padding is never taken
    if available is None:
        available = cx.torch_call(f"{node.name}_all", aten.ones_like.default, x, dtype=torch.bool)
    pick = aten.amax.default if largest else aten.amin.default
    fill = as_tensor(cx, f"{node.name}_fill", extreme(x.meta.dtype, largest), x.meta)
    past_end = as_tensor(cx, f"{node.name}_past_end", torch.iinfo(torch.int64).max, positions.meta)

    def body(i: str, carried: list[TypedValue]) -> list[TypedValue]:
        values, indices, avail = carried
        candidates = cx.torch_call(f"{node.name}_cand", aten.where.self, avail, x, fill)
        best = cx.torch_call(f"{node.name}_best", pick, candidates, [dim], True)
        ties = cx.torch_call(f"{node.name}_ties", aten.eq.Tensor, candidates, best)
        hits = cx.torch_call(f"{node.name}_hits", aten.logical_and.default, avail, ties)
        where = cx.torch_call(f"{node.name}_where", aten.where.self, hits, positions, past_end)
        first = cx.torch_call(f"{node.name}_first", aten.amin.default, where, [dim], True)
        others = cx.torch_call(f"{node.name}_others", aten.ne.Tensor, positions, first)
        return [
            insert_along(cx, values, best, dim, i, f"{node.name}_values"),
            insert_along(cx, indices, first, dim, i, f"{node.name}_indices"),
            cx.torch_call(f"{node.name}_left", aten.logical_and.default, avail, others),
        ]

    inits = [
        empty_like(cx, f"{node.name}_{part}_init", meta, x, {dim: upper})
        for part, meta in zip(("values", "indices"), cx.meta(node))
    ]
    results = cx.emit_scf_for(node.name, cx.builder.index(0), upper, [*inits, available], body)
    return [r.value for r in results[:2]]


def axis_positions(cx: RuleContext, name: str, x: TypedValue, dim: int) -> TypedValue:
    """0..n-1 along `dim` as i64, shaped to broadcast against x ([n, 1, ...])."""
    positions = arange(
        cx, name, cx.builder.index(0), dim_size(cx, x, dim), x.meta.shape[dim], x.meta
    )
    for _ in range(x.meta.dim() - 1 - dim):
        positions = cx.torch_call(f"{name}_col", aten.unsqueeze.default, positions, -1)
    return positions


def empty_like(
    cx: RuleContext,
    name: str,
    meta: torch.Tensor,
    x: TypedValue,
    sizes: dict[int, str] | None = None,
) -> TypedValue:
    """tensor.empty of meta's type; a dynamic dim takes `sizes[d]`, else x's size along d."""
    ty = mlir_type(meta)
    sizes = sizes or {}
    dynamic = [
        sizes[d] if d in sizes else cx.tensor_dim(x.value, d)
        for d, s in enumerate(tensor_dims(ty))
        if s == "?"
    ]
    ssa = cx.builder.fresh(name)
    cx.builder.empty(ssa, dynamic, ty)
    return TypedValue(Value(ssa, ty), meta)


@lowers(aten.cat.default)
def cat(cx: RuleContext) -> Value:
    """Along a dim holding tile padding: the in-range lanes of each input, one after the
    other (tensor.insert_slice at running offsets), in a zero-filled block-shaped result,
    as eager's cat of the unpadded tensors; otherwise torch.aten.cat."""
    node = cx.node
    args, _ = restored_args(node)
    result = cx.meta(node)
    dim = (args[1] if len(args) > 1 else 0) % result.dim()
    bounds = [
        next((b for b in cx.masked_dims(t.meta["val"]) if b.dim == dim), None) for t in args[0]
    ]
    if all(bound is None for bound in bounds):
        return cx.aten_compute()
    if any(bound is not None and bound.parent is not None for bound in bounds):
        raise LoweringError(node, "concatenating along a jagged tile dim is not supported")
    out = TypedValue(
        emit_full(cx, f"{node.name}_zeros", list(result.shape), 0, result.dtype, mlir_type(result)),
        result,
    )
    offset: str = cx.builder.index(0)
    for i, (tensor, bound) in enumerate(zip(args[0], bounds)):
        piece = cx.convert(cx.typed(tensor), result.dtype, f"{node.name}_in{i}")
        size = cx.as_index(bound.size) if bound is not None else dim_size(cx, piece, dim)
        out = place_along(cx, out, piece, dim, offset, size, f"{node.name}_{i}")
        offset = cx.builder.index_op("arith.addi", offset, size, f"{node.name}_offset")
    return out.value


def place_along(
    cx: RuleContext,
    dest: TypedValue,
    piece: TypedValue,
    dim: int,
    offset: str,
    size: str,
    name: str,
) -> TypedValue:
    """dest with piece's first `size` lanes along `dim` written at `offset` along it."""
    b = cx.builder
    dims = tensor_dims(piece.value.type)
    sizes = [
        size if d == dim else (s if s != "?" else cx.tensor_dim(piece.value, d))
        for d, s in enumerate(dims)
    ]
    part_dims = "".join(("?" if d == dim else s) + "x" for d, s in enumerate(dims))
    part_type = f"tensor<{part_dims}{element_type(piece.value.type)}>"
    strides = ["1"] * len(dims)
    part, ssa = b.fresh(f"{name}_part"), b.fresh(name)
    where = slice_operands(["0"] * len(dims), sizes, strides)
    b.extract_slice(part, piece.value.ssa, piece.value.type, where, part_type)
    offsets = [offset if d == dim else "0" for d in range(len(dims))]
    where = slice_operands(offsets, sizes, strides)
    b.insert_slice(ssa, part, part_type, dest.value.ssa, dest.value.type, where)
    return TypedValue(Value(ssa, dest.value.type), dest.meta)
