"""argmax/argmin and max/min along a dim on floats, through an integer order key.

PyTorch's index is the first one of the row's extreme, NaN is the extreme of every row it is
in (the first NaN's index), and -0.0 ties with 0.0. Each float lane becomes an integer whose
order is that one (every NaN above +inf for a max, below -inf for a min; both zeros 0), so
torch-mlir's integer argmax/argmin, a scan that moves on a strictly better lane only, gives
PyTorch's index in one pass over the row (helion-lane-parallel-index-reductions then runs it
a vector of lanes at a time). max/min.dim's value is the row's lane at that index.
"""

from __future__ import annotations

from typing import Any

import torch

from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.emitter import GenericOp, identity_map
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.rules.aten import empty_like
from helion_fx_mlir.frontend.rules.memory import fake_empty
from helion_fx_mlir.frontend.stripped_args import restored_args
from helion_fx_mlir.frontend.values import TypedValue, Value, element_type

aten = torch.ops.aten

# Per float type: the float its key is computed in (f16/bf16 widen exactly to f32), and the
# integer of that float's width with the key's dtype.
KEY_TYPES = {
    "f16": ("f32", "i32", torch.int32),
    "bf16": ("f32", "i32", torch.int32),
    "f32": ("f32", "i32", torch.int32),
    "f64": ("f64", "i64", torch.int64),
}
KEY_PARTS = (
    *("in", "out", "f", "zero", "is_zero", "raw", "none", "signed", "neg", "mag", "flip"),
    *("ordered", "nan", "extreme", "key"),
)
INDEX_OPS = {
    aten.argmax.default: aten.argmax.default,
    aten.max.dim: aten.argmax.default,
    aten.argmin.default: aten.argmin.default,
    aten.min.dim: aten.argmin.default,
}


@lowers(aten.argmax.default, aten.argmin.default, aten.max.dim, aten.min.dim)
def index_reduction(cx: RuleContext) -> Any:
    """Floats: the index reduction of the order key (max/min.dim: and the lane at it).
    Integers, whose order is their own: the op through torch-mlir."""
    node = cx.node
    args, kwargs = restored_args(node)
    x = cx.typed(args[0])
    if not x.meta.dtype.is_floating_point:
        return cx.aten_compute()
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    index_op = INDEX_OPS[node.target]
    key = order_key(cx, f"{node.name}_key", x, largest=index_op == aten.argmax.default)
    if node.target in (aten.argmax.default, aten.argmin.default):
        return cx.torch_call(node.name, index_op, key, dim=dim, keepdim=keepdim).value
    kept = cx.torch_call(f"{node.name}_at", index_op, key, dim=dim, keepdim=True)
    lanes = cx.torch_call(f"{node.name}_lanes", aten.gather.default, x, dim, kept)
    if keepdim:
        return [lanes.value, kept.value]
    return [
        cx.torch_call(f"{node.name}_{part}", aten.squeeze.dim, t, dim).value
        for part, t in (("values", lanes), ("indices", kept))
    ]


def order_key(cx: RuleContext, name: str, x: TypedValue, largest: bool) -> TypedValue:
    """An integer tensor ordered as x's lanes are by PyTorch's max (`largest`) or min: a
    float's bits, the negative ones' magnitude bits flipped (more negative, smaller key),
    both zeros 0, every NaN the integer type's extreme on the side of `largest`."""
    elt = element_type(x.value.type)
    wide, bits, dtype = KEY_TYPES[elt]
    empty = empty_like(cx, f"{name}_empty", fake_empty(x.meta, list(x.meta.shape), dtype), x)
    b = cx.builder
    ssa = b.fresh(name)
    v = {part: b.fresh(f"{name}_{part}") for part in KEY_PARTS}
    top = (1 << (int(bits[1:]) - 1)) - 1
    source = v["f"] if elt != wide else v["in"]
    widened = [f"{v['f']} = arith.extf {v['in']} : {elt} to {wide}"] if elt != wide else []
    body = (
        *widened,
        f"{v['zero']} = arith.constant 0.0 : {wide}",
        f"{v['is_zero']} = arith.cmpf oeq, {source}, {v['zero']} : {wide}",
        f"{v['raw']} = arith.bitcast {source} : {wide} to {bits}",
        f"{v['none']} = arith.constant 0 : {bits}",
        f"{v['signed']} = arith.select {v['is_zero']}, {v['none']}, {v['raw']} : {bits}",
        f"{v['neg']} = arith.cmpi slt, {v['signed']}, {v['none']} : {bits}",
        f"{v['mag']} = arith.constant {top} : {bits}",
        f"{v['flip']} = arith.xori {v['signed']}, {v['mag']} : {bits}",
        f"{v['ordered']} = arith.select {v['neg']}, {v['flip']}, {v['signed']} : {bits}",
        f"{v['nan']} = arith.cmpf uno, {source}, {source} : {wide}",
        f"{v['extreme']} = arith.constant {top if largest else -top - 1} : {bits}",
        f"{v['key']} = arith.select {v['nan']}, {v['extreme']}, {v['ordered']} : {bits}",
        f"linalg.yield {v['key']} : {bits}",
    )
    rank = x.meta.dim()
    generic = GenericOp(
        rank,
        (identity_map(rank), identity_map(rank)),
        ((x.value.ssa, x.value.type),),
        empty.value.ssa,
        empty.value.type,
        ((v["in"], elt), (v["out"], bits)),
        body,
    )
    b.generic(ssa, generic)
    return TypedValue(Value(ssa, empty.value.type), empty.meta)
