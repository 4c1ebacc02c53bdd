"""Rules for loads, stores and atomics: tile slices of a host tensor's current value.

A store updates the tensor's SSA value (tensor.insert_slice), or in an scf.forall grid
becomes a tensor.parallel_insert_slice in the terminator. Atomics are read-modify-write
of the same slice; grids containing them are sequential (graph_analysis.is_parallel).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.fx as fx
from helion.language import atomic_ops, memory_ops

from ..dispatch import lowers
from ..errors import LoweringError
from ..ir_values import HostTensorRef, Slice, TypedValue, Value, mlir_type, tensor_dims
from ..mlir_builder import format_tensor_type, torch_dtype_to_mlir_element_type
from .tensors import expand_dims

if TYPE_CHECKING:
    from ..ir_visitor import IRVisitor


@dataclass(frozen=True)
class Access:
    """A resolved index into a host tensor: the slice, and where unit dims are inserted."""

    name: str
    parts: list[Slice]
    index: list[Any]  # the index with None (newaxis) entries, for expand_dims
    tile_type: str  # the slice's type, without the newaxis dims
    result_type: str  # the type Helion gives the access (with newaxis dims)


def access(v: IRVisitor, node: fx.Node, index: Sequence[Any], result_val: Any) -> Access:
    name = host_ref(v, node)
    shape = v.ctx.tensor_arg(name).shape
    entries = [e for e in index if e is not None]
    if any(_is_tensor_index(e) for e in entries):
        raise LoweringError(node, "tensor (gather/scatter) indices are not supported yet")
    if len(entries) > len(shape):
        raise LoweringError(node, f"index {list(index)} has more entries than the tensor has dims")
    entries += [slice(None)] * (len(shape) - len(entries))
    newaxis = [i for i, e in enumerate(index) if e is None]
    kept_sizes = iter([size for i, size in enumerate(result_val.shape) if i not in newaxis])
    parts = []
    for dim, entry in enumerate(entries):
        part = _slice(v, node, entry, shape[dim])
        size = next(kept_sizes) if part.keep else None
        if entry == slice(None) and (tile := v.tile_of(size)) is not None and tile.size != part.size:
            part = Slice(tile.offset, tile.size, True)  # a rolled reduction's current chunk
        parts.append(part)
    result_type = mlir_type(result_val)
    dims = [d for i, d in enumerate(tensor_dims(result_type)) if i not in newaxis]
    elt = torch_dtype_to_mlir_element_type(result_val.dtype)
    tile_type = format_tensor_type([int(d) if d != "?" else None for d in dims], elt)
    return Access(name, parts, list(index), tile_type, result_type)


def _is_tensor_index(entry: Any) -> bool:
    return isinstance(entry, fx.Node) and isinstance(entry.meta.get("val"), torch.Tensor)


def _slice(v: IRVisitor, node: fx.Node, idx: Any, extent: Any) -> Slice:
    if isinstance(idx, slice):
        if idx.step not in (None, 1):
            raise LoweringError(node, f"strided slice {idx} is not supported")
        start = 0 if idx.start is None else idx.start
        stop = extent if idx.stop is None else idx.stop
        if isinstance(start, int) and isinstance(stop, int):
            return Slice(start, stop - start, True)
        begin = v.index_value(start)
        return Slice(begin, v.emit_index_op("arith.subi", v.index_value(stop), begin, "slice_size"), True)
    if isinstance(idx, int):
        return Slice(idx, 1, False)
    tile = v.tile_of(idx)
    if tile is not None:
        return Slice(tile.offset, tile.size, True)
    if isinstance(idx, fx.Node) and isinstance(idx.meta.get("val"), torch.SymInt):
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


def read(v: IRVisitor, acc: Access, name: str) -> Value:
    """extract_slice of the tensor's current value, then unit dims for None entries."""
    source = v.tensor_state[acc.name]
    ssa = v.builder.fresh(name if acc.tile_type == acc.result_type else f"{name}_tile")
    v.builder.emit(f"{ssa} = tensor.extract_slice {source.ssa}{slice_syntax(v, acc.parts, acc.tile_type)} : {source.type} to {acc.tile_type}")
    tile = Value(ssa, acc.tile_type)
    if acc.tile_type == acc.result_type:
        return tile
    return expand_dims(v, name, tile, acc.index, acc.result_type)


