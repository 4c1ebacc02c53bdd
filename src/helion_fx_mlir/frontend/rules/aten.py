"""Rules for ATen ops torch-mlir cannot lower as Helion writes them: each is rewritten
into ATen ops it can lower (every other ATen op goes through torch-mlir unchanged)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import fx

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.rules.compute import accumulate_dtype, dim_size, insert_along
from helion_fx_mlir.frontend.rules.memory import arange, fake_empty, tile_lanes
from helion_fx_mlir.frontend.rules.tensors import emit_full
from helion_fx_mlir.frontend.stripped_args import restored_args
from helion_fx_mlir.frontend.values import TypedValue, Value, element_type, mlir_type, tensor_dims

if TYPE_CHECKING:
    from helion_fx_mlir.frontend.visitor import IRVisitor

aten = torch.ops.aten

# torch-mlir imports the Scalar operand of these as a torch constant that torch-to-linalg
# cannot legalize; the overload taking two tensors lowers.
SCALAR_OPERAND_FORMS: dict[Any, Any] = {
    aten.remainder.Scalar_Tensor: aten.remainder.Tensor,
    aten.fmod.Scalar: aten.fmod.Tensor,
    aten.bitwise_and.Scalar_Tensor: aten.bitwise_and.Tensor,
    aten.bitwise_or.Scalar: aten.bitwise_or.Tensor,
    aten.bitwise_or.Scalar_Tensor: aten.bitwise_or.Tensor,
    aten.bitwise_xor.Scalar: aten.bitwise_xor.Tensor,
    aten.bitwise_xor.Scalar_Tensor: aten.bitwise_xor.Tensor,
}


@lowers(*SCALAR_OPERAND_FORMS)
def scalar_operand(v: IRVisitor, node: fx.Node) -> Value:
    """The .Tensor overload, the scalar a 0-d torch.aten.scalar_tensor of the result dtype."""
    args, kwargs = restored_args(node)
    return tensor_form(v, node, SCALAR_OPERAND_FORMS[node.target], args, kwargs)


def tensor_form(
    v: IRVisitor, node: fx.Node, target: Any, args: list[Any], kwargs: dict[str, Any]
) -> Value:
    """`target` on the node's first two operands as tensors of the result dtype (scalars as
    0-d tensors), with its remaining arguments unchanged."""
    result = v.val(node)
    operands = [
        as_tensor(v, f"{node.name}_operand{i}", arg, result) for i, arg in enumerate(args[:2])
    ]
    return v.torch_call(node.name, target, *operands, *args[2:], **kwargs).value


# torch-mlir crashes the process converting a Python scalar to an 8-bit integer element
# type (convertScalarToDtype without the original dtype); on int8/uint8 tensors these ops
# take the scalar as a 0-d tensor instead. Other dtypes go through torch-mlir unchanged.
BYTE_SCALAR_FORMS: dict[Any, Any] = {
    aten.add.Scalar: aten.add.Tensor,
    aten.add.Tensor: aten.add.Tensor,
    aten.sub.Scalar: aten.sub.Tensor,
    aten.sub.Tensor: aten.sub.Tensor,
    aten.mul.Scalar: aten.mul.Tensor,
    aten.mul.Tensor: aten.mul.Tensor,
    aten.remainder.Scalar: aten.remainder.Tensor,
}
BYTES = (torch.int8, torch.uint8)


@lowers(*BYTE_SCALAR_FORMS)
def byte_scalar_operand(v: IRVisitor, node: fx.Node) -> Value:
    """On int8/uint8: the .Tensor overload with the scalar a 0-d torch.aten.scalar_tensor;
    otherwise the op itself through torch-mlir."""
    args, kwargs = restored_args(node)
    if node.meta["val"].dtype not in BYTES or all(_is_tensor(arg) for arg in args[:2]):
        return v.aten_compute(node)
    return tensor_form(v, node, BYTE_SCALAR_FORMS[node.target], args, kwargs)


@lowers(aten.div.Tensor_mode)
def byte_div(v: IRVisitor, node: fx.Node) -> Value:
    """On int8/uint8: torch.aten.div.Tensor_mode in i32, cast back (torch-to-linalg has no
    8-bit integer division; the i32 quotient wraps back as eager's does); else unchanged."""
    result = v.val(node)
    if result.dtype not in BYTES:
        return v.aten_compute(node)
    args, kwargs = restored_args(node)
    wide = fake_empty(result, [], torch.int32)
    operands = [
        as_tensor(v, f"{node.name}_operand{i}", arg, wide) for i, arg in enumerate(args[:2])
    ]
    quotient = v.torch_call(f"{node.name}_i32", aten.div.Tensor_mode, *operands, **kwargs)
    return v.convert(quotient, result.dtype, node.name).value


def _is_tensor(arg: Any) -> bool:
    return isinstance(arg, fx.Node) and isinstance(arg.meta["val"], torch.Tensor)


def as_tensor(v: IRVisitor, name: str, arg: Any, like: torch.Tensor) -> TypedValue:
    """A tensor operand cast to `like`'s dtype, or a scalar (literal or symbol) as a 0-d one."""
    if _is_tensor(arg):
        return v.convert(v.typed(arg), like.dtype, name)
    meta = fake_empty(like, [], like.dtype)
    return TypedValue(
        v.emit_torch_op(name, aten.scalar_tensor.default, [arg], {"dtype": like.dtype}, meta), meta
    )


# clamp with tensor bounds has no torch-to-linalg pattern; maximum/minimum (which also
# propagate NaN from either side, as clamp does) have.
TENSOR_BOUNDS: dict[Any, Any] = {
    aten.clamp_min.Tensor: aten.maximum.default,
    aten.clamp_max.Tensor: aten.minimum.default,
}


@lowers(*TENSOR_BOUNDS)
def clamp_tensor_bound(v: IRVisitor, node: fx.Node) -> Value:
    """torch.aten.maximum (clamp_min) or torch.aten.minimum (clamp_max) of x and the bound."""
    args, _ = restored_args(node)
    return v.torch_call(
        node.name, TENSOR_BOUNDS[node.target], v.typed(args[0]), v.typed(args[1])
    ).value


@lowers(aten.hypot.default)
def hypot(v: IRVisitor, node: fx.Node) -> Value:
    """torch.aten.sqrt(a * a + b * b), in f32 for f16/bf16 (one rounding, as eager's single
    op): torch-mlir has no hypot. |a|, |b| above ~1e19 overflow where eager's does not."""
    args, _ = restored_args(node)
    dtype = node.meta["val"].dtype
    a, b = (
        v.convert(v.typed(arg), accumulate_dtype(dtype), f"{node.name}_in{i}")
        for i, arg in enumerate(args[:2])
    )
    squares = [
        v.torch_call(f"{node.name}_sq{i}", aten.mul.Tensor, t, t) for i, t in enumerate((a, b))
    ]
    root = v.torch_call(
        f"{node.name}_root",
        aten.sqrt.default,
        v.torch_call(f"{node.name}_sum", aten.add.Tensor, *squares),
    )
    return v.convert(root, dtype, node.name).value


# Integer types of the same width as a float type: its bits, for the sign bit.
FLOAT_BITS = {"f16": "i16", "bf16": "i16", "f32": "i32", "f64": "i64"}


@lowers(aten.signbit.default)
def signbit(v: IRVisitor, node: fx.Node) -> Value:
    """linalg.generic of arith.bitcast + cmpi slt 0 (set for -0.0 and negative NaNs too);
    torch-mlir's decomposition leaves a dtype constant torch-to-linalg cannot lower."""
    args, _ = restored_args(node)
    return sign_bit(v, node.name, v.typed(args[0])).value


@lowers(aten.copysign.Tensor, aten.copysign.Scalar)
def copysign(v: IRVisitor, node: fx.Node) -> Value:
    """torch.aten.where(signbit(other), -|self|, |self|) in the result dtype."""
    args, _ = restored_args(node)
    result = v.val(node)
    magnitude = v.torch_call(
        f"{node.name}_abs", aten.abs.default, as_tensor(v, f"{node.name}_self", args[0], result)
    )
    negative = v.torch_call(f"{node.name}_neg", aten.neg.default, magnitude)
    sign = sign_bit(v, f"{node.name}_sign", as_tensor(v, f"{node.name}_other", args[1], result))
    return v.torch_call(node.name, aten.where.self, sign, negative, magnitude).value


def sign_bit(v: IRVisitor, name: str, x: TypedValue) -> TypedValue:
    """An i1 tensor: x's sign bit (x < 0 for integers)."""
    if not x.val.dtype.is_floating_point:
        return v.torch_call(name, aten.lt.Scalar, x, 0)
    empty = empty_like(v, f"{name}_empty", fake_empty(x.val, list(x.val.shape), torch.bool), x)
    meta, ty, elt = empty.val, empty.value.type, element_type(x.value.type)
    rank = x.val.dim()
    dims = ", ".join(f"d{i}" for i in range(rank))
    identity = f"affine_map<({dims}) -> ({dims})>"
    b = v.builder
    ssa = b.fresh(name)
    item, out, bits, zero, negative = (
        b.fresh(f"{name}_{part}") for part in ("in", "out", "bits", "zero", "neg")
    )
    parallel = ", ".join('"parallel"' for _ in range(rank))
    b.emit(
        f"{ssa} = linalg.generic {{indexing_maps = [{identity}, {identity}], iterator_types = [{parallel}]}} "
        f"ins({x.value.ssa} : {x.value.type}) outs({empty.value.ssa} : {ty}) {{\n"
        f"^bb0({item}: {elt}, {out}: i1):\n"
        f"  {bits} = arith.bitcast {item} : {elt} to {FLOAT_BITS[elt]}\n"
        f"  {zero} = arith.constant 0 : {FLOAT_BITS[elt]}\n"
        f"  {negative} = arith.cmpi slt, {bits}, {zero} : {FLOAT_BITS[elt]}\n"
        f"  linalg.yield {negative} : i1\n}} -> {ty}"
    )
    return TypedValue(Value(ssa, ty), meta)


@lowers(aten.pow.Tensor_Scalar)
def integer_pow(v: IRVisitor, node: fx.Node) -> Value:
    """On integer tensors: torch.aten.mul by repeated squaring (torch-to-linalg has no
    integer pow); a float result pows the input cast to it; float inputs are unchanged."""
    args, _ = restored_args(node)
    x, exponent, result = v.typed(args[0]), args[1], v.val(node)
    if x.val.dtype.is_floating_point or x.val.dtype == torch.bool:
        return v.aten_compute(node)
    if result.dtype.is_floating_point:
        return v.torch_call(
            node.name, aten.pow.Tensor_Scalar, v.convert(x, result.dtype, node.name), exponent
        ).value
    if not isinstance(exponent, int) or exponent < 0:
        raise LoweringError(
            node,
            f"an integer tensor to the power {exponent!r} needs a non-negative integer literal",
        )
    return power_by_squaring(v, node.name, x, exponent).value


def power_by_squaring(v: IRVisitor, name: str, x: TypedValue, exponent: int) -> TypedValue:
    """x ** exponent with ceil(log2) squarings and a multiply per set bit (wrapping as eager does)."""
    product = v.torch_call(f"{name}_one", aten.ones_like.default, x)
    square = x
    while exponent:
        if exponent & 1:
            product = v.torch_call(f"{name}_acc", aten.mul.Tensor, product, square)
        exponent >>= 1
        if exponent:
            square = v.torch_call(f"{name}_sq", aten.mul.Tensor, square, square)
    return product


@lowers(aten.bmm.dtype)
def bmm_out_dtype(v: IRVisitor, node: fx.Node) -> Value:
    """torch.aten.bmm on operands cast to the out dtype (torch-mlir has no bmm.dtype)."""
    out_dtype = node.meta["val"].dtype
    lhs = v.convert(v.typed(node.args[0]), out_dtype, f"{node.name}_lhs")
    rhs = v.convert(v.typed(node.args[1]), out_dtype, f"{node.name}_rhs")
    return v.torch_call(node.name, aten.bmm.default, lhs, rhs).value


def schema_args(node: fx.Node) -> dict[str, Any]:
    """The op's arguments by schema name, defaults filled in."""
    schema = node.target._schema
    args = {a.name: a.default_value for a in schema.arguments if a.has_default_value()}
    args.update(zip((a.name for a in schema.arguments), node.args))
    args.update(node.kwargs)
    return args


def extreme(dtype: torch.dtype, largest: bool) -> float | int | bool:
    """The value that never beats a real element: -inf (or the type's min) when picking the largest."""
    if dtype == torch.bool:
        return not largest
    if dtype.is_floating_point:
        return float("-inf") if largest else float("inf")
    info = torch.iinfo(dtype)
    return info.min if largest else info.max


@lowers(aten.topk.default)
def topk(v: IRVisitor, node: fx.Node) -> list[Value]:
    """scf.for over k: amax (amin) of the elements not yet taken, the first index holding it
    (amin of masked positions), both written with tensor.insert_slice. Ties go to the lower
    index. torch-mlir's own form, tm_tensor.sort, does not bufferize on CPU."""
    args = schema_args(node)
    x = v.typed(args["self"])
    dim, largest = args["dim"] % x.val.dim(), bool(args["largest"])
    k = args["k"]
    upper = v.index_value(k) if isinstance(k, fx.Node) else v.builder.index(k)
    positions = axis_positions(v, f"{node.name}_pos", x, dim)
    available = tile_lanes(
        v, f"{node.name}_all", args["self"].meta["val"]
    )  # padding is never taken
    if available is None:
        available = v.torch_call(f"{node.name}_all", aten.ones_like.default, x, dtype=torch.bool)
    pick = aten.amax.default if largest else aten.amin.default
    fill = as_tensor(v, f"{node.name}_fill", extreme(x.val.dtype, largest), x.val)
    past_end = as_tensor(v, f"{node.name}_past_end", torch.iinfo(torch.int64).max, positions.val)

    def body(i: str, carried: list[TypedValue]) -> list[TypedValue]:
        values, indices, avail = carried
        candidates = v.torch_call(f"{node.name}_cand", aten.where.self, avail, x, fill)
        best = v.torch_call(f"{node.name}_best", pick, candidates, [dim], True)
        ties = v.torch_call(f"{node.name}_ties", aten.eq.Tensor, candidates, best)
        hits = v.torch_call(f"{node.name}_hits", aten.logical_and.default, avail, ties)
        where = v.torch_call(f"{node.name}_where", aten.where.self, hits, positions, past_end)
        first = v.torch_call(f"{node.name}_first", aten.amin.default, where, [dim], True)
        others = v.torch_call(f"{node.name}_others", aten.ne.Tensor, positions, first)
        return [
            insert_along(v, values, best, dim, i, f"{node.name}_values"),
            insert_along(v, indices, first, dim, i, f"{node.name}_indices"),
            v.torch_call(f"{node.name}_left", aten.logical_and.default, avail, others),
        ]

    inits = [
        empty_like(v, f"{node.name}_{part}_init", meta, x, {dim: upper})
        for part, meta in zip(("values", "indices"), v.val(node))
    ]
    results = v.emit_scf_for(node.name, v.builder.index(0), upper, [*inits, available], body)
    return [r.value for r in results[:2]]


def axis_positions(v: IRVisitor, name: str, x: TypedValue, dim: int) -> TypedValue:
    """0..n-1 along `dim` as i64, shaped to broadcast against x ([n, 1, ...])."""
    positions = arange(v, name, v.builder.index(0), dim_size(v, x, dim), x.val.shape[dim], x.val)
    for _ in range(x.val.dim() - 1 - dim):
        positions = v.torch_call(f"{name}_col", aten.unsqueeze.default, positions, -1)
    return positions


def empty_like(
    v: IRVisitor, name: str, meta: torch.Tensor, x: TypedValue, sizes: dict[int, str] | None = None
) -> TypedValue:
    """tensor.empty of meta's type; a dynamic dim takes `sizes[d]`, else x's size along d."""
    ty = mlir_type(meta)
    sizes = sizes or {}
    dynamic = [
        sizes[d] if d in sizes else v.tensor_dim(x.value, d)
        for d, s in enumerate(tensor_dims(ty))
        if s == "?"
    ]
    ssa = v.builder.fresh(name)
    v.builder.emit(f"{ssa} = tensor.empty({', '.join(dynamic)}) : {ty}")
    return TypedValue(Value(ssa, ty), meta)


@lowers(aten.cat.default)
def cat(v: IRVisitor, node: fx.Node) -> Value:
    """Along a dim holding tile padding: the in-range lanes of each input, one after the
    other (tensor.insert_slice at running offsets), in a zero-filled block-shaped result,
    as eager's cat of the unpadded tensors; otherwise torch.aten.cat."""
    args, _ = restored_args(node)
    result = v.val(node)
    dim = (args[1] if len(args) > 1 else 0) % result.dim()
    bounds = [
        next((b for b in v.masked_dims(t.meta["val"]) if b.dim == dim), None) for t in args[0]
    ]
    if all(bound is None for bound in bounds):
        return v.aten_compute(node)
    if any(bound is not None and bound.parent is not None for bound in bounds):
        raise LoweringError(node, "concatenating along a jagged tile dim is not supported")
    out = TypedValue(
        emit_full(v, f"{node.name}_zeros", list(result.shape), 0, result.dtype, mlir_type(result)),
        result,
    )
    offset: str = v.builder.index(0)
    for i, (tensor, bound) in enumerate(zip(args[0], bounds)):
        piece = v.convert(v.typed(tensor), result.dtype, f"{node.name}_in{i}")
        size = v.as_index(bound.size) if bound is not None else dim_size(v, piece, dim)
        out = place_along(v, out, piece, dim, offset, size, f"{node.name}_{i}")
        offset = v.emit_index_op("arith.addi", offset, size, f"{node.name}_offset")
    return out.value


def place_along(
    v: IRVisitor, dest: TypedValue, piece: TypedValue, dim: int, offset: str, size: str, name: str
) -> TypedValue:
    """dest with piece's first `size` lanes along `dim` written at `offset` along it."""
    b = v.builder
    dims = tensor_dims(piece.value.type)
    sizes = [
        size if d == dim else (s if s != "?" else v.tensor_dim(piece.value, d))
        for d, s in enumerate(dims)
    ]
    part_type = f"tensor<{''.join(('?' if d == dim else s) + 'x' for d, s in enumerate(dims))}{element_type(piece.value.type)}>"
    strides = ", ".join("1" for _ in dims)
    part, ssa = b.fresh(f"{name}_part"), b.fresh(name)
    zeros = ", ".join("0" for _ in dims)
    b.emit(
        f"{part} = tensor.extract_slice {piece.value.ssa}[{zeros}] [{', '.join(sizes)}] [{strides}] : {piece.value.type} to {part_type}"
    )
    offsets = ", ".join(offset if d == dim else "0" for d in range(len(dims)))
    b.emit(
        f"{ssa} = tensor.insert_slice {part} into {dest.value.ssa}[{offsets}] [{', '.join(sizes)}] [{strides}] : {part_type} into {dest.value.type}"
    )
    return TypedValue(Value(ssa, dest.value.type), dest.val)
