"""Rules for loads and stores of host tensors: tile slices of the tensor's current value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
import torch.fx as fx
from helion.language import memory_ops

from ..dispatch import lowers
from ..errors import LoweringError
from ..ir_values import HostTensorRef, Slice, Value, mlir_type, tensor_dims

if TYPE_CHECKING:
    from ..ir_visitor import IRVisitor


def slices(v: IRVisitor, node: fx.Node, index: Sequence[Any], shape: Sequence[Any]) -> list[Slice]:
    """Offsets and sizes of a tile access, one entry per tensor dimension."""
    if len(index) > len(shape):
        raise LoweringError(node, f"index {index} has more entries than the tensor has dims")
    padded = [*index, *[slice(None)] * (len(shape) - len(index))]
    return [_slice(v, node, idx, shape[dim]) for dim, idx in enumerate(padded)]


def _slice(v: IRVisitor, node: fx.Node, idx: Any, extent: Any) -> Slice:
    if isinstance(idx, slice):
        if idx.step not in (None, 1):
            raise LoweringError(node, f"strided slice {idx} is not supported")
        start, stop = idx.start or 0, extent if idx.stop is None else idx.stop
        if isinstance(start, int) and isinstance(stop, int):
            return Slice(start, stop - start, True)
        raise LoweringError(node, f"symbolic slice bounds {idx} are not supported")
    if isinstance(idx, int):
        return Slice(idx, 1, False)
    tile = v.tile_of(idx)
    if tile is not None:
        return Slice(tile.offset, tile.size, True)
    val = idx.meta.get("val") if isinstance(idx, fx.Node) else None
    if isinstance(val, torch.SymInt):
        return Slice(v.index_value(idx), 1, False)
    raise LoweringError(node, f"index element {idx!r} is not supported")


def slice_syntax(v: IRVisitor, parts: Sequence[Slice], value_type: str) -> str:
    """'[offsets] [sizes] [strides]': a size is literal where the value's dim is static."""
    dims = iter(tensor_dims(value_type))
    sizes = []
    for s in parts:
        dim = next(dims) if s.keep else "1"
        if dim != "?":
            sizes.append(dim)
        else:
            sizes.append(s.size if isinstance(s.size, str) else v.builder.index(s.size))
    offsets = [str(s.offset) for s in parts]
    return f"[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join('1' for _ in parts)}]"


def host_ref(v: IRVisitor, node: fx.Node) -> str:
    ref = v.node_values.get(node.args[0])
    if not isinstance(ref, HostTensorRef):
        raise LoweringError(node, "the tensor is not a host tensor")
    return ref.name


def _reject_extra_mask(node: fx.Node, mask: Any) -> None:
    if mask is not None:
        raise LoweringError(node, "extra_mask on loads/stores is not supported yet")


@lowers(memory_ops.load)
def load(v: IRVisitor, node: fx.Node) -> Value:
    """tensor.extract_slice of the tensor's current value."""
    name = host_ref(v, node)
    _reject_extra_mask(node, node.args[2])
    source = v.tensor_state[name]
    parts = slices(v, node, node.args[1], v.ctx.tensor_arg(name).shape)
    ty = mlir_type(node.meta["val"])
    ssa = v.builder.fresh(node.name)
    v.builder.emit(f"{ssa} = tensor.extract_slice {source.ssa}{slice_syntax(v, parts, ty)} : {source.type} to {ty}")
    return Value(ssa, ty)


@lowers(memory_ops.store)
def store(v: IRVisitor, node: fx.Node) -> None:
    """tensor.parallel_insert_slice in scf.forall, else tensor.insert_slice."""
    name = host_ref(v, node)
    _reject_extra_mask(node, node.args[3])
    dest = v.tensor_state[name]
    arg = v.ctx.tensor_arg(name)
    value = v.convert(v.value(node.args[2]), node.args[2], arg.dtype)
    where = slice_syntax(v, slices(v, node, node.args[1], arg.shape), value.type)
    if v.parallel_stores is not None:
        v.parallel_stores.append(f"tensor.parallel_insert_slice {value.ssa} into {dest.ssa}{where} : {value.type} into {dest.type}")
        return None
    ssa = v.builder.fresh(node.name)
    v.builder.emit(f"{ssa} = tensor.insert_slice {value.ssa} into {dest.ssa}{where} : {value.type} into {dest.type}")
    v.tensor_state[name] = Value(ssa, dest.type)
    return None
