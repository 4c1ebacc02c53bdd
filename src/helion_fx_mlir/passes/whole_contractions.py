"""A loop over K tiles whose body is one contraction becomes that contraction over all of K.

`for tile_k in hl.tile(K): acc = torch.addmm(acc, x[tm, tk], y[tk, tn])` arrives (after
`fold_accumulations`) as a loop carrying `acc` whose body slices one K block of each operand
and runs `matmul(a, b, acc)`. When the K blocks tile K exactly (no padded last K block;
rows and columns past M and N may be padded), the loop is one matmul of the whole K strips
into `acc`: the vector schedule then keeps the accumulator in registers across all of K
instead of storing and reloading it per block. The products are added into the
accumulator in the same order as before. Where B's rows are strided (a block of N) and its
whole strip is too large to copy into a contiguous buffer (`packed_operands.py`), the loop
instead steps over as many K blocks at once as make a strip that is not.

A last K block that K fills only in part (Helion's masked K tail: the block's slice sized
by `affine.min`, padded with zeros up to the block) is contracted after the whole blocks,
over its valid K rows only (the padded rows add zeros: no pad, no copy, a quarter of the
FMAs where 16 of 64 rows are valid); the whole blocks are then one contraction as above.
1024 x 1040 x 1024 f32 in 64^3 blocks, 2 threads, Sapphire Rapids: 8.3-8.5 -> 6.9-7.0 ms
with the tail padded, 6.3 without (torch.mm 5.6-5.8).

Where M or N do not divide their blocks, every program's slices are sized by `affine.min`
and padded up to the block, though only the grid's last row and column of programs pad
anything. Most such grids arrive split (`grid_edges.py`: the whole tiles' grid static);
where one does not (dynamic sizes, too few programs, loops carrying several tiles),
padded whole strips would be copied per program. So the loop is versioned: `if` no
pad outside K adds a row, a copy of it whose strips are sliced at the block's shape, no
pad, and contracted as above; else the loop as it was (whole padded strips where K has no
tail, the loop itself where it has one). One process, 2 threads: 1040^3 f32 in 64^3
blocks 10.5-10.6 -> 9.5 ms, 1040 x 1024 x 1040 11.0 -> 8.7, 1000^3 in the default 16^3
blocks 15.9 -> 12.9 (torch.mm 5.4-5.7).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, scf, tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import (
    constant_int,
    defined_in,
    lane_wise_body,
    ops_named,
    static_ints,
)
from helion_fx_mlir.passes.packed_operands import packs, strided_rows
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import plain_layout, unrolls_well

# K loops up to this many iterations have a partial last block's sizes evaluated.
MAX_EVALUATED_TRIPS = 4096
# Contraction -> (A's K dim, B's K dim), in the plain layouts (PLAIN_MAPS).
K_DIMS = {"linalg.matmul": (1, 0), "linalg.batch_matmul": (2, 1)}
INDEX_OPS = {
    "affine.apply",
    "affine.min",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.constant",
}


@dataclass(frozen=True)
class Bounds:
    """A loop's constant lower bound, trip count and step."""

    lower: int
    trips: int
    step: int


@register(
    "helion-whole-k-contractions", "a K loop of one contraction -> one contraction over the whole K"
)
def whole_k_contractions(module: ir.Module) -> None:
    """Replace each loop of K-block contractions by one contraction over the whole K range."""
    with mlir_context():
        for loop in ops_named(module, "affine.for", "scf.for"):
            _rewrite(loop, module)


