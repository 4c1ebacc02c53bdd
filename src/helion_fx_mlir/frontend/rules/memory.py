"""Rules for loads, stores and atomics: tile slices of a host tensor's current value.

A store updates the tensor's SSA value (tensor.insert_slice), or in an scf.forall grid
becomes a tensor.parallel_insert_slice in the terminator. Atomics are read-modify-write
of the same slice; grids containing them are sequential (graph_analysis.is_parallel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from helion.language import atomic_ops, memory_ops
from torch import fx

from helion_fx_mlir.errors import HelionMLIRError, LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.emitter import (
    GenericOp,
    format_tensor_type,
    identity_map,
    insert_slice_op,
    slice_operands,
    torch_dtype_to_mlir_element_type,
)
from helion_fx_mlir.frontend.graph_analysis import ShiftedTile, shifted_tile
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.rules.tensors import (
    emit_full,
    expand_dims,
    index_to_element,
    lane_condition,
    pad,
    select_lanes,
)
from helion_fx_mlir.frontend.values import (
    HostTensorRef,
    LaneBound,
    Slice,
    Tile,
    TypedValue,
    Value,
    element_type,
    mlir_type,
    tensor_dims,
)


@dataclass(frozen=True)
class Access:
    """A resolved index into a host tensor: the slice, and where unit dims are inserted.

    The slice covers the in-range lanes (`valid_type`); the value has the tile's static
    block shape (`tile_type`): loads pad the rest with 0, stores write only the slice."""

    name: str
    parts: list[Slice]
    owners: list[Any]  # the index entry of each result dim (None: a newaxis), for expand_dims
    valid_type: str  # the slice's type
    tile_type: str  # the value's type, without the newaxis dims
    result_type: str  # the type Helion gives the access (with newaxis dims)
    guard: str | None = None  # i1: every scalar index computed on the device is inside the tensor
    broadcast: tuple[
        int, ...
    ] = ()  # tile dims over a size-1 tensor dim: every lane reads its element
    broadcast_sizes: tuple[Any, ...] = ()  # their tiles' in-range sizes (lanes past them read 0)
    dtype: torch.dtype = torch.float32  # of the value read or written

    @property
    def padded(self) -> bool:
        return self.valid_type != self.tile_type


def access(
    cx: RuleContext,
    node: fx.Node,
    index: Sequence[Any],
    sym_val: Any,
    dtype: torch.dtype | None = None,
    shifted_inside: bool = False,
) -> Access:
    """Resolve `index` for a value whose symbolic meta is `sym_val` (block-size dims),
    of `dtype` (default: the meta's); `shifted_inside`: its shifted tiles are known to lie
    inside the tensor."""
    name = host_ref(cx, node)
    shape = cx.tensor_arg(name).shape
    entries = [e for e in index if e is not None]
    if len(entries) > len(shape):
        raise LoweringError(node, f"index {list(index)} has more entries than the tensor has dims")
    entries += [slice(None)] * (len(shape) - len(entries))
    owners = _dim_owners(cx, index, len(shape))
    kept_sizes = iter(
        [size for owner, size in zip(owners, sym_val.shape, strict=True) if owner is not None]
    )
    parts: list[Slice] = []
    broadcast: list[int] = []
    broadcast_sizes: list[str | int] = []
    for dim, entry in enumerate(entries):
        if _broadcasts(cx, node, entry, shape[dim]):
            next(kept_sizes)
            if cx.tile(entry).width != 1:  # a one-lane tile needs only element 0
                broadcast.append(sum(p.keep for p in parts))
                broadcast_sizes.append(cx.tile(entry).size)
            parts.append(Slice(0, 1, True))
            continue
        part = _slice(cx, node, entry, shape[dim], shifted_inside)
        kept = next(kept_sizes) if part.keep else None
        if isinstance(entry, slice) and node.target is memory_ops.load:
            _read_whole(cx, node, kept, shape[dim])
        parts.append(_rolled_chunk(cx, entry, part, kept))
    parts, guard = _guard_scalar_indices(cx, parts, shape)
    elt = torch_dtype_to_mlir_element_type(dtype or sym_val.dtype)
    result_type = (
        f"tensor<{''.join(d + 'x' for d in tensor_dims(mlir_type(cx.static_meta(sym_val))))}{elt}>"
    )
    dims = [
        d for owner, d in zip(owners, tensor_dims(result_type), strict=True) if owner is not None
    ]
    tile_type = format_tensor_type([int(d) if d != "?" else None for d in dims], elt)
    kept = [p for p in parts if p.keep]
    valid = [
        p.size if isinstance(p.size, int) and d != "?" else None
        for p, d in zip(kept, dims, strict=True)
    ]
    return Access(
        name,
        parts,
        owners,
        format_tensor_type(valid, elt),
        tile_type,
        result_type,
        guard,
        tuple(broadcast),
        tuple(broadcast_sizes),
        dtype or sym_val.dtype,
    )


def _read_whole(cx: RuleContext, node: fx.Node, kept: Any, size: Any) -> None:
    """A `:` Helion gave a reduction dim's block (`cos[tile, :]`): the code reads as many
    elements as that dim's extent, which another tensor may define (size_checks.py)."""
    block_id = cx.block_id_of(kept)
    if block_id is not None:
        cx.require_extent(size, block_id, node)


def _broadcasts(cx: RuleContext, node: fx.Node, entry: Any, size: Any) -> bool:
    """Helion's rule: a tile indexing a tensor dim of size 1 reads index 0 in every lane
    (the dim broadcasts, as `bias[tile_m, tile_n]` over a [1, n] bias). Under dynamic
    shapes a load settles a symbolic size as Helion does; a store never broadcasts."""
    if isinstance(entry, slice) or cx.tile_of(entry) is None:
        return False
    block_id = cx.block_id_of(entry.meta.get("val") if isinstance(entry, fx.Node) else entry)
    if block_id is None:
        return isinstance(size, int) and size == 1
    return cx.size_is_one(size, block_id, node.target is not memory_ops.store)


def _rolled_chunk(cx: RuleContext, entry: Any, part: Slice, size: Any) -> Slice:
    """A slice along a rolled reduction dim (output size `size`) covers the loop's current
    chunk of the sliced range, not all of it."""
    tile = cx.looped_tile(size) if isinstance(entry, slice) else None
    if tile is None:
        return part
    step = (
        cx.as_index(tile.offset)
        if part.stride == 1
        else cx.builder.index_op(
            "arith.muli", cx.as_index(tile.offset), cx.builder.index(part.stride), "chunk_step"
        )
    )
    start = (
        step
        if part.offset == 0
        else cx.builder.index_op("arith.addi", cx.as_index(part.offset), step, "chunk_start")
    )
    return Slice(start, tile.size, True, part.stride)


def _guard_scalar_indices(
    cx: RuleContext, parts: list[Slice], shape: Sequence[Any]
) -> tuple[list[Slice], str | None]:
    """A scalar index computed on the device (a tile id, a grid index, an expression) can
    lie outside the tensor when the host allocated less than the device assumes: then the
    access touches nothing. Its offset is clamped to 0 and the kept sizes become 0 (loads
    read padding); `guard` says whether every such index is in range."""
    b = cx.builder
    checks = []
    for part, extent in zip(parts, shape):
        if not part.keep and isinstance(part.offset, str):
            ok = b.fresh("index_in_tensor")
            b.emit(f"{ok} = arith.cmpi ult, {part.offset}, {cx.index_value(extent)} : index")
            checks.append(ok)
    if not checks:
        return parts, None
    guard = checks[0]
    for ok in checks[1:]:
        guard = cx.builder.binary("arith.andi", guard, ok, "i1", "indices_in_tensor")
    zero = b.index(0)
    guarded = []
    for part in parts:
        if not part.keep and isinstance(part.offset, str):
            part = Slice(_select(cx, guard, part.offset, zero), 1, False)
        elif part.keep:
            part = Slice(
                part.offset, _select(cx, guard, cx.as_index(part.size), zero), True, part.stride
            )
        guarded.append(part)
    return guarded, guard


def _select(cx: RuleContext, cond: str, yes: str, no: str) -> str:
    ssa = cx.builder.fresh("guarded")
    cx.builder.emit(f"{ssa} = arith.select {cond}, {yes}, {no} : index")
    return ssa


def _is_tensor_index(entry: Any) -> bool:
    return isinstance(entry, fx.Node) and isinstance(entry.meta.get("val"), torch.Tensor)


def _slice(
    cx: RuleContext, node: fx.Node, idx: Any, extent: Any, shifted_inside: bool = False
) -> Slice:
    if isinstance(idx, slice):
        if idx.step not in (None, 1):
            return _strided(cx, node, idx, extent)
        if isinstance(extent, int) and all(
            isinstance(b, int | None) for b in (idx.start, idx.stop)
        ):
            start, stop, _ = idx.indices(
                extent
            )  # clamped to the dim, as Python's (x[3:] of 1 is empty)
            return Slice(start, stop - start, True) if stop > start else Slice(0, 0, True)
        return _clamped_slice(cx, idx, cx.index_value(extent))
    if isinstance(idx, int):
        return Slice(_from_end(cx, idx, extent) if idx < 0 else idx, 1, False)
    tile = cx.tile_of(idx)
    if tile is not None:
        return in_tensor(cx, tile, extent)
    shifted = shifted_tile(idx)
    if shifted is not None and shifted_inside:
        return Slice(_shifted_start(cx, shifted), cx.tile(shifted.block).size, True)
    if shifted is not None:
        return _shifted_slice(cx, shifted, extent)
    if isinstance(idx, fx.Node) and isinstance(idx.meta.get("val"), torch.SymInt):
        return Slice(cx.index_value(idx), 1, False)
    raise LoweringError(node, f"index element {idx!r} is not supported")


def _shifted_slice(cx: RuleContext, shifted: ShiftedTile, extent: Any) -> Slice:
    """`tile.index + k`: the tile's in-range lanes moved by k, cut to the tensor dim. The
    slice starts at the first lane inside it (`lane`); lanes before the dim's start or past
    its end touch nothing (a load reads 0 there, under the extra_mask it needs)."""
    b, tile = cx.builder, cx.tile(shifted.block)
    start, end = _shifted_span(cx, shifted)
    dim, zero = cx.index_value(extent), b.index(0)

    def clamp(value: str, floor: str, ceiling: str, name: str) -> str:
        return b.index_op(
            "arith.minsi", b.index_op("arith.maxsi", value, floor, name), ceiling, name
        )

    low, high = clamp(start, zero, dim, "shifted_low"), clamp(end, zero, dim, "shifted_high")
    size = b.index_op("arith.subi", high, low, "shifted_size")
    # an empty slice's offsets stay inside their dims, as MLIR's verifier asks of constants
    low = b.index_op("arith.minsi", low, _last(cx, extent, "last"), "shifted_offset")
    lane = b.index_op("arith.subi", low, start, "shifted_lane")
    lane = clamp(lane, zero, _last(cx, tile.width, "last_lane"), "shifted_lane")
    return Slice(low, size, True, lane=lane)


def _shifted_start(cx: RuleContext, shifted: ShiftedTile) -> str:
    """Where the shifted tile's first lane lands: its offset moved by the shift."""
    b, k = cx.builder, shifted.shift
    shift = b.index(k) if isinstance(k, int) else cx.index_value(k)
    move = "arith.addi" if shifted.sign == 1 else "arith.subi"
    return b.index_op(move, cx.as_index(cx.tile(shifted.block).offset), shift, "shifted")


def _shifted_span(cx: RuleContext, shifted: ShiftedTile) -> tuple[str, str]:
    """Where the shifted tile's in-range lanes land: [start, end), before any cut."""
    start = _shifted_start(cx, shifted)
    size = cx.as_index(cx.tile(shifted.block).size)
    return start, cx.builder.index_op("arith.addi", start, size, "shifted_end")


def _last(cx: RuleContext, extent: Any, name: str) -> str:
    """The last index of a dim of `extent`, an int, SSA value or SymInt (0 for an empty
    one)."""
    b = cx.builder
    if isinstance(extent, int):
        return b.index(max(extent - 1, 0))
    size = extent if isinstance(extent, str) else cx.index_value(extent)
    last = b.index_op("arith.subi", size, b.index(1), name)
    return b.index_op("arith.maxsi", last, b.index(0), name)


def _strided(cx: RuleContext, node: fx.Node, idx: slice, extent: Any) -> Slice:
    """`x[start:stop:step]`: every step-th element, as Python slices (bounds clamped to
    the dim; over a symbolic dim, at run time)."""
    if not all(isinstance(b, int | None) for b in (idx.start, idx.stop, idx.step)) or idx.step < 1:
        raise LoweringError(node, f"strided slice {idx} needs ints and a positive step")
    if isinstance(extent, int):
        picked = range(*idx.indices(extent))
        return Slice(picked.start if picked else 0, len(picked), True, idx.step)
    b, dim = cx.builder, cx.index_value(extent)
    start = b.index(0) if idx.start is None else _slice_bound(cx, idx.start, dim)
    stop = dim if idx.stop is None else _slice_bound(cx, idx.stop, dim)
    span = b.index_op("arith.subi", stop, start, "stride_span")
    span = b.index_op("arith.maxsi", span, b.index(0), "stride_span")
    return Slice(
        start, b.index_op("arith.ceildivsi", span, b.index(idx.step), "strided"), True, idx.step
    )


def _clamped_slice(cx: RuleContext, idx: slice, dim: str) -> Slice:
    """`x[start:stop]` over a dim known at run time, its bounds clamped into it as Python
    clamps them (`x[3:]` of one column is empty, not of size -2)."""
    b = cx.builder
    if idx.start is None and idx.stop is None:
        return Slice(0, dim, True)
    begin = b.index(0) if idx.start is None else _slice_bound(cx, idx.start, dim)
    end = dim if idx.stop is None else _slice_bound(cx, idx.stop, dim)
    size = b.index_op("arith.subi", end, begin, "slice_size")
    if idx.start is not None and idx.stop is not None:  # else end >= begin already
        size = b.index_op("arith.maxsi", size, b.index(0), "slice_size")
    return Slice(begin, size, True)


def _slice_bound(cx: RuleContext, bound: Any, dim: str) -> str:
    """A slice bound clamped into [0, dim] as Python clamps it: an int below 0 counts from
    the end; a symbolic one (Helion's, often already clamped with sym_min) is clamped too."""
    b = cx.builder
    if isinstance(bound, int) and bound < 0:
        shifted = b.index_op("arith.addi", dim, b.index(bound), "slice_bound")
        return b.index_op("arith.maxsi", shifted, b.index(0), "slice_bound")
    value = b.index(bound) if isinstance(bound, int) else cx.index_value(bound)
    if not isinstance(bound, int):
        value = b.index_op("arith.maxsi", value, b.index(0), "slice_bound")
    return b.index_op("arith.minsi", value, dim, "slice_bound")


def _from_end(cx: RuleContext, idx: int, extent: Any) -> Any:
    """A negative index counts from the end of the dim, as in Python (`x[-1]`)."""
    if isinstance(extent, int):
        return extent + idx
    return cx.builder.index_op(
        "arith.addi", cx.index_value(extent), cx.builder.index(idx), "from_end"
    )


def in_tensor(cx: RuleContext, tile: Tile, extent: Any) -> Slice:
    """The slice of the tile's in-range lanes that lie inside a tensor dim of `extent`: a
    tile may run past the tensor it indexes (a loop over a longer extent, masked by an
    extra_mask), and the slice must not, neither its size nor its offset. No clamp when
    the loop's end is known not to pass the dim."""
    if isinstance(tile.end, int) and isinstance(extent, int) and tile.end <= extent:
        return Slice(tile.offset, tile.size, True)
    dim = cx.index_value(extent)
    if tile.end == dim:
        return Slice(tile.offset, tile.size, True)
    offset = cx.builder.index_op("arith.minsi", cx.as_index(tile.offset), dim, "offset_in_tensor")
    left = cx.builder.index_op("arith.subi", dim, offset, "left")
    return Slice(
        offset,
        cx.builder.index_op("arith.minsi", cx.as_index(tile.size), left, "size_in_tensor"),
        True,
    )


def slice_syntax(cx: RuleContext, parts: Sequence[Slice], value_type: str) -> str:
    """'[offsets] [sizes] [strides]': a size is literal where the value's dim is static."""
    dims = iter(tensor_dims(value_type))
    sizes = []
    for s in parts:
        dim = next(dims) if s.keep else "1"
        if dim != "?":
            sizes.append(dim)
        else:
            sizes.append(s.size if isinstance(s.size, str) else cx.builder.index(s.size))
    return slice_operands([s.offset for s in parts], sizes, [s.stride for s in parts])


def host_ref(cx: RuleContext, node: fx.Node) -> str:
    ref = cx.bound(node.args[0])
    if not isinstance(ref, HostTensorRef):
        raise LoweringError(node, "the tensor is not a host tensor")
    return ref.name


def is_gather(index: Sequence[Any]) -> bool:
    """Whether an index holds a tensor other than a shifted tile (gather on load, scatter
    on store)."""
    return any(_is_tensor_index(e) and shifted_tile(e) is None for e in index)


def has_shifted(index: Sequence[Any]) -> bool:
    """Whether an index holds a shifted tile (`tile.index + k`): a slice where its lanes
    off the tensor touch nothing, a store's or a masked load's; else a gather's lanes
    read the nearest element, as reference mode's do."""
    return any(shifted_tile(e) is not None for e in index)


def index_tensors(
    cx: RuleContext, node: fx.Node, index: Sequence[Any], sym_val: Any
) -> list[tuple[TypedValue, TypedValue | None]]:
    """One int64 index tensor per tensor dim, shaped to broadcast into its own output dims:
    Helion's pointer-arithmetic indexing (a tile is begin + arange(size), an int is 0-d).
    `sym_val` is the result's symbolic meta (block-size dims). A tensor index shorter than
    its block-sized dim is padded with index 0 (see `on_lanes`). Beside each, the lanes a
    slice or tile really has (None for tensor and scalar indices): its block-sized dim may
    be wider than the slice (`x[idx, :]` over 3 columns is 4 lanes wide)."""
    result_val = cx.static_meta(sym_val)
    shape = cx.tensor_arg(host_ref(cx, node)).shape
    entries = _entries(index, len(shape))
    owners = _dim_owners(cx, index, len(shape))
    out_sizes = [
        size for owner, size in zip(owners, result_val.shape, strict=True) if owner is not None
    ]
    sym_sizes = [
        size for owner, size in zip(owners, sym_val.shape, strict=True) if owner is not None
    ]
    places = [
        d for d, owner in enumerate(owners) if owner is not None
    ]  # each index dim's result dim
    bounded = {
        bound.dim for bound in cx.masked_dims(sym_val)
    }  # dims whose padding tile_lanes turns off
    rank, pos, tensors = len(out_sizes), 0, []
    owned = tensor_index_dims(entries)
    broadcast = any(n != 1 for n in owned.values() if owned)
    group = max(owned.values(), default=0)
    group_start: int | None = None
    for dim, entry in enumerate(entries):
        real = None
        if _is_tensor_index(entry):
            t = cx.convert(cx.typed(entry), torch.int64, f"{node.name}_idx{dim}")
            if broadcast:  # right-aligned into the dims the first tensor index opened
                group_start = pos if group_start is None else group_start
                for _ in range(group - t.meta.dim()):
                    t = cx.torch_call(
                        f"{node.name}_idx{dim}_u", torch.ops.aten.unsqueeze.default, t, 0
                    )
                at, k, advance = group_start, group, owned[entry]
            else:
                if t.meta.dim() > 1:  # [n, 1] gives one dim: as [n]
                    t = cx.torch_call(
                        f"{node.name}_idx{dim}_flat", torch.ops.aten.reshape.default, t, [-1]
                    )
                at, k, advance = pos, t.meta.dim(), t.meta.dim()
        else:
            part = _slice(cx, node, entry, shape[dim])
            if part.keep:
                part = _rolled_chunk(cx, entry, part, sym_sizes[pos])
            begin = part.offset if isinstance(part.offset, str) else cx.builder.index(part.offset)
            if part.keep:
                t = arange(
                    cx,
                    f"{node.name}_idx{dim}",
                    begin,
                    part.size,
                    out_sizes[pos],
                    result_val,
                    part.stride,
                )
                if places[pos] not in bounded and _wider_than(cx, entry, part, out_sizes[pos]):
                    real = _before_end(cx, f"{node.name}_idx{dim}", t, begin, part)
            else:
                t = _scalar_index(cx, f"{node.name}_idx{dim}", begin, result_val)
            at, k, advance = pos, t.meta.dim(), t.meta.dim()
        t = _to_rank(cx, f"{node.name}_idx{dim}", t, at, rank - at - k)
        if real is not None:
            real = _to_rank(cx, f"{node.name}_idx{dim}_real", real, at, rank - at - k)
        tensors.append((t, real))
        pos += advance
    return tensors


def _to_rank(cx: RuleContext, name: str, t: TypedValue, before: int, after: int) -> TypedValue:
    """`t` with `before` unit dims in front and `after` behind (its place in the result)."""
    for _ in range(before):
        t = cx.torch_call(f"{name}_u", torch.ops.aten.unsqueeze.default, t, 0)
    for _ in range(after):
        t = cx.torch_call(f"{name}_u", torch.ops.aten.unsqueeze.default, t, -1)
    return t


def _wider_than(cx: RuleContext, entry: Any, part: Slice, out_size: Any) -> bool:
    """Whether the block-sized dim may hold lanes past the slice: a slice shorter than its
    block, or a tile cut at the tensor's end (a tile's own padding is `tile_lanes`')."""
    if part.size == out_size:
        return False
    tile = None if isinstance(entry, slice) else cx.tile_of(entry)
    return tile is None or part.size != tile.size


def _before_end(cx: RuleContext, name: str, t: TypedValue, begin: str, part: Slice) -> TypedValue:
    """The lanes of a slice's index tensor `t` (begin + i * stride) with i < its size."""
    span = (
        cx.builder.index(part.size * part.stride)
        if isinstance(part.size, int)
        else cx.builder.index_op("arith.muli", part.size, cx.builder.index(part.stride), "span")
    )
    end = cx.builder.index_op("arith.addi", begin, span, "slice_end")
    return cx.torch_call(
        f"{name}_real", torch.ops.aten.lt.Tensor, t, _scalar_index(cx, f"{name}_end", end, t.meta)
    )


def _entries(index: Sequence[Any], rank: int) -> list[Any]:
    """The index entry of each host tensor dim (missing trailing entries are slices)."""
    entries = [e for e in index if e is not None]
    return entries + [slice(None)] * (rank - len(entries))


def _padding(t: TypedValue, sizes: Sequence[Any]) -> list[int]:
    """constant_pad_nd's pads that widen an index tensor to the block-sized dims `sizes`
    (`hl.arange(0, 3)` indexing a dim whose block is 4); all 0 when none is shorter."""
    pads: list[int] = []
    for have, want in zip(reversed(t.meta.shape), reversed(sizes)):
        short = isinstance(have, int) and isinstance(want, int) and 1 < have < want
        pads += [0, want - have if short else 0]
    return pads


def on_lanes(
    cx: RuleContext, node: fx.Node, index: Sequence[Any], sym_val: Any, name: str, *, clamp: bool
) -> tuple[list[TypedValue], TypedValue | None]:
    """The index tensors, padded to the block-sized dims, and the lanes that exist: inside
    every tile's extent and every index tensor's own length (None: all of them).

    A tensor index outside the host tensor means what Helion's reference mode makes of it:
    a load (`clamp`) reads the nearest element (the index clamped to [0, size - 1]); a
    store's lane is off. Lanes past a slice or the tensor's end are off. Either way the
    access stays inside the buffer."""
    indices = index_tensors(cx, node, index, sym_val)
    lanes = tile_lanes(cx, f"{name}_lanes", sym_val)
    rank = len(cx.tensor_arg(host_ref(cx, node)).shape)
    sizes = [
        size
        for owner, size in zip(
            _dim_owners(cx, index, rank), cx.static_meta(sym_val).shape, strict=True
        )
        if owner is not None
    ]
    padded = []
    for dim, (entry, (t, real)) in enumerate(zip(_entries(index, rank), indices, strict=True)):
        if real is not None:
            lanes = _both(cx, name, lanes, real)
        pads = _padding(t, sizes)
        if any(pads):
            ones = cx.torch_call(
                f"{name}_real", torch.ops.aten.ones_like.default, t, dtype=torch.bool
            )
            real = cx.torch_call(
                f"{name}_real", torch.ops.aten.constant_pad_nd.default, ones, pads, 0
            )
            lanes = _both(cx, name, lanes, real)
            t = cx.torch_call(f"{name}_padded", torch.ops.aten.constant_pad_nd.default, t, pads, 0)
        if _is_tensor_index(entry):
            extent = cx.tensor_dim(whole(cx, node).value, dim)
            if clamp:
                t = _clamped(cx, f"{node.name}_idx{dim}", t, extent)
            else:
                lanes = _both(cx, name, lanes, _inside(cx, f"{node.name}_idx{dim}", t, extent))
        padded.append(t)
    if (
        lanes is not None and list(lanes.meta.shape) != sizes
    ):  # per-index lanes broadcast over the others
        lanes = cx.torch_call(f"{name}_every", torch.ops.aten.expand.default, lanes, sizes)
    return padded, lanes


def _both(cx: RuleContext, name: str, lanes: TypedValue | None, more: TypedValue) -> TypedValue:
    return (
        more
        if lanes is None
        else cx.torch_call(f"{name}_on", torch.ops.aten.logical_and.default, lanes, more)
    )


def _clamped(cx: RuleContext, name: str, t: TypedValue, extent: str) -> TypedValue:
    """The index clamped to [0, extent - 1] (a Tensor bound: the extent may be dynamic)."""
    last = cx.builder.fresh(f"{name}_last")
    cx.builder.emit(f"{last} = arith.subi {extent}, {cx.builder.index(1)} : index")
    low = cx.torch_call(f"{name}_low", torch.ops.aten.clamp_min.default, t, 0)
    return cx.torch_call(
        f"{name}_clamped",
        torch.ops.aten.minimum.default,
        low,
        _scalar_index(cx, f"{name}_last", last, t.meta),
    )


def _inside(cx: RuleContext, name: str, t: TypedValue, extent: str) -> TypedValue:
    """The lanes whose index lies in [0, extent)."""
    low = cx.torch_call(f"{name}_low", torch.ops.aten.ge.Scalar, t, 0)
    high = cx.torch_call(
        f"{name}_high",
        torch.ops.aten.lt.Tensor,
        t,
        _scalar_index(cx, f"{name}_extent", extent, t.meta),
    )
    return cx.torch_call(f"{name}_inside", torch.ops.aten.logical_and.default, low, high)


def _dim_owners(cx: RuleContext, index: Sequence[Any], rank: int) -> list[Any]:
    """The index entry each result dim comes from: None adds one, a tensor its rank,
    a tile or slice one, an int or scalar none (missing trailing entries are slices)."""
    padded = [*index, *[slice(None)] * (rank - len([e for e in index if e is not None]))]
    owned = tensor_index_dims(padded)
    owners: list[Any] = []
    for entry in padded:
        if _is_tensor_index(entry):
            owners += [entry] * owned[entry]
        elif entry is None or isinstance(entry, slice) or cx.tile_of(entry) is not None:
            owners.append(entry)
    return owners


def tensor_index_dims(index: Sequence[Any]) -> dict[fx.Node, int]:
    """How many result dims each tensor index gives, by Helion's rule: adjacent tensor
    indices of which one has several dims broadcast together (the first one gives the
    broadcast shape's dims, the others none); otherwise each gives one dim (1-D ones index
    the cartesian product), a 0-d one none."""
    tensors = [e for e in index if _is_tensor_index(e)]
    positions = [i for i, e in enumerate(index) if _is_tensor_index(e)]
    ranks = [t.meta["val"].dim() for t in tensors]
    broadcast = any(r > 1 for r in ranks) and positions == list(
        range(positions[0], positions[-1] + 1)
    )
    if broadcast:
        return {t: (max(ranks) if i == 0 else 0) for i, t in enumerate(tensors)}
    return {t: min(r, 1) for t, r in zip(tensors, ranks)}


def _reshaped_on_store(value: Any, target: Any) -> bool:
    """A stored value of another rank than its subscript (`buf[:] = x[i]`, `y[i] = x[i:i+1]`)
    or with unit dims where the subscript has wider ones (`out[t, :] = col[t][:, None]`):
    Helion broadcasts it over the subscript (unit dims dropped where it has fewer)."""
    return value.dim() != target.dim() or any(
        isinstance(a, int) and a == 1 and str(a) != str(b)
        for a, b in zip(value.shape, target.shape)
    )


def operand_like(cx: RuleContext, arg: Any, sym_val: Any, name: str) -> TypedValue:
    """A node's value, or a Python number as a tensor of `sym_val`'s shape and dtype."""
    if isinstance(arg, fx.Node) and isinstance(arg.meta.get("val"), torch.Tensor):
        return cx.typed(arg)
    if isinstance(arg, fx.Node) and isinstance(
        arg.meta.get("val"), torch.SymInt
    ):  # `tile.block_size`
        static = cx.static_meta(sym_val)
        return TypedValue(
            _fill_with_index(cx, f"{name}_value", cx.index_value(arg), mlir_type(static)), static
        )
    if not isinstance(arg, (bool, int, float)):
        raise HelionMLIRError(f"a value of type {type(arg).__name__} cannot be stored")
    static = cx.static_meta(sym_val)
    return TypedValue(
        emit_full(cx, f"{name}_value", list(sym_val.shape), arg, sym_val.dtype, mlir_type(static)),
        static,
    )


def _fill_with_index(cx: RuleContext, name: str, index: str, ty: str) -> Value:
    """A static tensor of type `ty` filled with an index value converted to its elements."""
    b, elt = cx.builder, element_type(ty)
    scalar, empty, ssa = b.fresh(f"{name}_elt"), b.fresh(f"{name}_empty"), b.fresh(name)
    for line in index_to_element(index, elt, scalar):
        b.emit(line)
    b.empty(empty, [], ty)
    b.emit(f"{ssa} = linalg.fill ins({scalar} : {elt}) outs({empty} : {ty}) -> {ty}")
    return Value(ssa, ty)


def subscript_meta(cx: RuleContext, node: fx.Node, index: Sequence[Any], dtype: torch.dtype) -> Any:
    """The symbolic meta of `host[index]`: what a Python number stored there broadcasts to."""
    host = node.args[0].meta["val"]
    entries = [*index, *[slice(None)] * (host.dim() - len([e for e in index if e is not None]))]
    sizes: list[Any] = []
    dim = 0
    for entry in entries:
        if entry is None:
            sizes.append(1)
            continue
        if _is_tensor_index(entry):
            sizes += list(entry.meta["val"].shape)
        elif isinstance(entry, slice):
            sizes.append(_slice_length(node, host.shape[dim], entry))
        elif cx.tile_of(entry) is not None:
            sizes.append(entry.meta["val"] if isinstance(entry, fx.Node) else entry)
        dim += 1
    return fake_empty(host, sizes, dtype)


def _slice_length(node: fx.Node, size: Any, entry: slice) -> Any:
    """How many elements of a dim of `size` the slice takes, as Python counts them: bounds
    from the end if negative, clamped to the dim; symbolic where the size or a bound is."""
    step = 1 if entry.step is None else entry.step
    start, stop = (
        b.meta["val"] if isinstance(b, fx.Node) else b for b in (entry.start, entry.stop)
    )
    if (
        not isinstance(step, int)
        or step < 1
        or not all(isinstance(b, int | torch.SymInt | None) for b in (start, stop))
    ):
        raise LoweringError(node, f"storing into the slice {entry} is not supported")
    if isinstance(size, int) and all(isinstance(b, int | None) for b in (start, stop)):
        return len(range(*slice(start, stop, step).indices(size)))
    first = 0 if start is None else _bound_in_dim(start, size)
    last = size if stop is None else _bound_in_dim(stop, size)
    return (torch.sym_max(last - first, 0) + step - 1) // step


def _bound_in_dim(bound: Any, size: Any) -> Any:
    """A slice bound in [0, size], as `_slice_bound` clamps it in the code: an int below 0
    counts from the end, a symbolic one is clamped at 0."""
    if isinstance(bound, int):
        return torch.sym_max(size + bound, 0) if bound < 0 else torch.sym_min(bound, size)
    return torch.sym_min(torch.sym_max(bound, 0), size)


def fake_empty(like: Any, shape: list[Any], dtype: torch.dtype = torch.int64) -> Any:
    """A FakeTensor in `like`'s fake mode: the meta of a tensor a rule builds itself."""
    with like.fake_mode:
        return torch.empty(shape, dtype=dtype)


def arange(
    cx: RuleContext, name: str, begin: str, size: Any, out_size: Any, like: Any, stride: int = 1
) -> TypedValue:
    """tensor.generate of begin + i * stride as i64 (`out_size` is the meta's size, maybe
    symbolic)."""
    size = size if isinstance(size, str) else cx.builder.index(size)
    meta = fake_empty(like, [out_size])
    ty = mlir_type(meta)
    ssa, i, pos = (
        cx.builder.fresh(name),
        cx.builder.fresh(f"{name}_i"),
        cx.builder.fresh(f"{name}_pos"),
    )
    cast = cx.builder.fresh(f"{name}_elt")
    dyn = [size] if tensor_dims(ty)[0] == "?" else []
    step, body = i, []
    if stride != 1:
        step = cx.builder.fresh(f"{name}_step")
        body.append(f"{step} = arith.muli {i}, {cx.builder.index(stride)} : index")
    body += [
        f"{pos} = arith.addi {begin}, {step} : index",
        f"{cast} = arith.index_cast {pos} : index to i64",
        f"tensor.yield {cast} : i64",
    ]
    cx.builder.generate(ssa, dyn, [i], body, ty)
    return TypedValue(Value(ssa, ty), meta)


def _scalar_index(cx: RuleContext, name: str, index: str, like: Any) -> TypedValue:
    as_i64, ssa = cx.builder.fresh(f"{name}_i64"), cx.builder.fresh(name)
    cx.builder.emit(f"{as_i64} = arith.index_cast {index} : index to i64")
    cx.builder.emit(f"{ssa} = tensor.from_elements {as_i64} : tensor<i64>")
    return TypedValue(Value(ssa, "tensor<i64>"), fake_empty(like, []))


def whole(cx: RuleContext, node: fx.Node) -> TypedValue:
    """The host tensor's current value with its meta (for gather/scatter)."""
    return TypedValue(cx.host_tensor(host_ref(cx, node)), node.args[0].meta["val"])


def gather(
    cx: RuleContext, node: fx.Node, index: Sequence[Any], sym_val: Any, name: str, mask: Any = None
) -> Value:
    """torch.aten.index.Tensor with one broadcast index tensor per dim. Lanes that are
    tile padding or that an extra_mask turns off read element 0 instead of an index that
    may be out of bounds, and give 0. An index outside the tensor reads the nearest
    element, or 0 under an extra_mask (as reference mode's `load` does)."""
    result_val = cx.static_meta(sym_val)
    indices, lanes = on_lanes(cx, node, index, sym_val, name, clamp=mask is None)
    if mask is not None:
        indices = [
            cx.torch_call(f"{name}_safe", torch.ops.aten.mul.Tensor, t, mask) for t in indices
        ]
    if lanes is not None:
        indices = [
            cx.torch_call(f"{name}_safe", torch.ops.aten.mul.Tensor, t, lanes) for t in indices
        ]
    got = cx.torch_call(name, torch.ops.aten.index.Tensor, whole(cx, node), indices)
    if lanes is not None:
        zero = cx.torch_call(f"{name}_zero", torch.ops.aten.zeros_like.default, got)
        got = cx.torch_call(f"{name}_in_range", torch.ops.aten.where.self, lanes, got, zero)
    if None not in index:
        return cx.coerce(got.value, mlir_type(result_val))
    owners = _dim_owners(cx, index, len(cx.tensor_arg(host_ref(cx, node)).shape))
    core = [d for owner, d in zip(owners, tensor_dims(mlir_type(result_val))) if owner is not None]
    tile = cx.coerce(
        got.value, f"tensor<{''.join(d + 'x' for d in core)}{element_type(mlir_type(result_val))}>"
    )
    return expand_dims(cx, name, tile, owners, mlir_type(result_val))


def scatter(
    cx: RuleContext,
    node: fx.Node,
    index: Sequence[Any],
    value: TypedValue,
    sym_val: Any,
    combine: Any,
    name: str,
    mask: Any = None,
) -> None:
    """A loop nest over the value's elements: dest[idx(p)] = combine(dest[idx(p)], value[p])
    (or = value[p]). Sequential, so duplicate indices accumulate like atomics. Lanes that
    are tile padding, that an extra_mask turns off or whose index is outside the tensor
    write nothing."""
    padded, lanes = on_lanes(cx, node, index, sym_val, name, clamp=False)
    indices = [t.value for t in padded]
    if mask is not None:
        extra = mask_lanes(cx, name, mask, value)
        lanes = _both(cx, name, lanes, extra)
    lane_mask = None if lanes is None else lanes.value
    dest = cx.host_tensor(host_ref(cx, node))
    b = cx.builder

    def element(ivs: list[str], current: str) -> str:
        if lane_mask is None:
            return _scatter_element(cx, name, value, indices, ivs, current, dest.type, combine)
        # the element (and the destination it would read) only for lanes that are on
        on, updated = b.fresh(f"{name}_on"), b.fresh(f"{name}_updated")
        b.emit(f"{on} = tensor.extract {lane_mask.ssa}[{', '.join(ivs)}] : {lane_mask.type}")
        b.emit(f"{updated} = scf.if {on} -> ({dest.type}) {{")
        with cx.region():
            written = _scatter_element(cx, name, value, indices, ivs, current, dest.type, combine)
            b.emit(f"scf.yield {written} : {dest.type}")
        b.emit(f"}} else {{\n  scf.yield {current} : {dest.type}\n}}")
        return updated

    updated = _element_loops(cx, name, value.value, dest, element)
    cx.set_host_tensors({host_ref(cx, node): Value(updated, dest.type)})


def _element_loops(
    cx: RuleContext,
    name: str,
    value: Value,
    dest: Value,
    body: Callable[[list[str], str], str],
    ivs: Sequence[str] = (),
) -> str:
    """scf.for over each element of `value` (outer dims first) carrying `dest`; `body`
    takes the ivs and the carried tensor and returns its update."""
    dims = tensor_dims(value.type)
    if len(ivs) == len(dims):
        return body(list(ivs), dest.ssa)
    b, d = cx.builder, len(ivs)
    upper = cx.tensor_dim(value, d) if dims[d] == "?" else b.index(int(dims[d]))
    iv, carry, result = b.fresh(f"{name}_i{d}"), b.fresh(f"{name}_dest"), b.fresh(f"{name}_rows")
    b.open_for("scf", iv, upper, result, [(carry, dest.ssa, dest.type)])
    with cx.region():
        updated = _element_loops(cx, name, value, Value(carry, dest.type), body, [*ivs, iv])
        b.loop_yield("scf", [(updated, dest.type)])
    b.emit("}")
    return result


def _scatter_element(
    cx: RuleContext,
    name: str,
    value: TypedValue,
    indices: list[Value],
    ivs: list[str],
    dest: str,
    dest_type: str,
    combine: Any,
) -> str:
    """dest with value[ivs] written (or combined) at the coordinates the index tensors give."""
    b = cx.builder
    coords = [_element_index(cx, t, ivs, name) for t in indices]
    elt = element_type(dest_type)
    item = b.fresh(f"{name}_item")
    b.emit(f"{item} = tensor.extract {value.value.ssa}[{', '.join(ivs)}] : {value.value.type}")
    if combine is not None:
        old, combined = b.fresh(f"{name}_old"), b.fresh(f"{name}_new")
        b.emit(f"{old} = tensor.extract {dest}[{', '.join(coords)}] : {dest_type}")
        b.emit(f"{combined} = {_element_op(combine, elt)} {old}, {item} : {elt}")
        item = combined
    updated = b.fresh(f"{name}_updated")
    b.emit(f"{updated} = tensor.insert {item} into {dest}[{', '.join(coords)}] : {dest_type}")
    return updated


def _element_index(cx: RuleContext, index: Value, ivs: list[str], name: str) -> str:
    """The destination coordinate at this element: broadcast (size-1) dims read 0."""
    coords = [
        cx.builder.index(0) if size == "1" else iv for size, iv in zip(tensor_dims(index.type), ivs)
    ]
    raw, ssa = cx.builder.fresh(f"{name}_at"), cx.builder.fresh(f"{name}_coord")
    cx.builder.emit(f"{raw} = tensor.extract {index.ssa}[{', '.join(coords)}] : {index.type}")
    cx.builder.emit(f"{ssa} = arith.index_cast {raw} : i64 to index")
    return ssa


# Element-wise combines of scatters: (float op, integer op).
ELEMENT_OPS: dict[Any, tuple[str, str]] = {
    torch.ops.aten.add.Tensor: ("arith.addf", "arith.addi"),
    torch.ops.aten.maximum.default: ("arith.maximumf", "arith.maxsi"),
    torch.ops.aten.minimum.default: ("arith.minimumf", "arith.minsi"),
    torch.ops.aten.bitwise_and.Tensor: ("", "arith.andi"),
    torch.ops.aten.bitwise_or.Tensor: ("", "arith.ori"),
    torch.ops.aten.bitwise_xor.Tensor: ("", "arith.xori"),
}


def _element_op(combine: Any, elt: str) -> str:
    float_op, int_op = ELEMENT_OPS[combine]
    op = float_op if elt.startswith(("f", "bf")) else int_op
    if not op:
        raise LoweringError(None, f"{combine} on {elt} elements is not supported")
    return op


def read(cx: RuleContext, acc: Access, name: str) -> Value:
    """extract_slice of the in-range lanes of the tensor's current value, tensor.pad with
    0 to the tile's block shape, then unit dims for None entries."""
    source = cx.host_tensor(acc.name)
    plain = acc.tile_type == acc.result_type and not acc.padded
    ssa = cx.builder.fresh(name if plain else f"{name}_valid" if acc.padded else f"{name}_tile")
    if is_empty(source.type):
        _empty_slice(cx, ssa, acc)
    else:
        where = slice_syntax(cx, acc.parts, acc.valid_type)
        cx.builder.extract_slice(ssa, source.ssa, source.type, where, acc.valid_type)
    tile = Value(ssa, acc.valid_type)
    tile_name = name if acc.tile_type == acc.result_type else f"{name}_tile"
    if acc.broadcast:
        tile = _broadcast_lanes(cx, tile_name, tile, [p.size for p in acc.parts if p.keep], acc)
    elif acc.padded:
        kept = [p for p in acc.parts if p.keep]
        lanes = [p.lane for p in kept]
        tile = pad(cx, tile_name, tile, [p.size for p in kept], acc.tile_type, lanes)
    if acc.tile_type == acc.result_type:
        return tile
    return expand_dims(cx, name, tile, acc.owners, acc.result_type)


def _broadcast_lanes(
    cx: RuleContext, name: str, value: Value, sizes: Sequence[Any], acc: Access
) -> Value:
    """The slice padded to the tile shape with its broadcast dims kept at 1, then every
    lane of those dims reads element 0."""
    dims = tensor_dims(acc.tile_type)
    unit = format_tensor_type(
        [1 if d in acc.broadcast else None if w == "?" else int(w) for d, w in enumerate(dims)],
        element_type(acc.tile_type),
    )
    if value.type != unit:
        value = pad(cx, f"{name}_unit", value, sizes, unit)
    exact = [size for size, w in zip(sizes, dims, strict=True) if w == "?"]  # a row read whole
    value = broadcast_value(cx, name, value, acc.tile_type, exact)
    bounds = [
        LaneBound(d, size)
        for d, size in zip(acc.broadcast, acc.broadcast_sizes)
        if not isinstance(size, int) or size < int(dims[d])
    ]
    if not bounds:
        return value
    meta = torch.empty(
        [], dtype=acc.dtype, device="meta"
    )  # select_lanes reads the dtype of its fill
    return select_lanes(cx, f"{name}_in_range", TypedValue(value, meta), bounds, 0)


def broadcast_value(
    cx: RuleContext, name: str, value: Value, ty: str, sizes: Sequence[Any] = ()
) -> Value:
    """`value` as type `ty` by torch's rule (dims aligned at the end, unit dims repeated);
    a value of higher rank whose extra leading dims are 1 drops them. `sizes`: the extents
    of `ty`'s dynamic dims, in order (SymInts or index values)."""
    src, out = tensor_dims(value.type), tensor_dims(ty)
    if len(sizes) != out.count("?"):
        raise HelionMLIRError(f"broadcasting {value.type} to {ty} needs its dynamic sizes")
    if len(src) > len(out):
        value = drop_unit_dims(
            cx, f"{name}_drop", value, list(range(len(src) - len(out), len(src)))
        )
        src = tensor_dims(value.type)
    if src == out:
        return cx.coerce(value, ty)
    b, elt = cx.builder, element_type(ty)
    ds = [f"d{d}" for d in range(len(out))]
    lead = len(out) - len(src)
    source = ", ".join(
        "0" if size == "1" != out[lead + d] else ds[lead + d] for d, size in enumerate(src)
    )
    empty, ssa, lane, last = (
        b.fresh(f"{name}_empty"),
        b.fresh(name),
        b.fresh(f"{name}_in"),
        b.fresh(f"{name}_out"),
    )
    extents = [cx.as_index(s) if isinstance(s, str | int) else cx.index_value(s) for s in sizes]
    b.empty(empty, extents, ty)
    maps = (f"affine_map<({', '.join(ds)}) -> ({source})>", identity_map(len(ds)))
    args = ((lane, elt), (last, elt))
    body = (f"linalg.yield {lane} : {elt}",)
    b.generic(ssa, GenericOp(len(ds), maps, ((value.ssa, value.type),), empty, ty, args, body))
    return Value(ssa, ty)


def is_empty(ty: str) -> bool:
    """A tensor type with a static 0 dim: no slice of it may name an offset (MLIR's
    verifier rejects offset 0 in a dim of size 0), and it has no lanes to read or write."""
    return "0" in tensor_dims(ty)


def _empty_slice(cx: RuleContext, ssa: str, acc: Access) -> None:
    """The in-range lanes of an empty tensor: tensor.empty of the slice's sizes (one is 0)."""
    dims = iter(tensor_dims(acc.valid_type))
    sizes = [next(dims) if p.keep else "1" for p in acc.parts]
    dynamic = [cx.as_index(p.size) for p, size in zip(acc.parts, sizes) if p.keep and size == "?"]
    cx.builder.empty(ssa, dynamic, acc.valid_type)


def write(cx: RuleContext, acc: Access, value: Value, name: str) -> None:
    """Store the in-range lanes of a tile-shaped value (no newaxis dims) into the
    tensor's current value."""
    dest = cx.host_tensor(acc.name)
    if is_empty(dest.type):
        return
    if len(tensor_dims(value.type)) == len(acc.owners) != len(tensor_dims(acc.tile_type)):
        # shaped like its subscript (`x[None, t] = y` gives [1, t]): stores write the
        # tensor's own dims
        value = drop_unit_dims(
            cx,
            f"{name}_tile",
            value,
            [d for d, owner in enumerate(acc.owners) if owner is not None],
        )
    value = cx.coerce(value, acc.tile_type)
    if acc.padded:
        valid = cx.builder.fresh(f"{name}_valid")
        part = slice_syntax(
            cx,
            [Slice(p.lane, p.size, True) for p in acc.parts if p.keep],
            acc.valid_type,
        )
        cx.builder.extract_slice(valid, value.ssa, value.type, part, acc.valid_type)
        value = Value(valid, acc.valid_type)
    parts = acc.parts
    if acc.guard is not None and not any(p.keep for p in parts):
        value, parts = _guarded_element(cx, name, value, parts, acc.guard)
    elif tensor_dims(value.type) and not all(p.keep for p in parts):
        # full rank: MLIR's folding of rank-reducing inserts can mis-map the dropped dims
        dims = iter(tensor_dims(value.type))
        full_dims = "".join((next(dims) if p.keep else "1") + "x" for p in parts)
        full = f"tensor<{full_dims}{element_type(value.type)}>"
        value = expand_dims(
            cx, f"{name}_full", value, [slice(None) if p.keep else None for p in parts], full
        )
        parts = [Slice(p.offset, p.size if p.keep else 1, True, p.stride) for p in parts]
    where = slice_syntax(cx, parts, value.type)
    parallel = "tensor.parallel_insert_slice"
    if cx.add_parallel_insert(
        insert_slice_op(parallel, value.ssa, value.type, dest.ssa, dest.type, where)
    ):
        return
    ssa = cx.builder.fresh(name)
    cx.builder.insert_slice(ssa, value.ssa, value.type, dest.ssa, dest.type, where)
    cx.set_host_tensors({acc.name: Value(ssa, dest.type)})


def drop_unit_dims(cx: RuleContext, name: str, value: Value, kept: Sequence[int]) -> Value:
    """tensor.collapse_shape keeping the dims `kept`; the others (unit dims) join a neighbour."""
    dims = tensor_dims(value.type)
    groups: list[list[int]] = []
    for d in range(len(dims)):
        if d in kept or not groups:
            groups.append([d])
        else:
            groups[-1].append(d)
    if kept and kept[0] != 0:  # leading unit dims join the first kept dim
        groups = [groups[0] + groups[1], *groups[2:]]
    ty = f"tensor<{''.join(dims[d] + 'x' for d in kept)}{element_type(value.type)}>"
    reassociation = (
        ", ".join("[" + ", ".join(str(d) for d in g) + "]" for g in groups) if kept else ""
    )
    ssa = cx.builder.fresh(name)
    cx.builder.emit(
        f"{ssa} = tensor.collapse_shape {value.ssa} [{reassociation}] : {value.type} into {ty}"
    )
    return Value(ssa, ty)


def _guarded_element(
    cx: RuleContext, name: str, value: Value, parts: list[Slice], guard: str
) -> tuple[Value, list[Slice]]:
    """A store of one element as a full-rank slice whose first size is 1 when `guard`
    holds, else 0 (an index outside the tensor writes nothing)."""
    b = cx.builder
    rank, elt = len(parts), element_type(value.type)
    ones = f"tensor<{'1x' * rank}{elt}>"
    if tensor_dims(value.type):
        value = cx.coerce(value, f"tensor<{'1x' * len(tensor_dims(value.type))}{elt}>")
        flat = b.fresh(f"{name}_scalar")
        b.emit(f"{flat} = tensor.collapse_shape {value.ssa} [] : {value.type} into tensor<{elt}>")
        value = Value(flat, f"tensor<{elt}>")
    full = b.fresh(f"{name}_full")
    unit_shape = ", ".join("1" for _ in parts)
    b.emit(
        f"{full} = tensor.expand_shape {value.ssa} [] output_shape [{unit_shape}] "
        f": {value.type} into {ones}"
    )
    count = _select(cx, guard, b.index(1), b.index(0))
    piece_type = f"tensor<?x{'1x' * (rank - 1)}{elt}>"
    piece = b.fresh(f"{name}_piece")
    where = slice_operands(
        ["0"] * len(parts), [count, *("1" for _ in parts[1:])], ["1"] * len(parts)
    )
    b.extract_slice(piece, full, ones, where, piece_type)
    return Value(piece, piece_type), [
        Slice(parts[0].offset, count, True),
        *(Slice(p.offset, 1, True) for p in parts[1:]),
    ]


def masked(
    cx: RuleContext, name: str, mask: Any, value: TypedValue, other: TypedValue | None = None
) -> TypedValue:
    """where(mask, value, other): lanes an extra_mask turns off keep `other` (default 0)."""
    if mask is None:
        return value
    if other is None:
        other = cx.torch_call(f"{name}_zero", torch.ops.aten.zeros_like.default, value)
    return cx.torch_call(f"{name}_masked", torch.ops.aten.where.self, mask, value, other)


def mask_lanes(cx: RuleContext, name: str, mask: fx.Node, value: TypedValue) -> TypedValue:
    """The extra_mask broadcast to the value's shape (one i1 per scattered element)."""
    every = cx.torch_call(
        f"{name}_every", torch.ops.aten.ones_like.default, value, dtype=torch.bool
    )
    return cx.torch_call(f"{name}_lanes", torch.ops.aten.logical_and.default, cx.typed(mask), every)


def tile_lanes(cx: RuleContext, name: str, sym_val: Any) -> TypedValue | None:
    """An i1 tensor of the value's block shape, true on the lanes inside every tile's
    extent (and every jagged row); None when no dim can hold padding."""
    bounds = cx.masked_dims(sym_val)
    if not bounds:
        return None
    like = cx.static_meta(sym_val)
    meta = fake_empty(like, list(like.shape), torch.bool)
    ty = mlir_type(meta)
    b = cx.builder
    lanes = [b.fresh(f"{name}_i{d}") for d in range(meta.dim())]
    dynamic = [cx.index_value(size) for size, d in zip(sym_val.shape, tensor_dims(ty)) if d == "?"]
    body: list[str] = []
    keep = lane_condition(cx, name, bounds, lanes, body)
    ssa = b.fresh(name)
    b.generate(ssa, dynamic, lanes, [*body, f"tensor.yield {keep} : i1"], ty)
    return TypedValue(Value(ssa, ty), meta)


@lowers(memory_ops.load)
def load(cx: RuleContext) -> Value:
    """tensor.extract_slice of the tensor's current value (expand_shape for None)."""
    node = cx.node
    target, index, mask = node.args[0], node.args[1], node.args[2]
    if isinstance(cx.bound(target), Value):
        return _index_value(cx, node, target, index)
    if is_gather(index):
        value = gather(cx, node, index, node.meta["val"], node.name, mask)
    elif mask is None and has_shifted(index):
        value = _nearest_lanes(cx, node, index)
    else:
        value = _read_rows(cx, node, access(cx, node, index, node.meta["val"]), node.name)
    if mask is None:
        return value
    return masked(cx, node.name, mask, TypedValue(value, cx.meta(node))).value


def _read_rows(cx: RuleContext, node: fx.Node, acc: Access, name: str) -> Value:
    """The access's lanes read, those past a jagged row's end 0, as padding is."""
    value = read(cx, acc, name)
    rows = [bound for bound in cx.masked_dims(node.meta["val"]) if bound.parent is not None]
    if not rows:
        return value
    return select_lanes(cx, f"{name}_rows", TypedValue(value, cx.meta(node)), rows, 0)


def _nearest_lanes(cx: RuleContext, node: fx.Node, index: Sequence[Any]) -> Value:
    """An unmasked load at a shifted tile: where every shifted tile's lanes lie inside the
    tensor (the usual case: a segment's rows), its slice; else the gather, whose lanes off
    the tensor read the nearest element, as reference mode's do."""
    b, name, sym_val = cx.builder, node.name, node.meta["val"]
    ty = mlir_type(cx.static_meta(sym_val))
    shape = cx.tensor_arg(host_ref(cx, node)).shape
    entries = [e for e in index if e is not None]
    inside = [
        _inside_dim(cx, shifted, shape[dim])
        for dim, entry in enumerate(entries)
        if (shifted := shifted_tile(entry)) is not None
    ]
    while len(inside) > 1:
        inside = [b.binary("arith.andi", inside[0], inside[1], "i1", "inside"), *inside[2:]]
    result = b.fresh(name)
    b.emit(f"{result} = scf.if {inside[0]} -> ({ty}) {{")
    with cx.region():
        inner = access(cx, node, index, sym_val, shifted_inside=True)
        whole = _read_rows(cx, node, inner, f"{name}_slice")
        b.emit(f"scf.yield {cx.coerce(whole, ty).ssa} : {ty}")
    b.emit("} else {")
    with cx.region():
        nearest = gather(cx, node, index, sym_val, f"{name}_nearest")
        b.emit(f"scf.yield {cx.coerce(nearest, ty).ssa} : {ty}")
    b.emit("}")
    return Value(result, ty)


def _inside_dim(cx: RuleContext, shifted: ShiftedTile, extent: Any) -> str:
    """i1: the shifted tile's in-range lanes all lie inside a dim of `extent`."""
    b = cx.builder
    start, end = _shifted_span(cx, shifted)
    low = b.index_op("arith.cmpi sge,", start, b.index(0), "starts_inside")
    high = b.index_op("arith.cmpi sle,", end, cx.index_value(extent), "ends_inside")
    return b.binary("arith.andi", low, high, "i1", "inside")


def _index_value(cx: RuleContext, node: fx.Node, target: fx.Node, index: Sequence[Any]) -> Value:
    """Indexing a device value (tile.index[None, :]) only inserts unit dims."""
    if any(i is not None and i != slice(None) for i in index):
        raise LoweringError(node, f"indexing a device tensor with {list(index)} is not supported")
    return expand_dims(cx, node.name, cx.value(target), index, mlir_type(cx.meta(node)))


@lowers(memory_ops.store)
def store(cx: RuleContext) -> None:
    """tensor.parallel_insert_slice in scf.forall, else tensor.insert_slice. A Python number
    (`out[tile] = 1.0`) is stored as a tile filled with it."""
    node = cx.node
    index, value_node, mask = node.args[1], node.args[2], node.args[3]
    name = host_ref(cx, node)
    dtype = cx.tensor_arg(name).dtype
    sym_val = value_node.meta.get("val") if isinstance(value_node, fx.Node) else None
    if not isinstance(sym_val, torch.Tensor):
        sym_val = subscript_meta(cx, node, index, dtype)
    value = cx.convert(operand_like(cx, value_node, sym_val, node.name), dtype, node.name)
    if not is_gather(index) and _reshaped_on_store(
        sym_val, target := subscript_meta(cx, node, index, dtype)
    ):
        static = cx.static_meta(target)
        ty = mlir_type(static)
        sizes = [s for s, d in zip(target.shape, tensor_dims(ty), strict=True) if d == "?"]
        value = TypedValue(
            broadcast_value(cx, f"{node.name}_bcast", value.value, ty, sizes), static
        )
        sym_val = target
    if is_gather(index):
        scatter(cx, node, index, value, sym_val, None, node.name, mask)
        return
    acc = access(cx, node, index, sym_val, dtype)
    rows = any(bound.parent is not None for bound in cx.masked_dims(sym_val))
    if mask is not None or rows:  # lanes off, or past a jagged row's end, keep what was there
        old = TypedValue(read(cx, acc, f"{node.name}_old"), value.meta)
        if mask is not None:
            value = masked(cx, node.name, mask, value, old)
        if rows:
            value = masked(
                cx, f"{node.name}_rows", tile_lanes(cx, f"{node.name}_lanes", sym_val), value, old
            )
    write(cx, acc, value.value, node.name)
    return


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
def atomic_rmw(cx: RuleContext) -> Value:
    """Read-modify-write: extract_slice, torch combine op, insert_slice; returns the old value."""
    node = cx.node
    index, value_node = node.args[1], node.args[2]
    if is_gather(index) or has_shifted(index):
        return _atomic_scatter(cx, node)
    acc = access(cx, node, index, node.meta["val"])
    old = TypedValue(read(cx, acc, f"{node.name}_old"), cx.meta(node))
    new = cx.convert(
        operand_like(cx, value_node, node.meta["val"], node.name), old.meta.dtype, node.name
    )
    combine = ATOMIC_COMBINES[node.target]
    if combine is not None:
        new = cx.torch_call(f"{node.name}_new", combine, old, new)
    write(cx, acc, new.value, node.name)
    return old.value


def _atomic_scatter(cx: RuleContext, node: fx.Node) -> Value:
    """Tensor-indexed atomics: a sequential element loop, so duplicate indices combine."""
    index, value_node = node.args[1], node.args[2]
    old = gather(cx, node, index, node.meta["val"], f"{node.name}_old")
    value = cx.convert(
        operand_like(cx, value_node, node.meta["val"], node.name), node.meta["val"].dtype, node.name
    )
    combine = ATOMIC_COMBINES[node.target]
    if combine is None:
        raise LoweringError(node, "tensor-indexed atomic_xchg is not supported")
    scatter(cx, node, index, value, node.meta["val"], combine, node.name)
    return old


@lowers(atomic_ops.atomic_cas)
def atomic_cas(cx: RuleContext) -> Value:
    """Read-modify-write: where(old == expected, value, old) (old value returned)."""
    node = cx.node
    index, expected, value_node = node.args[1], node.args[2], node.args[3]
    if is_gather(index) or has_shifted(index):
        raise LoweringError(node, "tensor-indexed atomic_cas is not supported")
    acc = access(cx, node, index, node.meta["val"])
    old = TypedValue(read(cx, acc, f"{node.name}_old"), cx.meta(node))
    expected_value = operand_like(cx, expected, node.meta["val"], f"{node.name}_expected")
    same = cx.torch_call(f"{node.name}_eq", torch.ops.aten.eq.Tensor, old, expected_value)
    value = operand_like(cx, value_node, node.meta["val"], node.name)
    new = cx.torch_call(f"{node.name}_new", torch.ops.aten.where.self, same, value, old)
    write(cx, acc, new.value, node.name)
    return old.value
