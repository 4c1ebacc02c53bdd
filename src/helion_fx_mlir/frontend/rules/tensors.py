"""Rules for values that need no loop or memory: host tensors, symbols, aliases, fills, views."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from helion.language import _tracing_ops, creation_ops, random_ops, view_ops
from torch import fx

from helion_fx_mlir.errors import HelionMLIRError, LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.emitter import (
    GenericOp,
    format_scalar,
    identity_map,
    torch_dtype_to_mlir_element_type,
)
from helion_fx_mlir.frontend.rolled_reductions import ROLLED_EXTRA_TARGETS
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.signature import RNG_SEEDS
from helion_fx_mlir.frontend.stripped_args import ORIGINAL_ARGS, restored_args
from helion_fx_mlir.frontend.values import (
    HALVES,
    HostTensorRef,
    LaneBound,
    TypedValue,
    Value,
    element_type,
    mlir_type,
    tensor_dims,
)


@lowers(_tracing_ops._host_tensor)
def host_tensor(cx: RuleContext) -> HostTensorRef:
    """The func argument (the tensor's current SSA value at each load/store)."""
    node = cx.node
    return HostTensorRef(node.args[0])


@lowers(_tracing_ops._get_symnode, torch.ops.aten.sym_size.int)
def symbolic(cx: RuleContext) -> None:
    """Nothing at the node: resolved where used (tile size, extent, block size, scalar arg)."""
    return


@lowers(_tracing_ops._inductor_lowering_extra)
def lowering_extra(cx: RuleContext) -> Value | None:
    """torch.aten.sum.dim_IntList of the chunk when a rolled loop yields a reduction's
    partial (a mean's sum; a var's mean, then its squared deviations), else nothing.

    The extra buffer of a multi-buffer Inductor lowering; in a persistent reduction the op
    reading it gets its stripped operand back instead, so nothing is emitted."""
    node = cx.node
    orig = node.meta.get("orig_node")
    leaves_loop = any(user.op == "output" for user in node.users)
    if not leaves_loop or orig is None or orig.target not in ROLLED_EXTRAS:
        return None
    return ROLLED_EXTRAS[orig.target](cx, node, orig)


def _mean_partial(cx: RuleContext, node: fx.Node, orig: fx.Node) -> Value:
    """The chunk's sum; mean.dim divides the accumulated sum by the count."""
    keepdim = orig.args[2] if len(orig.args) > 2 else False
    x = cx.typed(node.args[0][0])
    return _partial_sum(cx, node, node.name, x, orig.args[1], keepdim).value


def _partial_sum(
    cx: RuleContext, node: fx.Node, name: str, x: TypedValue, dims: Any, keepdim: bool
) -> TypedValue:
    """A chunk's sum in the extra buffer's dtype: Helion keeps an f16/bf16 mean's or var's
    partials in f32, as eager accumulates them."""
    dtype = node.meta["val"].dtype
    widen = {} if dtype == x.meta.dtype else {"dtype": dtype}
    return cx.torch_call(name, torch.ops.aten.sum.dim_IntList, x, dims, keepdim, **widen)


def _var_partial(cx: RuleContext, node: fx.Node, orig: fx.Node) -> Value:
    """Two passes: the chunk's share of the mean (its sum / count), then the chunk's sum of
    squared deviations from that mean; var.correction divides the latter by count - correction."""
    source, *mean = node.args[0]
    x = cx.typed(source)
    dims = reduced_dims(orig, x.meta.dim())
    keepdim = node.meta["val"].dim() == x.meta.dim()
    if not mean:
        total = _partial_sum(cx, node, f"{node.name}_sum", x, dims, keepdim)
        return divide_by_count(cx, node.name, total, reduced_count(cx, orig), 0).value
    deviation = cx.torch_call(f"{node.name}_dev", torch.ops.aten.sub.Tensor, x, cx.typed(mean[0]))
    deviation = masked_to_zero(cx, f"{node.name}_dev", deviation, source.meta["val"], dims)
    square = cx.torch_call(f"{node.name}_sq", torch.ops.aten.mul.Tensor, deviation, deviation)
    return _partial_sum(cx, node, node.name, square, dims, keepdim).value


# Reductions whose rolled form yields extra buffers of chunk partials (accumulated with add).
ROLLED_EXTRAS: dict[Any, Any] = {
    torch.ops.aten.mean.dim: _mean_partial,
    torch.ops.aten.var.correction: _var_partial,
}
assert ROLLED_EXTRAS.keys() == ROLLED_EXTRA_TARGETS


def reduced_dims(node: fx.Node, rank: int) -> list[int]:
    """The dims a mean/var reduces (all of them when `dim` is None)."""
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    return list(range(rank)) if dims is None else [d % rank for d in dims]


def reduced_count(cx: RuleContext, node: fx.Node) -> int | str:
    """How many elements a rolled mean/var reduces: the recorded input's extents over its
    dims, an int, or an index value when one is dynamic (static_shapes=False)."""
    recorded = node.meta.get(ORIGINAL_ARGS)
    if not recorded or not isinstance(recorded[0], fx.Node):
        raise LoweringError(
            node, "the input of this reduction was stripped before helion_fx_mlir recorded it"
        )
    shape = recorded[0].meta["val"].shape
    extents = [cx.extent(shape[d]) for d in reduced_dims(node, len(shape))]
    count: int | str = math.prod(e for e in extents if isinstance(e, int))
    for extent in (cx.index_value(e) for e in extents if not isinstance(e, int)):
        count = (
            extent
            if count == 1
            else cx.builder.index_op("arith.muli", cx.as_index(count), extent, f"{node.name}_count")
        )
    return count


def divide_by_count(
    cx: RuleContext, name: str, x: TypedValue, count: int | str, minus: int
) -> TypedValue:
    """x / max(count - minus, 0), for a count known statically or only at run time."""
    if isinstance(count, int):
        return cx.torch_call(name, torch.ops.aten.div.Scalar, x, float(max(count - minus, 0)))
    return cx.torch_call(
        name, torch.ops.aten.div.Tensor, x, count_tensor(cx, f"{name}_n", count, minus, x)
    )


def _rounded(cx: RuleContext, node: fx.Node, value: TypedValue, index: int | None = None) -> Value:
    """A mean's or variance's value in the node's dtype: computed in f32 for f16/bf16
    inputs, as eager does, and rounded once here."""
    val = node.meta["val"]
    dtype = (val if index is None else val[index]).dtype
    return cx.convert(value, dtype, node.name).value


def _rolled_result(cx: RuleContext, node: fx.Node, slot: int) -> fx.Node | None:
    """The extra buffer a rolled reduction accumulated into `_extra_args[slot]`, if any."""
    extra = node.kwargs.get("_extra_args") or []
    if (
        node.args[0] is not None
        or len(extra) <= slot
        or not isinstance(cx.bound(extra[slot]), Value)
    ):
        return None
    return extra[slot]


@lowers(torch.ops.aten.mean.dim, torch.ops.aten.mean.default)
def mean_dim(cx: RuleContext) -> Value:
    """torch.aten.mean.dim; over padded tile dims, the sum of the in-range lanes / their
    count; after a rolled reduction, the accumulated sum / element count; f16/bf16 in f32,
    rounded once."""
    node = cx.node
    total = _rolled_result(cx, node, 0)
    if total is not None:
        mean = divide_by_count(cx, node.name, cx.typed(total), reduced_count(cx, node), 0)
        return _rounded(cx, node, mean)
    args, _ = restored_args(node)  # persistent: the stripped input is restored
    own = _own_reduction(cx, node, args[0])
    if own is None:
        return cx.aten_compute()
    x, dims, count = own
    keepdim = len(args) > 2 and bool(args[2])
    total = cx.torch_call(f"{node.name}_sum", torch.ops.aten.sum.dim_IntList, x, dims, keepdim)
    mean = cx.torch_call(
        node.name,
        torch.ops.aten.div.Tensor,
        total,
        count_tensor(cx, node.name, count, 0, total),
    )
    return _rounded(cx, node, mean)


@lowers(torch.ops.aten.var.correction)
def var_correction(cx: RuleContext) -> Value:
    """torch.aten.var.correction; over padded tile dims, two passes over the in-range
    lanes; after a rolled reduction, the accumulated squared deviations / (count -
    correction); f16/bf16 in f32, rounded once."""
    node = cx.node
    correction = node.kwargs.get("correction")
    correction = 1 if correction is None else correction
    squares = _rolled_result(cx, node, 1)
    if squares is not None:
        var = divide_by_count(cx, node.name, cx.typed(squares), reduced_count(cx, node), correction)
        return _rounded(cx, node, var)
    args, kwargs = restored_args(node)  # persistent: the stripped input is restored
    own = _own_reduction(cx, node, args[0])
    if own is None:
        return cx.aten_compute()
    x, dims, count = own
    var = _variance(
        cx, node.name, x, dims, count, correction, bool(kwargs.get("keepdim")), args[0].meta["val"]
    )
    return _rounded(cx, node, var)


@lowers(torch.ops.aten.var_mean.correction)
def var_mean_correction(cx: RuleContext) -> Any:
    """torch.aten.var_mean.correction; over padded tile dims, var.correction's two passes
    and the mean of the in-range lanes (a tuple: its getitems pick them); f16/bf16 in f32,
    rounded once."""
    node = cx.node
    args, kwargs = restored_args(node)
    own = _own_reduction(cx, node, args[0])
    if own is None:
        return cx.aten_compute()
    x, dims, count = own
    correction = 1 if kwargs.get("correction") is None else kwargs["correction"]
    keepdim = bool(kwargs.get("keepdim"))
    var = _variance(
        cx, f"{node.name}_var", x, dims, count, correction, keepdim, args[0].meta["val"]
    )
    total = cx.torch_call(f"{node.name}_total", torch.ops.aten.sum.dim_IntList, x, dims, keepdim)
    mean = cx.torch_call(
        f"{node.name}_mean",
        torch.ops.aten.div.Tensor,
        total,
        count_tensor(cx, node.name, count, 0, total),
    )
    return (_rounded(cx, node, var, 0), _rounded(cx, node, mean, 1))


def _variance(
    cx: RuleContext,
    name: str,
    x: TypedValue,
    dims: list[int],
    count: str,
    correction: float,
    keepdim: bool,
    sym_val: Any,
) -> TypedValue:
    """The variance of x's in-range lanes over `dims` (padded lanes 0): two passes."""
    total = cx.torch_call(f"{name}_sum", torch.ops.aten.sum.dim_IntList, x, dims, True)
    mean = cx.torch_call(
        f"{name}_mean",
        torch.ops.aten.div.Tensor,
        total,
        count_tensor(cx, f"{name}_n", count, 0, total),
    )
    deviation = cx.torch_call(f"{name}_dev", torch.ops.aten.sub.Tensor, x, mean)
    deviation = masked_to_zero(cx, f"{name}_dev", deviation, sym_val, dims)
    square = cx.torch_call(f"{name}_sq", torch.ops.aten.mul.Tensor, deviation, deviation)
    squares = cx.torch_call(f"{name}_sumsq", torch.ops.aten.sum.dim_IntList, square, dims, keepdim)
    divisor = count_tensor(cx, f"{name}_dof", count, correction, squares)
    return cx.torch_call(name, torch.ops.aten.div.Tensor, squares, divisor)


def _own_reduction(
    cx: RuleContext, node: fx.Node, source: Any
) -> tuple[TypedValue, list[int], str] | None:
    """For a mean/var over dims that hold tile padding, or of f16/bf16 (torch-mlir sums
    those in the dtype, eager in f32): the input with padded lanes set to 0, in f32 for
    halves, the reduced dims and the in-range element count (index SSA); else None."""
    if not isinstance(source, fx.Node):
        return None
    x = cx.typed(source)
    dims = reduced_dims(node, x.meta.dim())
    bounds = {bound.dim: bound for bound in cx.masked_dims(source.meta["val"]) if bound.dim in dims}
    if not bounds and x.meta.dtype not in HALVES:
        return None
    if any(bound.parent is not None for bound in bounds.values()):
        raise LoweringError(
            node,
            "a mean or variance over a jagged tile dim is not supported "
            "(rows have their own counts)",
        )
    sizes = {d: bound.size for d, bound in bounds.items()}
    count = cx.builder.index(1)
    for d in dims:
        size = cx.as_index(sizes[d]) if d in sizes else cx.index_value(x.meta.shape[d])
        count = cx.builder.index_op("arith.muli", count, size, f"{node.name}_count")
    x = masked_to_zero(cx, f"{node.name}_in", x, source.meta["val"], dims)
    if x.meta.dtype in HALVES:
        x = cx.convert(x, torch.float32, f"{node.name}_in")
    return x, dims, count


def masked_to_zero(
    cx: RuleContext, name: str, x: TypedValue, sym_val: Any, dims: Sequence[int]
) -> TypedValue:
    """x with the padded lanes of `dims` set to 0 (so sums over them count in-range lanes only)."""
    padded = [bound for bound in cx.masked_dims(sym_val) if bound.dim in dims]
    if not padded:
        return x
    return TypedValue(select_lanes(cx, name, x, padded, 0), x.meta)


def count_tensor(
    cx: RuleContext, name: str, count: str, minus: float, like: TypedValue
) -> TypedValue:
    """max(count - minus, 0) as a 0-d float tensor (f64 for f64 values, else f32)."""
    b = cx.builder
    ty = "f64" if like.meta.dtype == torch.float64 else "f32"
    as_int, as_float, ssa = (
        b.fresh(f"{name}_i64"),
        b.fresh(f"{name}_{ty}"),
        b.fresh(f"{name}_count"),
    )
    b.emit(f"{as_int} = arith.index_cast {count} : index to i64")
    b.emit(f"{as_float} = arith.sitofp {as_int} : i64 to {ty}")
    if minus:
        less, floor = b.fresh(f"{name}_less"), b.fresh(f"{name}_dof")
        dof = b.constant(format_scalar(float(minus), torch.float32), ty, "cst")
        b.emit(f"{less} = arith.subf {as_float}, {dof} : {ty}")
        b.emit(f"{floor} = arith.maximumf {less}, {b.constant('0.0', ty, 'cst')} : {ty}")
        as_float = floor
    b.emit(f"{ssa} = tensor.from_elements {as_float} : tensor<{ty}>")
    with like.meta.fake_mode:
        meta = torch.empty([], dtype=torch.float64 if ty == "f64" else torch.float32)
    return TypedValue(Value(ssa, f"tensor<{ty}>"), meta)


@lowers(_tracing_ops._new_var)
def alias(cx: RuleContext) -> Value | None:
    """The operand itself (nothing if the operand is an extra buffer that emitted nothing)."""
    node = cx.node
    source = node.args[0]
    if source.target is _tracing_ops._inductor_lowering_extra and cx.bound(source) is None:
        return None
    return cx.value(source)


@lowers(_tracing_ops._mask_to)
def mask_to(cx: RuleContext) -> Value | None:
    """linalg.generic: `other` on lanes past a tile's extent, else the operand.

    Each padded dim compares linalg.index with its in-range size; with no padded dim the
    operand itself."""
    node = cx.node
    source, other = node.args[0], node.args[1]
    dims = cx.masked_dims(source.meta.get("val"))
    if not dims or cx.bound(source) is None:
        return alias(cx)
    return select_lanes(cx, node.name, cx.typed(source), dims, other)


def select_lanes(
    cx: RuleContext, name: str, typed: TypedValue, bounds: Sequence[LaneBound], other: Any
) -> Value:
    """x where every bound holds for the lane (linalg.index per dim), else `other`."""
    b, x = cx.builder, typed.value
    elt = element_type(x.type)
    rank = len(tensor_dims(x.type))
    fill = b.constant(format_scalar(other, typed.meta.dtype), elt, "cst")
    lane, out = b.fresh(f"{name}_in"), b.fresh(f"{name}_out")
    lanes = [b.fresh(f"{name}_lane{d}") for d in range(rank)]
    body = [
        f"{ssa} = linalg.index {d} : index"
        for d, ssa in enumerate(lanes)
        if any(d == bound.dim or d in bound.parent_dims for bound in bounds)
    ]
    keep = lane_condition(cx, name, bounds, lanes, body)
    picked = b.fresh(f"{name}_lane")
    body.append(f"{picked} = arith.select {keep}, {lane}, {fill} : {elt}")
    ssa = b.fresh(name)
    maps = (identity_map(rank), identity_map(rank))
    args = ((lane, elt), (out, elt))
    body.append(f"linalg.yield {picked} : {elt}")
    b.generic(ssa, GenericOp(rank, maps, ((x.ssa, x.type),), x.ssa, x.type, args, tuple(body)))
    return Value(ssa, x.type)


def lane_condition(
    cx: RuleContext, name: str, bounds: Sequence[LaneBound], lanes: Sequence[str], body: list[str]
) -> str:
    """Append to `body` the i1 computation of 'every bound holds at `lanes`'; return it."""
    b = cx.builder
    conds = []
    for bound in bounds:
        cond = b.fresh(f"{name}_valid{bound.dim}")
        if bound.parent is None:
            body.append(
                f"{cond} = arith.cmpi ult, {lanes[bound.dim]}, {cx.as_index(bound.size)} : index"
            )
        else:
            pos, raw, end = (
                b.fresh(f"{name}_pos{bound.dim}"),
                b.fresh(f"{name}_end{bound.dim}"),
                b.fresh(f"{name}_row_end{bound.dim}"),
            )
            at = ", ".join(lanes[d] for d in bound.parent_dims)
            body += [
                f"{pos} = arith.addi {cx.as_index(bound.offset)}, {lanes[bound.dim]} : index",
                f"{raw} = tensor.extract {bound.parent.ssa}[{at}] : {bound.parent.type}",
                f"{end} = arith.index_cast {raw} : {element_type(bound.parent.type)} to index",
                f"{cond} = arith.cmpi slt, {pos}, {end} : index",
            ]
        conds.append(cond)
    keep = conds[0]
    for cond in conds[1:]:
        both = b.fresh(f"{name}_valid")
        body.append(f"{both} = arith.andi {keep}, {cond} : i1")
        keep = both
    return keep


@lowers(creation_ops.full)
def full(cx: RuleContext) -> Value:
    """tensor.empty + linalg.fill (exact tile sizes)."""
    node = cx.node
    shape, fill, dtype = node.args[0], node.args[1], node.args[2]
    if isinstance(fill, fx.Node):
        return full_of_node(cx, fill, dtype)
    return emit_full(cx, node.name, shape, fill, dtype, mlir_type(cx.meta(node)))


def full_of_node(cx: RuleContext, fill: fx.Node, dtype: torch.dtype) -> Value:
    """The node's result filled with a value known only at run time, expanded: a device
    tensor (`fill[0]` of a tensor) converted to `dtype`, or a scalar argument of the kernel
    (a SymFloat or SymInt) as a 0-d tensor of `dtype`, rounded as eager fills."""
    node = cx.node
    if isinstance(fill.meta.get("val"), torch.Tensor):
        value = cx.torch_call(
            f"{node.name}_fill", torch.ops.prims.convert_element_type.default, fill, dtype
        )
    else:
        with cx.meta(node).fake_mode:
            meta = torch.empty([], dtype=dtype)
        value = TypedValue(
            cx.emit_torch_op(
                f"{node.name}_fill",
                torch.ops.aten.scalar_tensor.default,
                [fill],
                {"dtype": dtype},
                meta,
            ),
            meta,
        )
    shape = list(cx.meta(node).shape)
    return cx.torch_call(node.name, torch.ops.aten.expand.default, value, shape).value


@lowers(torch.ops.aten.full.default)
def aten_full(cx: RuleContext) -> Value:
    """tensor.empty + linalg.fill of a number; a scalar argument's value expanded."""
    node = cx.node
    dtype = node.kwargs.get("dtype") or node.meta["val"].dtype
    if isinstance(node.args[1], fx.Node):  # `torch.full_like(t, s)` of a scalar argument
        return full_of_node(cx, node.args[1], dtype)
    return emit_full(cx, node.name, node.args[0], node.args[1], dtype, mlir_type(cx.meta(node)))


@lowers(random_ops._rng_seed)
def rng_seed(cx: RuleContext) -> Value:
    """Seed slot i of the buffer the host draws at launch (`inductor_prims.seeds`, as in
    Helion's host code and reference mode): a 0-d int64 tensor."""
    node = cx.node
    seeds = cx.tensor_arg(RNG_SEEDS)
    b = cx.builder
    item, ssa = b.fresh(f"{node.name}_item"), b.fresh(node.name)
    slot = b.index(node.args[0])
    b.emit(f"{item} = tensor.extract {cx.host_tensor(RNG_SEEDS).ssa}[{slot}] : {seeds.mlir_type}")
    b.emit(f"{ssa} = tensor.from_elements {item} : tensor<i64>")
    return Value(ssa, "tensor<i64>")


@lowers(torch.ops.prims.iota.default)
def iota(cx: RuleContext) -> Value:
    """`hl.arange`: tensor.generate of start + i * step in every lane (the padded lanes of a
    block-sized one too), converted to the dtype. torch-mlir's own lowering leaves
    `requires_grad` as a constant torch-to-linalg cannot legalize."""
    node = cx.node
    b = cx.builder
    ty = mlir_type(cx.meta(node))
    elt = element_type(ty)
    start, step = (
        cx.index_value(node.kwargs.get(key, default))
        for key, default in (("start", 0), ("step", 1))
    )
    ssa, i, pos, cast = (b.fresh(f"{node.name}{suffix}") for suffix in ("", "_i", "_pos", "_elt"))
    dyn = [cx.index_value(node.args[0])] if tensor_dims(ty)[0] == "?" else []
    body = [
        f"{pos} = affine.apply affine_map<(d0)[s0, s1] -> (s0 + d0 * s1)>({i})[{start}, {step}]",
        *index_to_element(pos, elt, cast),
        f"tensor.yield {cast} : {elt}",
    ]
    b.generate(ssa, dyn, [i], body, ty)
    return Value(ssa, ty)


def pad(
    cx: RuleContext,
    name: str,
    value: Value,
    sizes: Sequence[str | int],
    ty: str,
    lows: Sequence[str | int] = (),
) -> Value:
    """tensor.pad with 0 from `sizes` lanes to `ty`'s width: `lows` lanes before each dim's
    (a shifted tile's lanes before the tensor; none by default), the rest after."""
    b = cx.builder
    elt = element_type(ty)
    lows = list(lows) or [0] * len(sizes)
    highs = []
    for size, width, low in zip(sizes, tensor_dims(ty), lows, strict=True):
        if low == 0 and (isinstance(size, int) or width == "?"):
            highs.append(str(int(width) - size) if isinstance(size, int) and width != "?" else "0")
            continue
        if width == "?":
            raise HelionMLIRError(f"{name}: lanes padded before a dim of dynamic width")
        high = b.index_op("arith.subi", b.index(int(width)), cx.as_index(size), f"{name}_pad")
        if low != 0:
            high = b.index_op("arith.subi", high, cx.as_index(low), f"{name}_pad")
        highs.append(high)
    zero = b.constant(
        "false" if elt == "i1" else "0.0" if elt.startswith(("f", "bf")) else "0", elt, "zero"
    )
    ivs = ", ".join(f"{b.fresh(f'{name}_i{d}')}: index" for d in range(len(highs)))
    ssa = b.fresh(name)
    low_text, high_text = ", ".join(str(low) for low in lows), ", ".join(highs)
    b.emit(
        f"{ssa} = tensor.pad {value.ssa} low[{low_text}] high[{high_text}] {{\n^bb0({ivs}):\n"
        f"  tensor.yield {zero} : {elt}\n}} : {value.type} to {ty}"
    )
    return Value(ssa, ty)


def index_to_element(index: str, elt: str, result: str) -> list[str]:
    """The ops that make `result`, an `elt` scalar, from an index value (as a signed integer)."""
    if elt.startswith(("f", "bf")):
        return [
            f"{result}_i64 = arith.index_cast {index} : index to i64",
            f"{result} = arith.sitofp {result}_i64 : i64 to {elt}",
        ]
    return [f"{result} = arith.index_cast {index} : index to {elt}"]


@lowers(
    torch.ops.aten.empty.memory_format,
    torch.ops.aten.new_empty.default,
    torch.ops.aten.empty_like.default,
)
def aten_empty(cx: RuleContext) -> Value:
    """A tensor made on the device starts at 0, as Triton's does: uninitialized memory
    would make the kernel's numbers depend on what the buffer held before."""
    node = cx.node
    val = node.meta["val"]
    return emit_full(cx, node.name, list(val.shape), 0, val.dtype, mlir_type(cx.meta(node)))


def emit_full(
    cx: RuleContext, name: str, shape: Sequence[Any], fill: Any, dtype: torch.dtype, ty: str
) -> Value:
    """tensor.empty with the exact tile sizes, then linalg.fill with the constant."""
    b = cx.builder
    elt = torch_dtype_to_mlir_element_type(dtype)
    dynamic = [
        cx.index_value(d) for d, dim in zip(shape, tensor_dims(ty), strict=True) if dim == "?"
    ]
    cst = b.constant(format_scalar(fill, dtype), elt, "cst")
    empty = b.fresh(f"{name}_empty")
    b.empty(empty, dynamic, ty)
    ssa = b.fresh(name)
    b.emit(f"{ssa} = linalg.fill ins({cst} : {elt}) outs({empty} : {ty}) -> {ty}")
    return Value(ssa, ty)


@lowers(view_ops.subscript)
def subscript(cx: RuleContext) -> Value:
    """tensor.expand_shape (indexing that inserts unit dims, x[:, None])."""
    node = cx.node
    source, index = cx.value(node.args[0]), node.args[1]
    if any(i is not None and i != slice(None) for i in index):
        raise LoweringError(node, f"subscript {index} is not supported (only ':' and None)")
    return expand_dims(cx, node.name, source, index, mlir_type(cx.meta(node)))


def expand_dims(cx: RuleContext, name: str, source: Value, index: Sequence[Any], ty: str) -> Value:
    """tensor.expand_shape inserting a unit dim at each None of `index` (then a tensor.cast
    to `ty`, since expand_shape keeps a static source dim static)."""
    groups: list[list[int]] = []
    pending: list[int] = []
    for out_dim, idx in enumerate(index):
        if idx is None and not groups:
            pending.append(out_dim)
        elif idx is None:
            groups[-1].append(out_dim)
        else:
            groups.append([*pending, out_dim])
            pending = []
    src_dims = tensor_dims(source.type)
    natural, sizes = [], []
    for out_dim in range(len(index)):
        src_dim = next(i for i, g in enumerate(groups) if out_dim in g)
        if index[out_dim] is None:
            natural.append("1")
            sizes.append("1")
        elif src_dims[src_dim] == "?":
            natural.append("?")
            sizes.append(cx.tensor_dim(source, src_dim))
        else:
            natural.append(src_dims[src_dim])
            sizes.append(src_dims[src_dim])
    expanded = f"tensor<{''.join(d + 'x' for d in natural)}{element_type(ty)}>"
    reassoc = ", ".join(f"[{', '.join(map(str, g))}]" for g in groups)
    ssa = cx.builder.fresh(name if expanded == ty else f"{name}_expanded")
    shape = ", ".join(sizes)
    cx.builder.emit(
        f"{ssa} = tensor.expand_shape {source.ssa} [{reassoc}] output_shape [{shape}] "
        f": {source.type} into {expanded}"
    )
    return cx.coerce(pad_to_block(cx, f"{name}_padded", Value(ssa, expanded), ty), ty)


def pad_to_block(cx: RuleContext, name: str, value: Value, ty: str) -> Value:
    """Static dims shorter than `ty`'s padded to it with 0, the value of masked lanes: Helion
    gives `hl.arange(5)[None, :]` a dim of 8, the block a tile of 5 would have."""
    have, want = tensor_dims(value.type), tensor_dims(ty)
    wider = [
        w if "?" not in (h, w) and int(h) < int(w) else h for h, w in zip(have, want, strict=True)
    ]
    if wider == have:
        return value
    sizes = [int(h) if h != "?" else cx.tensor_dim(value, d) for d, h in enumerate(have)]
    return pad(
        cx, name, value, sizes, f"tensor<{''.join(d + 'x' for d in wider)}{element_type(ty)}>"
    )