def _rewrite(loop: ir.Operation, module: ir.Module, apart: bool = True) -> None:
    """The loop as whole contractions; `apart`: the programs off the grid's edges apart."""
    contraction, bounds = _sole_contraction(loop), _bounds(loop)
    whole = _strips(loop, contraction, bounds) if contraction and bounds else None
    if whole is None or bounds is None:
        return
    edges = [_edge_amounts(s) for s in whole]
    if apart and any(edges) and None not in edges and bounds.trips > 1:
        edge_loop, loop = loop, _interior_version(loop, whole)
        _rewrite(edge_loop, module, apart=False)
        contraction = _sole_contraction(loop)
        interior = _strips(loop, contraction, bounds) if contraction else None
        if contraction is None or interior is None:
            return  # both branches keep the loop
        whole = [_interior(s) for s in interior]
    if any(s.k_pad for s in whole):
        if bounds.trips == 1 or not all(_pads_only_k(s) for s in whole):
            return
        valid = [dataclasses.replace(s, pad=None) for s in whole]  # K's rows, unpadded
        _contract_rest(loop, contraction, valid, bounds, 1)
        whole, bounds = _full_blocks(whole, bounds)
    group = _blocks_per_step(whole[1], bounds, module)
    if group == bounds.trips:
        _replace(loop, contraction, whole)
    elif group > 1:
        if bounds.trips % group:
            _contract_rest(loop, contraction, whole, bounds, bounds.trips % group)
        _coarsen(loop, contraction, whole, bounds, group)


def _strips(loop: ir.Operation, contraction: ir.Operation, bounds: Bounds) -> list[Strip] | None:
    """Both operands' whole strips, of one K size (None: the loop does not qualify)."""
    strips = [
        _whole_strip(contraction.operands[i], dim, loop, bounds)
        for i, dim in enumerate(K_DIMS[contraction.name])
    ]
    whole = [s for s in strips if s is not None]
    return whole if len(whole) == len(strips) and _same_k(whole) else None


def _edge_amounts(strip: Strip) -> list[ir.Value] | None:
    """The pad's amounts outside K when each fills a dynamically sized slice up to the
    block (rows past M or N: nonzero only in programs on the grid's edges); [] without
    such a pad, None where it pads otherwise too (a static amount)."""
    if strip.pad is None or strip.full_shape is not None:
        return []
    low, high, dynamic = _pad_amounts(strip.pad)
    sizes = static_ints(strip.slice, "static_sizes")
    outside = [d for d, amount in enumerate(high) if d != strip.k_dim and amount != 0]
    if any(low) or any(
        d not in dynamic
        or constant_int(dynamic[d]) is not None
        or not ir.ShapedType.is_dynamic_size(sizes[d])
        for d in outside
    ):
        return None
    return [dynamic[d] for d in outside]


def _interior_version(loop: ir.Operation, strips: list[Strip]) -> ir.Operation:
    """`if (no edge pads) {copy of the loop} else {loop}`; returns the copy, for programs
    whose blocks are whole along M and N: their strips need no pad (or only K's tail)."""
    amounts = [a for s in strips for a in _edge_amounts(s) or []]
    with ir.InsertionPoint(loop), loop.location:
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
        whole = functools.reduce(
            arith.andi,
            [arith.cmpi(arith.CmpIPredicate.eq, _hoisted(a, loop), zero) for a in amounts],
        )
        branch = scf.IfOp(whole, [loop.results[0].type], has_else=True)
    loop.results[0].replace_all_uses_with(branch.results[0])
    with ir.InsertionPoint(branch.then_block), loop.location:
        interior = loop.clone()
        scf.YieldOp([interior.results[0]])
    with ir.InsertionPoint(branch.else_block), loop.location:
        edge = scf.YieldOp([loop.results[0]])
    loop.move_before(edge)
    return interior


def _interior(strip: Strip) -> Strip:
    """The strip where its pad adds nothing outside K: sliced at the pad's (the block's)
    shape, padded only for K's tail."""
    if strip.pad is None:
        return strip
    shape = tuple(ir.RankedTensorType(strip.pad.results[0].type).shape)
    return dataclasses.replace(strip, full_shape=shape, pad=strip.pad if strip.k_pad else None)


def _sole_contraction(loop: ir.Operation) -> ir.Operation | None:
    """The loop's one contraction, when the body is index arithmetic, slices of values from
    outside the loop, the contraction into the loop's only iter_arg, and a yield of it."""
    body = loop.regions[0].blocks[0]
    ops = list(body.operations)
    carried = list(body.arguments)[1:]
    contractions = [op for op in ops if op.name in K_DIMS]
    if len(carried) != 1 or len(contractions) != 1 or len(loop.results) != 1:
        return None
    contraction = contractions[0]
    if not plain_layout(contraction):
        return None
    allowed = INDEX_OPS | {
        "tensor.empty",
        "tensor.extract_slice",
        "tensor.pad",
        "linalg.generic",
        contraction.name,
    }
    if any(op.name not in allowed for op in ops[:-1]) or list(ops[-1].operands) != [
        contraction.results[0]
    ]:
        return None
    if (
        contraction.operands[2] != carried[0]
        or not _single_use(carried[0])
        or not _single_use(contraction.results[0])
    ):
        return None
    return contraction


