"""Rules for Helion compute ops that are not ATen: dot, reduce, scans, gelu, split/join."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
from helion.language import (
    _gelu_tanh_approx,
    _tracing_ops,
    matmul_ops,
    reduce_ops,
    scan_ops,
    view_ops,
)
from torch import fx

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.emitter import slice_operands
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.values import HALVES, TypedValue, Value, mlir_type, tensor_dims


def accumulate_dtype(dtype: torch.dtype) -> torch.dtype:
    """Dots accumulate low-precision floats in f32 (as tl.dot does); ints and f64 as is."""
    if dtype.is_floating_point and dtype != torch.float64:
        return torch.float32
    return dtype


@lowers(matmul_ops.dot)
def dot(cx: RuleContext) -> Value:
    """torch.aten.mm/bmm on operands cast to the accumulator type, + acc, cast to the result."""
    node = cx.node
    a, b = node.args[0], node.args[1]
    acc = node.args[2] if len(node.args) > 2 else node.kwargs.get("acc")
    result = cx.meta(node)
    compute = accumulate_dtype(result.dtype)
    lhs = cx.convert(cx.typed(a), compute, f"{node.name}_lhs")
    rhs = cx.convert(cx.typed(b), compute, f"{node.name}_rhs")
    mm = torch.ops.aten.mm.default if result.dim() == 2 else torch.ops.aten.bmm.default
    product = cx.torch_call(f"{node.name}_mm", mm, lhs, rhs)
    if acc is not None:
        product = cx.torch_call(
            f"{node.name}_acc",
            torch.ops.aten.add.Tensor,
            cx.convert(cx.typed(acc), compute, node.name),
            product,
        )
    return cx.convert(product, result.dtype, node.name).value


def apply_graph(
    cx: RuleContext, graph_id: int, inputs: list[TypedValue], name: str
) -> list[TypedValue]:
    """Inline a combine function graph on real operands; metas are recomputed from the
    operands, since the helper graph was traced on [1]-shaped stand-ins."""
    values: dict[fx.Node, Any] = {}
    placeholders = iter(inputs)
    for node in cx.graph(graph_id).graph.nodes:
        if node.op == "placeholder":
            values[node] = next(placeholders)
        elif node.op == "output":
            out = node.args[0]
            return [values[n] for n in (out if isinstance(out, (list, tuple)) else [out])]
        elif node.target in (_tracing_ops._new_var, _tracing_ops._mask_to):
            values[node] = values[node.args[0]]
        else:
            args = fx.node.map_arg(node.args, values.__getitem__)
            kwargs = fx.node.map_arg(node.kwargs, values.__getitem__)
            values[node] = cx.torch_call(f"{name}_{node.name}", node.target, *args, **kwargs)
    raise LoweringError(None, f"combine graph {graph_id} has no output")


# A combine graph that is one of these binary ops is the matching torch reduction.
REDUCTIONS: dict[Any, Any] = {
    torch.ops.aten.add.Tensor: torch.ops.aten.sum.dim_IntList,
    torch.ops.aten.maximum.default: torch.ops.aten.amax.default,
    torch.ops.aten.minimum.default: torch.ops.aten.amin.default,
}


# Partial results a custom hl.reduce keeps along a row: one AVX-512 register of f32.
REDUCE_LANES = 16


def single_op(cx: RuleContext, graph_id: int) -> Any:
    """The target of a combine graph that is exactly op(lhs, rhs), else None."""
    nodes = [n for n in cx.graph(graph_id).graph.nodes if n.op == "call_function"]
    placeholders = [n for n in cx.graph(graph_id).graph.nodes if n.op == "placeholder"]
    if len(nodes) == 1 and list(nodes[0].args[:2]) == placeholders:
        return nodes[0].target
    return None


def narrow(
    cx: RuleContext, x: TypedValue, dim: int, index: str, name: str, width: int = 1
) -> TypedValue:
    """x[..., index:index+width, ...] along `dim` (rank kept)."""
    meta = torch.ops.aten.narrow.default(x.meta, dim, 0, width)
    ty = mlir_type(meta)
    offsets = [index if d == dim else "0" for d in range(x.meta.dim())]
    sizes = [
        str(width) if d == dim else (s if s != "?" else cx.tensor_dim(x.value, d))
        for d, s in enumerate(tensor_dims(x.value.type))
    ]
    static = [(str(width) if d == dim else s) for d, s in enumerate(tensor_dims(ty))]
    sizes = [s if st == "?" else st for s, st in zip(sizes, static)]
    ssa = cx.builder.fresh(name)
    where = slice_operands(offsets, sizes, ["1"] * len(offsets))
    cx.builder.extract_slice(ssa, x.value.ssa, x.value.type, where, ty)
    return TypedValue(Value(ssa, ty), meta)


def dim_size(cx: RuleContext, x: TypedValue, dim: int) -> str:
    size = tensor_dims(x.value.type)[dim]
    return cx.tensor_dim(x.value, dim) if size == "?" else cx.builder.index(int(size))


@lowers(reduce_ops._reduce)
def reduce(cx: RuleContext) -> Any:
    """The torch reduction for add/maximum/minimum combines; else an scf.for over the dim
    folding slices with the inlined combine graph."""
    node = cx.node
    graph_id, x, dim, keep_dims = node.args[:4]
    inputs = [cx.typed(n) for n in (x if isinstance(x, (list, tuple)) else [x])]
    dim = dim % inputs[0].meta.dim()
    op = single_op(cx, graph_id)
    if len(inputs) == 1 and op in REDUCTIONS:
        return cx.torch_call(node.name, REDUCTIONS[op], inputs[0], [dim], bool(keep_dims)).value
    parts = _lane_partials(cx, node.name, graph_id, inputs, dim)
    accs = [narrow(cx, t, dim, cx.builder.index(0), f"{node.name}_first") for t in parts]

    def body(i: str, current: list[TypedValue]) -> list[TypedValue]:
        items = [narrow(cx, t, dim, i, f"{node.name}_item") for t in parts]
        return apply_graph(cx, graph_id, [*current, *items], node.name)

    results = cx.emit_scf_for(
        node.name, cx.builder.index(1), dim_size(cx, parts[0], dim), accs, body
    )
    if not keep_dims:
        results = [
            cx.torch_call(f"{node.name}_squeeze", torch.ops.aten.squeeze.dim, r, dim)
            for r in results
        ]
    metas = _metas(cx, node, len(results))
    values = [
        r.value if val is None else cx.coerce(r.value, mlir_type(val))
        for r, val in zip(results, metas)
    ]
    return values if isinstance(x, (list, tuple)) else values[0]


def _lane_partials(
    cx: RuleContext, name: str, graph_id: int, inputs: list[TypedValue], dim: int
) -> list[TypedValue]:
    """Along the last dim, static and two REDUCE_LANES-wide chunks or more: REDUCE_LANES
    partial results, lane j combining elements j, j + REDUCE_LANES, ..., a chunk per step
    (lane-wise code that vectorizes; folding a column of the tile per step read a lane per
    row: an argmax as a tuple reduce ran at 0.2-0.4x eager), a last partial chunk into the
    first lanes. Helion's combine is associative and commutative: the order is free."""
    size = tensor_dims(inputs[0].value.type)[dim]
    if dim != inputs[0].meta.dim() - 1 or size == "?" or int(size) < 2 * REDUCE_LANES:
        return inputs
    b, n = cx.builder, int(size)

    def chunk(c: str, current: list[TypedValue]) -> list[TypedValue]:
        start = b.index_op("arith.muli", c, b.index(REDUCE_LANES), f"{name}_chunk_at")
        items = [narrow(cx, t, dim, start, f"{name}_chunk", REDUCE_LANES) for t in inputs]
        return apply_graph(cx, graph_id, [*current, *items], f"{name}_lanes")

    firsts = [narrow(cx, t, dim, b.index(0), f"{name}_lanes0", REDUCE_LANES) for t in inputs]
    lanes = cx.emit_scf_for(f"{name}_lanes", b.index(1), b.index(n // REDUCE_LANES), firsts, chunk)
    tail = n % REDUCE_LANES
    if not tail:
        return lanes
    heads = [narrow(cx, t, dim, b.index(0), f"{name}_head", tail) for t in lanes]
    rest = [narrow(cx, t, dim, b.index(n - tail), f"{name}_tail", tail) for t in inputs]
    done = apply_graph(cx, graph_id, [*heads, *rest], f"{name}_tail")
    return [
        insert_along(cx, t, d, dim, b.index(0), f"{name}_lanes", tail) for t, d in zip(lanes, done)
    ]


def _metas(cx: RuleContext, node: fx.Node, count: int) -> list[Any]:
    """Result metas; a tuple reduce keeps them on its getitem users only (None for a
    result nothing reads: `_, index = hl.reduce(...)`)."""
    val = cx.meta(node)
    if val is None:
        by_index = {u.args[1]: cx.meta(u) for u in node.users if u.target is operator.getitem}
        return [by_index.get(i) for i in range(count)]
    return list(val) if isinstance(val, (list, tuple)) else [val]


# Scans whose combine is exactly one of these ops are torch.cumsum/cumprod (Helion traces
# those to a scan of torch.add/torch.mul): over f16/bf16 they accumulate in f32, as eager's.
WIDENED_SCANS = frozenset({torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor})


@dataclass(frozen=True)
class _Scan:
    """One scan: its node's name, combine graph, dim and direction."""

    name: str
    graph_id: int
    dim: int
    reverse: bool


@lowers(scan_ops._associative_scan)
def associative_scan(cx: RuleContext) -> Any:
    """scf.for along the dim: out[i] = combine(out[i -/+ 1], x[i]) via insert_slice.

    Along the last dim of a tile of several rows, one row at a time: a step over all rows
    at once reads and writes a column, a lane per row a row apart (cumsum of 851x2300 f32
    took 27 ms, eager 0.9). A cumsum/cumprod of f16/bf16 is carried in f32 and rounded per
    element, as eager's (in the dtype, a bf16 cumsum of 300 values drifted by 10 from
    eager's)."""
    node = cx.node
    graph_id, x, dim, reverse = node.args[:4]
    inputs = [cx.typed(n) for n in (x if isinstance(x, (list, tuple)) else [x])]
    dtype = inputs[0].meta.dtype
    widened = len(inputs) == 1 and dtype in HALVES and single_op(cx, graph_id) in WIDENED_SCANS
    if widened:
        inputs = [cx.convert(inputs[0], torch.float32, f"{node.name}_in")]
    scan = _Scan(node.name, graph_id, dim % inputs[0].meta.dim(), bool(reverse))
    results = _scan_rows(cx, scan, inputs)
    if widened:
        results = [cx.convert(results[0], dtype, node.name)]
    values = [r.value for r in results]
    return values if isinstance(x, (list, tuple)) else values[0]


def _scan_rows(cx: RuleContext, scan: _Scan, inputs: list[TypedValue]) -> list[TypedValue]:
    """The scan along the last dim row by row (a loop over the first dim before it of more
    than one row), else along its dim at once."""
    shape = tensor_dims(inputs[0].value.type)
    rows = [d for d in range(scan.dim) if shape[d] != "1"]
    if scan.dim != len(shape) - 1 or not rows:
        return _scan_along(cx, scan, inputs)
    axis = rows[0]

    def body(r: str, outs: list[TypedValue]) -> list[TypedValue]:
        row = [narrow(cx, o, axis, r, f"{scan.name}_row") for o in outs]
        done = _scan_rows(cx, scan, row)
        return [insert_along(cx, o, d, axis, r, f"{scan.name}_rows") for o, d in zip(outs, done)]

    return cx.emit_scf_for(
        f"{scan.name}_rows", cx.builder.index(0), dim_size(cx, inputs[0], axis), inputs, body
    )


def _scan_along(cx: RuleContext, scan: _Scan, inputs: list[TypedValue]) -> list[TypedValue]:
    """scf.for over the dim's positions after the first: each output position combines
    the one before it (already written) with its own (still the input's). Reading the
    outputs only, the loop updates its tile in place: read from the inputs, bufferization
    copied the tile first."""
    b, name, dim = cx.builder, scan.name, scan.dim
    last = b.index_op("arith.subi", dim_size(cx, inputs[0], dim), b.index(1), f"{name}_last")

    def body(j: str, outs: list[TypedValue]) -> list[TypedValue]:
        if scan.reverse:
            i = b.index_op(
                "arith.subi",
                b.index_op("arith.subi", last, j, f"{name}_rj"),
                b.index(1),
                f"{name}_i",
            )
            prev = b.index_op("arith.addi", i, b.index(1), f"{name}_prev")
        else:
            i, prev = b.index_op("arith.addi", j, b.index(1), f"{name}_i"), j
        accs = [narrow(cx, o, dim, prev, f"{name}_acc") for o in outs]
        items = [narrow(cx, o, dim, i, f"{name}_item") for o in outs]
        news = apply_graph(cx, scan.graph_id, [*accs, *items], name)
        return [insert_along(cx, o, new, dim, i, f"{name}_out") for o, new in zip(outs, news)]

    return cx.emit_scf_for(name, b.index(0), last, inputs, body)


def insert_along(
    cx: RuleContext,
    dest: TypedValue,
    item: TypedValue,
    dim: int,
    index: str,
    name: str,
    width: int = 1,
) -> TypedValue:
    """dest with `item` (`width` along dim) written from `index`."""
    item_value = cx.coerce(
        item.value, mlir_type(torch.ops.aten.narrow.default(dest.meta, dim, 0, width))
    )
    offsets = [index if d == dim else "0" for d in range(dest.meta.dim())]
    sizes = [
        str(width) if d == dim else (s if s != "?" else cx.tensor_dim(dest.value, d))
        for d, s in enumerate(tensor_dims(item_value.type))
    ]
    ssa = cx.builder.fresh(name)
    where = slice_operands(offsets, sizes, ["1"] * len(offsets))
    cx.builder.insert_slice(
        ssa, item_value.ssa, item_value.type, dest.value.ssa, dest.value.type, where
    )
    return TypedValue(Value(ssa, dest.value.type), dest.meta)


@lowers(torch.ops.aten.sigmoid.default)
def sigmoid(cx: RuleContext) -> Value:
    """torch.aten.sigmoid, in f32 for f16/bf16 and rounded once, as eager's: torch-to-linalg
    computes 1 / (1 + exp(-x)) rounding each step to the dtype (up to 2 ulps off)."""
    x = cx.typed(cx.node.args[0])
    if x.meta.dtype not in HALVES:
        return cx.aten_compute()
    return rounded_once(cx, torch.ops.aten.sigmoid.default, x)


@lowers(_gelu_tanh_approx._gelu_erf)
def gelu(cx: RuleContext) -> Value:
    """torch.aten.gelu, computed in f32 for f16/bf16 inputs as Helion does."""
    return rounded_once(cx, torch.ops.aten.gelu.default, cx.typed(cx.node.args[0]))


def rounded_once(cx: RuleContext, target: Any, x: TypedValue) -> Value:
    """target(x) for the node, computed in f32 for f16/bf16 and rounded once to x's dtype."""
    name = cx.node.name
    wide = cx.convert(x, accumulate_dtype(x.meta.dtype), f"{name}_in")
    y = cx.torch_call(f"{name}_f32", target, wide)
    return cx.convert(y, x.meta.dtype, name).value


@lowers(_gelu_tanh_approx._gelu_tanh_approx)
def gelu_tanh(cx: RuleContext) -> Value:
    """0.5 * x * (1 + tanh(kappa * (x + cubic * x^3))) in torch ops, in f32 for f16/bf16:
    Helion's formula; torch-mlir's tanh-approximate gelu differs from eager by ~5e-5."""
    node = cx.node
    aten, name = torch.ops.aten, node.name
    x = cx.typed(node.args[0])
    wide = cx.convert(x, accumulate_dtype(x.meta.dtype), f"{name}_in")
    cube = cx.torch_call(
        f"{name}_cube",
        aten.mul.Tensor,
        cx.torch_call(f"{name}_square", aten.mul.Tensor, wide, wide),
        wide,
    )
    inner = cx.torch_call(
        f"{name}_inner",
        aten.add.Tensor,
        wide,
        cx.torch_call(
            f"{name}_cubic", aten.mul.Scalar, cube, _gelu_tanh_approx.GELU_TANH_APPROX_CUBIC
        ),
    )
    tanh = cx.torch_call(
        f"{name}_tanh",
        aten.tanh.default,
        cx.torch_call(
            f"{name}_scaled", aten.mul.Scalar, inner, _gelu_tanh_approx.GELU_TANH_APPROX_KAPPA
        ),
    )
    half = cx.torch_call(f"{name}_half", aten.mul.Scalar, wide, 0.5)
    y = cx.torch_call(
        f"{name}_f32",
        aten.mul.Tensor,
        half,
        cx.torch_call(f"{name}_one_plus", aten.add.Scalar, tanh, 1.0),
    )
    return cx.convert(y, x.meta.dtype, name).value


@lowers(view_ops.split)
def split(cx: RuleContext) -> list[Value]:
    """Two torch.aten.select.int along the last dim (of size 2)."""
    node = cx.node
    x = cx.typed(node.args[0])
    return [
        cx.torch_call(f"{node.name}_{i}", torch.ops.aten.select.int, x, -1, i).value
        for i in range(2)
    ]


@lowers(view_ops.join)
def join(cx: RuleContext) -> Value:
    """torch.aten.stack of the two halves along a new last dim, each broadcast to the
    result's other dims first (`hl.join(x[tile], scalar)`)."""
    node = cx.node
    shape = list(cx.meta(node).shape[:-1])
    halves = [cx.typed(a) for a in node.args[:2]]
    halves = [
        h
        if list(h.meta.shape) == shape
        else cx.torch_call(f"{node.name}_half{i}", torch.ops.aten.expand.default, h, shape)
        for i, h in enumerate(halves)
    ]
    return cx.torch_call(node.name, torch.ops.aten.stack.default, halves, -1).value


# Python's shift operators on tensors, as the ATen ops torch-mlir lowers.
SHIFTS = {
    torch.ops.aten.__lshift__.Tensor: torch.ops.aten.bitwise_left_shift.Tensor,
    torch.ops.aten.__rshift__.Tensor: torch.ops.aten.bitwise_right_shift.Tensor,
}


@lowers(*SHIFTS)
def shift(cx: RuleContext) -> Value:
    """`x << y` and `x >> y` of two tensors: bitwise_left/right_shift (torch-mlir has no
    lowering for `__lshift__.Tensor`)."""
    node = cx.node
    x, y = (cx.typed(a) for a in node.args[:2])
    return cx.torch_call(node.name, SHIFTS[node.target], x, y).value