def write(v: IRVisitor, acc: Access, value: Value, name: str) -> None:
    """Store a tile-shaped value (no newaxis dims) into the tensor's current value."""
    dest = v.tensor_state[acc.name]
    value = v.coerce(value, acc.tile_type)
    where = slice_syntax(v, acc.parts, value.type)
    if v.parallel_stores is not None:
        v.parallel_stores.append(f"tensor.parallel_insert_slice {value.ssa} into {dest.ssa}{where} : {value.type} into {dest.type}")
        return
    ssa = v.builder.fresh(name)
    v.builder.emit(f"{ssa} = tensor.insert_slice {value.ssa} into {dest.ssa}{where} : {value.type} into {dest.type}")
    v.tensor_state[acc.name] = Value(ssa, dest.type)


def masked(v: IRVisitor, name: str, mask: Any, value: TypedValue, other: TypedValue | float) -> TypedValue:
    """where(mask, value, other): extra_mask lanes that are off keep `other`."""
    if mask is None:
        return value
    return v.torch_call(f"{name}_masked", torch.ops.aten.where.self if isinstance(other, TypedValue) else torch.ops.aten.where.ScalarOther, mask, value, other)


@lowers(memory_ops.load)
def load(v: IRVisitor, node: fx.Node) -> Value:
    """tensor.extract_slice of the tensor's current value (expand_shape for None)."""
    target, index, mask = node.args[0], node.args[1], node.args[2]
    if isinstance(v.node_values.get(target), Value):
        return _index_value(v, node, target, index)
    value = read(v, access(v, node, index, node.meta["val"]), node.name)
    if mask is None:
        return value
    return masked(v, node.name, mask, TypedValue(value, node.meta["val"]), 0.0).value


def _index_value(v: IRVisitor, node: fx.Node, target: fx.Node, index: Sequence[Any]) -> Value:
    """Indexing a device value (tile.index[None, :]) only inserts unit dims."""
    if any(i is not None and i != slice(None) for i in index):
        raise LoweringError(node, f"indexing a device tensor with {list(index)} is not supported")
    return expand_dims(v, node.name, v.value(target), index, mlir_type(node.meta["val"]))


@lowers(memory_ops.store)
def store(v: IRVisitor, node: fx.Node) -> None:
    """tensor.parallel_insert_slice in scf.forall, else tensor.insert_slice."""
    index, value_node, mask = node.args[1], node.args[2], node.args[3]
    name = host_ref(v, node)
    dtype = v.ctx.tensor_arg(name).dtype
    value = v.convert(v.typed(value_node), dtype, node.name)
    acc = access(v, node, index, value.val)
    if mask is not None:
        old = TypedValue(read(v, acc, f"{node.name}_old"), value.val)
        value = masked(v, node.name, mask, value, old)
    write(v, acc, value.value, node.name)
    return None


# The combine of each read-modify-write atomic; xchg writes the value itself.
ATOMIC_COMBINES: dict[Any, Any] = {
    atomic_ops.atomic_add: torch.ops.aten.add.Tensor,
    atomic_ops.atomic_max: torch.ops.aten.maximum.default,
    atomic_ops.atomic_min: torch.ops.aten.minimum.default,
    atomic_ops.atomic_and: torch.ops.aten.bitwise_and.Tensor,
    atomic_ops.atomic_or: torch.ops.aten.bitwise_or.Tensor,
    atomic_ops.atomic_xor: torch.ops.aten.bitwise_xor.Tensor,
    atomic_ops.atomic_xchg: None,
}


@lowers(*ATOMIC_COMBINES)
def atomic_rmw(v: IRVisitor, node: fx.Node) -> Value:
    """Read-modify-write: extract_slice, torch combine op, insert_slice; returns the old value."""
    index, value_node = node.args[1], node.args[2]
    old = TypedValue(read(v, access(v, node, index, node.meta["val"]), f"{node.name}_old"), node.meta["val"])
    new = v.convert(v.typed(value_node), old.val.dtype, node.name)
    combine = ATOMIC_COMBINES[node.target]
    if combine is not None:
        new = v.torch_call(f"{node.name}_new", combine, old, new)
    write(v, access(v, node, index, new.val), new.value, node.name)
    return old.value


@lowers(atomic_ops.atomic_cas)
def atomic_cas(v: IRVisitor, node: fx.Node) -> Value:
    """Read-modify-write: where(old == expected, value, old) (old value returned)."""
    index, expected, value_node = node.args[1], node.args[2], node.args[3]
    old = TypedValue(read(v, access(v, node, index, node.meta["val"]), f"{node.name}_old"), node.meta["val"])
    same = v.torch_call(f"{node.name}_eq", torch.ops.aten.eq.Tensor, old, v.typed(expected))
    new = v.torch_call(f"{node.name}_new", torch.ops.aten.where.self, same, v.typed(value_node), old)
    write(v, access(v, node, index, new.val), new.value, node.name)
    return old.value
