"""Rules for values that need no loop or memory: host tensors, symbols, aliases, fills, views."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
import torch.fx as fx
from helion.language import _tracing_ops, creation_ops, view_ops

from ..dispatch import lowers
from ..errors import LoweringError
from ..stripped_args import ORIGINAL_ARGS
from ..ir_values import HostTensorRef, Value, element_type, mlir_type, tensor_dims
from ..mlir_builder import format_scalar, torch_dtype_to_mlir_element_type

if TYPE_CHECKING:
    from ..ir_visitor import IRVisitor


@lowers(_tracing_ops._host_tensor)
def host_tensor(v: IRVisitor, node: fx.Node) -> HostTensorRef:
    """The func argument (the tensor's current SSA value at each load/store)."""
    return HostTensorRef(node.args[0])


@lowers(_tracing_ops._get_symnode, torch.ops.aten.sym_size.int)
def symbolic(v: IRVisitor, node: fx.Node) -> None:
    """Nothing at the node: resolved where used (tile size, extent, block size, scalar arg)."""
    return None


@lowers(_tracing_ops._inductor_lowering_extra)
def lowering_extra(v: IRVisitor, node: fx.Node) -> Value | None:
    """torch.aten.sum.dim_IntList when a rolled loop yields a mean's partial sum, else nothing.

    The extra buffer of a multi-buffer Inductor lowering; in a persistent reduction the op
    reading it gets its stripped operand back instead, so nothing is emitted."""
    orig = node.meta.get("orig_node")
    leaves_loop = any(user.op == "output" for user in node.users)
    if not leaves_loop or orig is None or orig.target is not torch.ops.aten.mean.dim:
        return None
    dims, keepdim = orig.args[1], orig.args[2] if len(orig.args) > 2 else False
    source = node.args[0][0]
    return v.torch_call(node.name, torch.ops.aten.sum.dim_IntList, v.typed(source), dims, keepdim).value


@lowers(torch.ops.aten.mean.dim)
def mean_dim(v: IRVisitor, node: fx.Node) -> Value:
    """torch.aten.mean.dim; after a rolled reduction, the accumulated sum / element count."""
    extra = node.kwargs.get("_extra_args") or []
    if node.args[0] is not None or not extra or not isinstance(v.node_values.get(extra[0]), Value):
        return v.aten_compute(node)  # persistent: the stripped input is restored
    recorded = node.meta.get(ORIGINAL_ARGS)
    if not recorded or not isinstance(recorded[0], fx.Node):
        raise LoweringError(node, "the input of this mean was stripped before helion_fx_mlir recorded it")
    orig_input = recorded[0].meta["val"]
    dims = [d % orig_input.dim() for d in node.args[1]]
    count = 1
    for d in dims:
        count *= v.ctx.extent(orig_input.shape[d])
    if not isinstance(count, int):
        raise LoweringError(node, "a rolled mean over a dynamic extent is not supported")
    return v.torch_call(node.name, torch.ops.aten.div.Scalar, v.typed(extra[0]), float(count)).value


@lowers(_tracing_ops._new_var, _tracing_ops._mask_to)
def alias(v: IRVisitor, node: fx.Node) -> Value:
    """The operand itself.

    _new_var copies; _mask_to masks lanes past the extent, and tiles here are exact."""
    return v.value(node.args[0])


@lowers(creation_ops.full)
def full(v: IRVisitor, node: fx.Node) -> Value:
    """tensor.empty + linalg.fill (exact tile sizes)."""
    shape, fill, dtype = node.args[0], node.args[1], node.args[2]
    return emit_full(v, node.name, shape, fill, dtype, mlir_type(node.meta["val"]))


@lowers(torch.ops.aten.full.default)
def aten_full(v: IRVisitor, node: fx.Node) -> Value:
    """tensor.empty + linalg.fill."""
    dtype = node.kwargs.get("dtype") or node.meta["val"].dtype
    return emit_full(v, node.name, node.args[0], node.args[1], dtype, mlir_type(node.meta["val"]))


def emit_full(v: IRVisitor, name: str, shape: Sequence[Any], fill: Any, dtype: torch.dtype, ty: str) -> Value:
    """tensor.empty with the exact tile sizes, then linalg.fill with the constant."""
    b = v.builder
    elt = torch_dtype_to_mlir_element_type(dtype)
    dynamic = [v.index_value(d) for d, dim in zip(shape, tensor_dims(ty), strict=True) if dim == "?"]
    cst = b.constant(format_scalar(fill, dtype), elt, "cst")
    empty = b.fresh(f"{name}_empty")
    b.emit(f"{empty} = tensor.empty({', '.join(dynamic)}) : {ty}")
    ssa = b.fresh(name)
    b.emit(f"{ssa} = linalg.fill ins({cst} : {elt}) outs({empty} : {ty}) -> {ty}")
    return Value(ssa, ty)


@lowers(view_ops.subscript)
def subscript(v: IRVisitor, node: fx.Node) -> Value:
    """tensor.expand_shape (indexing that inserts unit dims, x[:, None])."""
    source, index = v.value(node.args[0]), node.args[1]
    if any(i is not None and i != slice(None) for i in index):
        raise LoweringError(node, f"subscript {index} is not supported (only ':' and None)")
    return expand_dims(v, node.name, source, index, mlir_type(node.meta["val"]))


def expand_dims(v: IRVisitor, name: str, source: Value, index: Sequence[Any], ty: str) -> Value:
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
            sizes.append(v.tensor_dim(source, src_dim))
        else:
            natural.append(src_dims[src_dim])
            sizes.append(src_dims[src_dim])
    expanded = f"tensor<{''.join(d + 'x' for d in natural)}{element_type(ty)}>"
    reassoc = ", ".join(f"[{', '.join(map(str, g))}]" for g in groups)
    ssa = v.builder.fresh(name if expanded == ty else f"{name}_expanded")
    v.builder.emit(f"{ssa} = tensor.expand_shape {source.ssa} [{reassoc}] output_shape [{', '.join(sizes)}] : {source.type} into {expanded}")
    return v.coerce(Value(ssa, expanded), ty)