def _single_use(value: ir.Value) -> bool:
    return sum(1 for _ in value.uses) == 1


def _bounds(loop: ir.Operation) -> Bounds | None:
    """Constant bounds with a whole number of steps, read off either loop kind."""
    if loop.name == "affine.for":
        if len(loop.operands) != 1:  # only the iter_arg init: no bound operands
            return None
        lower = _constant_map(loop.attributes["lowerBoundMap"])
        upper = _constant_map(loop.attributes["upperBoundMap"])
        step = ir.IntegerAttr(loop.attributes["step"]).value
    else:
        lower, upper, step = (constant_int(v) for v in list(loop.operands)[:3])
    if lower is None or upper is None or step is None or step <= 0 or (upper - lower) % step:
        return None
    return Bounds(lower, (upper - lower) // step, step) if upper > lower else None


def _constant_map(attr: ir.Attribute) -> int | None:
    amap = ir.AffineMapAttr(attr).value
    results = list(amap.results)
    if amap.n_inputs or len(results) != 1 or not isinstance(results[0], ir.AffineConstantExpr):
        return None
    return ir.AffineConstantExpr(results[0]).value


@dataclass(frozen=True)
class Strip:
    """The whole K range of one operand: the per-block slice it widens, and the pad and
    elementwise conversion (bf16 -> f32 for `hl.dot`) applied to the block after it; a
    last block that K does not fill pads `k_pad` rows of zeros, as the loop's did."""

    slice: ir.OpView
    pad: ir.OpView | None
    cast: ir.OpView | None
    k_dim: int
    k_start: int
    k_size: int
    k_pad: int = 0  # zero rows the last block pads past the operand's end of K
    full_shape: tuple[int, ...] | None = None  # the block's shape, in a program not on an edge


def _whole_strip(value: ir.Value, k_dim: int, loop: ir.Operation, bounds: Bounds) -> Strip | None:
    """An operand sliced per iteration, with unit strides, from a value defined outside the
    loop (then possibly padded up to the block, but not along K): its K offset `a * iv + b`
    such that consecutive blocks abut, every other offset, size and pad loop-invariant."""
    cast = value.owner if _is_cast(value.owner) else None
    value = cast.operands[0] if cast is not None else value
    pad = (
        value.owner
        if isinstance(value.owner, ir.OpView) and value.owner.name == "tensor.pad"
        else None
    )
    slice_op = (pad.operands[0] if pad is not None else value).owner
    if (
        not isinstance(slice_op, ir.OpView)
        or slice_op.name != "tensor.extract_slice"
        or not _invariant(slice_op.operands[0], loop)
        or _operand_count(slice_op, "strides")
        or any(s != 1 for s in static_ints(slice_op, "static_strides"))
        or ir.RankedTensorType(slice_op.results[0].type).rank
        != ir.RankedTensorType(slice_op.operands[0].type).rank
    ):
        return None
    k_size, k_pad, k_value = _block_rows(slice_op, k_dim, loop, bounds)
    if k_size is None or (pad is not None and not _pads_outside_k(pad, k_dim, loop, k_value)):
        return None
    offsets = _offsets(slice_op)
    sizes = [v for d, v in _dynamic_sizes(slice_op).items() if d != k_dim]
    if not all(_invariant(v, loop) for v in sizes) or not all(
        _invariant(o, loop) for i, o in enumerate(offsets) if i != k_dim and isinstance(o, ir.Value)
    ):
        return None
    linear = _linear_in(offsets[k_dim], loop.regions[0].blocks[0].arguments[0])
    if linear is None or linear[0] * bounds.step != k_size:
        return None
    if k_pad and pad is None:
        return None
    return Strip(
        slice_op,
        pad,
        cast,
        k_dim,
        linear[0] * bounds.lower + linear[1],
        k_size * bounds.trips,
        k_pad,
    )


def _block_rows(
    slice_op: ir.OpView, k_dim: int, loop: ir.Operation, bounds: Bounds
) -> tuple[int | None, int, ir.Value | None]:
    """(K rows of a block, rows its last block lacks, the value of a block's K size when
    it is dynamic): a static size, or `affine.min` of the loop's index that is one constant
    on every iteration but the last, which it fills in part (the K tail Helion masks)."""
    value = _dynamic_sizes(slice_op).get(k_dim)
    if value is None:
        return static_ints(slice_op, "static_sizes")[k_dim], 0, None
    rows = _per_iteration(value, loop, bounds)
    if rows is None or len(set(rows[:-1])) > 1 or not 0 < rows[-1] <= rows[0]:
        return None, 0, None
    return rows[0], rows[0] - rows[-1], value


def _dynamic_sizes(slice_op: ir.OpView) -> dict[int, ir.Value]:
    """The operand of each dynamic size of an extract_slice, by dim."""
    sizes = static_ints(slice_op, "static_sizes")
    dims = [d for d, size in enumerate(sizes) if ir.ShapedType.is_dynamic_size(size)]
    start = 1 + _operand_count(slice_op, "offsets")
    return dict(zip(dims, list(slice_op.operands)[start : start + len(dims)], strict=True))


def _pad_amounts(pad: ir.OpView) -> tuple[list[int], list[int], dict[int, ir.Value]]:
    """A pad's low and high amounts known before run time (static, or constant operands:
    `grid_edges.py` folds a grid's whole tiles' sizes), and the operand of each other high
    amount by dim."""
    low, high = static_ints(pad, "static_low"), static_ints(pad, "static_high")
    dims = [d for d, amount in enumerate(high) if ir.ShapedType.is_dynamic_size(amount)]
    start = 1 + sum(map(ir.ShapedType.is_dynamic_size, low))
    dynamic = dict(zip(dims, list(pad.operands)[start:], strict=True))
    for d, value in list(dynamic.items()):
        if (amount := constant_int(value)) is not None:
            high[d] = amount
            del dynamic[d]
    return low, high, dynamic


def _per_iteration(value: ir.Value, loop: ir.Operation, bounds: Bounds) -> list[int] | None:
    """An `affine.min` of the loop's index alone, evaluated on each iteration."""
    owner = value.owner
    iv = loop.regions[0].blocks[0].arguments[0]
    if (
        not isinstance(owner, ir.OpView)
        or owner.name != "affine.min"
        or list(owner.operands) != [iv]
        or bounds.trips > MAX_EVALUATED_TRIPS
    ):
        return None
    amap = ir.AffineMapAttr(owner.attributes["map"]).value
    terms = [t for t in (_affine_linear(e) for e in amap.results) if t is not None]
    if amap.n_dims != 1 or amap.n_symbols or len(terms) != len(list(amap.results)):
        return None
    steps = [bounds.lower + i * bounds.step for i in range(bounds.trips)]
    return [min(a * k + b for a, b in terms) for k in steps]


def _pads_outside_k(
    pad: ir.OpView, k_dim: int, loop: ir.Operation, k_rows: ir.Value | None
) -> bool:
    """A pad with loop-invariant amounts outside K, and nothing added along K, or (for a
    block whose K size is `k_rows`) the rows up to the block: `block - k_rows`."""
    low, high, dynamic = _pad_amounts(pad)
    k_amount = dynamic.get(k_dim)
    return (
        low[k_dim] == 0
        and (high[k_dim] == 0 if k_rows is None else _fills_block(k_amount, k_rows))
        and all(
            _invariant(v, loop) for v in list(pad.operands)[1:] if k_amount is None or v != k_amount
        )
        and unrolls_well(list(ir.RankedTensorType(pad.results[0].type).shape))
    )


def _fills_block(amount: ir.Value | None, k_rows: ir.Value) -> bool:
    """`amount` is `block - k_rows` (`arith.subi` from a constant, or `affine.apply`), the
    padding of a K tail up to its block."""
    owner = amount.owner if amount is not None else None
    if not isinstance(owner, ir.OpView) or list(owner.operands)[-1:] != [k_rows]:
        return False
    if owner.name == "arith.subi":
        return constant_int(owner.operands[0]) is not None
    if owner.name != "affine.apply" or len(owner.operands) != 1:
        return False
    results = list(ir.AffineMapAttr(owner.attributes["map"]).value.results)
    return len(results) == 1 and (_affine_linear(results[0]) or (0, 0))[0] == -1


def _is_cast(op: ir.Operation | ir.Block) -> bool:
    """An elementwise one-input linalg.generic into a fresh static tensor.empty."""
    if not isinstance(op, ir.OpView) or lane_wise_body(op.results[0]) is None:
        return False
    init = op.operands[1].owner
    return isinstance(init, ir.OpView) and init.name == "tensor.empty" and not len(init.operands)


def _invariant(value: ir.Value, loop: ir.Operation) -> bool:
    """Defined outside the loop, or index arithmetic of values defined outside it."""
    if not defined_in(value, loop):
        return True
    owner = value.owner
    return (
        isinstance(owner, ir.OpView)
        and owner.name in INDEX_OPS
        and all(not defined_in(v, loop) for v in owner.operands)
    )


def _hoisted(value: ir.Value, loop: ir.Operation | None) -> ir.Value:
    """The value, usable before the loop: an `_invariant` op inside it is copied out."""
    if loop is None or not defined_in(value, loop):
        return value
    return value.owner.clone().results[0]  # at the insertion point, before the loop


def _same_k(strips: list[Strip]) -> bool:
    return len({s.k_size for s in strips}) == 1


def _operand_count(slice_op: ir.OpView, group: str) -> int:
    """Dynamic operands of one group (offsets, sizes, strides) of an extract_slice."""
    segments = list(ir.DenseI32ArrayAttr(slice_op.attributes["operandSegmentSizes"]))
    return segments[["source", "offsets", "sizes", "strides"].index(group)]


def _offsets(slice_op: ir.OpView) -> list[ir.Value | int]:
    """Each offset: its static value, or the SSA value of a dynamic one."""
    dynamic = iter(list(slice_op.operands)[1 : 1 + _operand_count(slice_op, "offsets")])
    return [
        next(dynamic) if ir.ShapedType.is_dynamic_size(o) else o
        for o in static_ints(slice_op, "static_offsets")
    ]


def _linear_in(offset: ir.Value | int, iv: ir.Value) -> tuple[int, int] | None:
    """(a, b) with offset = a * iv + b, for the index arithmetic tile offsets are made of."""
    if isinstance(offset, int):
        return None
    if offset == iv:
        return 1, 0
    owner = offset.owner
    if (
        not isinstance(owner, ir.OpView)
        or owner.name != "affine.apply"
        or len(owner.operands) != 1
        or owner.operands[0] != iv
    ):
        return None
    amap = ir.AffineMapAttr(owner.attributes["map"]).value
    if amap.n_dims != 1 or amap.n_symbols or len(list(amap.results)) != 1:
        return None
    return _affine_linear(next(iter(amap.results)))


def _affine_linear(expr: ir.AffineExpr) -> tuple[int, int] | None:
    """(a, b) for an expression a * d0 + b built of +, * by constants, d0 and constants."""
    if isinstance(expr, ir.AffineConstantExpr):
        return 0, ir.AffineConstantExpr(expr).value
    if isinstance(expr, ir.AffineDimExpr):
        return 1, 0
    if isinstance(expr, ir.AffineAddExpr):
        add = ir.AffineAddExpr(expr)
        lhs, rhs = _affine_linear(add.lhs), _affine_linear(add.rhs)
        return None if lhs is None or rhs is None else (lhs[0] + rhs[0], lhs[1] + rhs[1])
    if isinstance(expr, ir.AffineMulExpr):
        mul = ir.AffineMulExpr(expr)
        lhs, rhs = _affine_linear(mul.lhs), _affine_linear(mul.rhs)
        if lhs is None or rhs is None or (lhs[0] and rhs[0]):
            return None
        return lhs[0] * rhs[1] + rhs[0] * lhs[1], lhs[1] * rhs[1]
    return None


def _full_blocks(strips: list[Strip], bounds: Bounds) -> tuple[list[Strip], Bounds]:
    """The strips and bounds of the blocks before a partial last one (contracted after the
    loop), whose pads only filled the K tail: no pad."""
    full = [
        dataclasses.replace(
            s,
            k_size=s.k_size - s.k_size // bounds.trips,
            k_pad=0,
            pad=None,
        )
        for s in strips
    ]
    return full, Bounds(bounds.lower, bounds.trips - 1, bounds.step)


def _pads_only_k(strip: Strip) -> bool:
    """The strip's pad adds only K's tail (past M and N nothing, or nothing in a program
    not on the grid's edges): whole padded strips were copied per program, slower than
    the loop."""
    if strip.pad is None or strip.full_shape is not None:
        return strip.pad is not None
    low, high, dynamic = _pad_amounts(strip.pad)
    others = [amount for d, amount in enumerate(high) if d != strip.k_dim]
    return list(dynamic) == [strip.k_dim] and not any(low + others)


def _blocks_per_step(b_strip: Strip, bounds: Bounds, module: ir.Module) -> int:
    """K blocks one contraction takes: all of them, unless B's rows are strided and the
    whole strip is too large to pack (packed_operands.py), then as many as make the
    fewest steps of strips that are not (at least one): 17 blocks of which 16 fit take
    steps of 9 and a rest of 8 (`_contract_rest`), where steps had to divide the blocks
    (17: steps of one block, the accumulator stored and reloaded after each, 25% slower)."""
    if b_strip.pad is not None or b_strip.cast is not None:
        return bounds.trips
    element = ir.RankedTensorType(b_strip.slice.results[0].type).element_type
    if not strided_rows(b_strip.slice.results[0]) or packs(
        _strip_shape(b_strip, b_strip.k_size), element, module
    ):
        return bounds.trips
    block = b_strip.k_size // bounds.trips
    most = max(
        (
            g
            for g in range(1, bounds.trips)
            if packs(_strip_shape(b_strip, block * g), element, module)
        ),
        default=1,
    )
    steps = math.ceil(bounds.trips / most)
    return math.ceil(bounds.trips / steps)


def _strip_shape(strip: Strip, k_size: int) -> list[int]:
    shape = list(strip.full_shape or ir.RankedTensorType(strip.slice.results[0].type).shape)
    shape[strip.k_dim] = k_size
    return shape


def _coarsen(
    loop: ir.Operation, contraction: ir.Operation, strips: list[Strip], bounds: Bounds, group: int
) -> None:
    """Step the loop over `group` K blocks at a time, each contraction over their strips."""
    if loop.name == "affine.for":
        loop.attributes["step"] = ir.IntegerAttr.get(ir.IndexType.get(), bounds.step * group)
    else:
        with ir.InsertionPoint(loop), loop.location:
            loop.operands[2] = arith.ConstantOp(ir.IndexType.get(), bounds.step * group).result
    block = strips[0].k_size // bounds.trips
    with ir.InsertionPoint(contraction), contraction.location:
        operands = [
            _strip_value(strip, _offsets(strip.slice)[strip.k_dim], block * group, None)
            for strip in strips
        ]
    for i, value in enumerate(operands):
        old = contraction.operands[i]
        contraction.operands[i] = value
        _erase_unused(old.owner)


def _contract_rest(
    loop: ir.Operation, contraction: ir.Operation, strips: list[Strip], bounds: Bounds, rest: int
) -> None:
    """End the loop `rest` blocks early and contract their strips after it, into its result."""
    upper = bounds.lower + (bounds.trips - rest) * bounds.step
    with ir.InsertionPoint(loop), loop.location:
        if loop.name == "affine.for":
            loop.attributes["upperBoundMap"] = ir.AffineMapAttr.get(
                ir.AffineMap.get_constant(upper)
            )
        else:
            loop.operands[1] = arith.ConstantOp(ir.IndexType.get(), upper).result
    block = strips[0].k_size // bounds.trips
    with ir.InsertionPoint.after(loop), loop.location:
        operands = [
            _strip_value(s, s.k_start + (bounds.trips - rest) * block, rest * block, loop)
            for s in strips
        ]
        tail = contraction.clone()
    for i, value in enumerate(operands):
        tail.operands[i] = value
    loop.results[0].replace_all_uses_with(tail.results[0])
    tail.operands[2] = loop.results[0]


def _erase_unused(op: ir.OpView) -> None:
    """The op, and the ops only it used, when nothing uses its results any more."""
    if any(True for result in op.results for _ in result.uses):
        return
    operands = [v.owner for v in op.operands if isinstance(v.owner, ir.OpView)]
    op.erase()
    for owner in operands:
        if owner.name in {"tensor.extract_slice", "tensor.pad", "tensor.empty", "linalg.generic"}:
            _erase_unused(owner)


def _replace(loop: ir.Operation, contraction: ir.Operation, strips: list[Strip]) -> None:
    """Slice the whole strips before the loop, contract them into the loop's init, drop the loop."""
    with ir.InsertionPoint(loop), loop.location:
        operands = [_strip_value(strip, strip.k_start, strip.k_size, loop) for strip in strips]
        whole = contraction.clone()
    for i, value in enumerate(operands):
        whole.operands[i] = value
    whole.operands[2] = loop.operands[len(loop.operands) - 1]
    loop.results[0].replace_all_uses_with(whole.results[0])
    loop.erase()


def _strip_value(
    strip: Strip, k_start: ir.Value | int, k_size: int, loop: ir.Operation | None
) -> ir.Value:
    """The block's slice with K widened to k_size rows from k_start, padded and converted
    as the block was; built before `loop` from values hoisted out of it (None: in place)."""
    op = strip.slice
    offsets = [
        k_start if i == strip.k_dim else o if isinstance(o, int) else _hoisted(o, loop)
        for i, o in enumerate(_offsets(op))
    ]
    dynamic = _dynamic_sizes(op)
    static_sizes = static_ints(op, "static_sizes")
    if strip.full_shape is not None:
        for d in dynamic:
            static_sizes[d] = strip.full_shape[d]
    static_sizes[strip.k_dim] = k_size - strip.k_pad
    sizes = [
        _hoisted(v, loop)
        for d, v in dynamic.items()
        if ir.ShapedType.is_dynamic_size(static_sizes[d])
    ]
    shape = list(static_sizes)
    element = ir.RankedTensorType(op.operands[0].type).element_type
    static_offsets = [
        ir.ShapedType.get_dynamic_size() if isinstance(o, ir.Value) else o for o in offsets
    ]
    value = tensor.ExtractSliceOp(
        ir.RankedTensorType.get(shape, element),
        _hoisted(op.operands[0], loop),
        [o for o in offsets if isinstance(o, ir.Value)],
        sizes,
        [],
        static_offsets,
        static_sizes,
        [1] * len(shape),
    ).result
    if strip.pad is None:
        return value if strip.cast is None else _widened_cast(strip.cast, value)
    k_amount = _pad_amounts(strip.pad)[2].get(strip.k_dim)
    amounts = [
        arith.ConstantOp(ir.IndexType.get(), strip.k_pad).result
        if k_amount is not None and amount == k_amount
        else arith.ConstantOp(ir.IndexType.get(), 0).result
        if strip.full_shape is not None
        else _hoisted(amount, loop)
        for amount in list(strip.pad.operands)[1:]
    ]
    padded = strip.pad.clone()
    for i, operand in enumerate([value, *amounts]):
        padded.operands[i] = operand
    shape = list(ir.RankedTensorType(strip.pad.results[0].type).shape)
    shape[strip.k_dim] = k_size
    padded.results[0].set_type(ir.RankedTensorType.get(shape, element))
    widened = padded.results[0]
    return widened if strip.cast is None else _widened_cast(strip.cast, widened)


def _widened_cast(strip_cast: ir.OpView, value: ir.Value) -> ir.Value:
    """A strip's elementwise conversion, over the whole strip."""
    shape = list(ir.RankedTensorType(value.type).shape)
    result = ir.RankedTensorType.get(
        shape, ir.RankedTensorType(strip_cast.results[0].type).element_type
    )
    init = tensor.EmptyOp(shape, result.element_type).result
    cast = strip_cast.clone()
    cast.operands[0] = value
    cast.operands[1] = init
    cast.results[0].set_type(result)
    return cast.results[0]
