"""A loop over tiles whose body steps through the tile into an accumulator in memory, as one
loop over the steps.

A column sum in 32-row tiles (`for tile_m: acc += x[tile_m, tile_n].sum(0)`) is, after
vectorization, a loop over row tiles whose body reads the accumulator, adds the tile 8 rows
at a time in an inner loop carrying it, and writes it back. Flattened, each step reads the
accumulator, adds its 8 rows and writes it back: the same additions in the same order
(the accumulator round-trips through memory exactly), but a group of programs interleaved
per step (`grid_groups.py`) then reads 8 rows of every strip before moving on, not 32 rows
of one strip before the next: 4096^2 f32 in 32x32 tiles, groups of 16, 2 threads: about
4.3 -> 3.0 ms, the time of 32x8 tiles.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, scf

from helion_fx_mlir.mlir.walk import (
    INDEX_ARITHMETIC,
    VIEWS,
    constant_bounds,
    index_constant,
    ops_where,
)


def flatten_carried_steps(loop: ir.Operation) -> ir.Operation:
    """The loop as one loop over its inner loop's steps, where its body is pure index
    arithmetic, then a read of an accumulator, an inner loop carrying it, and its write back
    to where it was read; else the loop as it was."""
    parts = _carried_steps(loop)
    if parts is None:
        return loop
    read, inner, write = parts
    outer_bounds, inner_bounds = constant_bounds(loop), constant_bounds(inner)
    assert outer_bounds is not None and inner_bounds is not None
    steps = len(inner_bounds)
    with ir.InsertionPoint(loop), loop.location:
        zero, one = index_constant(0), index_constant(1)
        total = index_constant(len(outer_bounds) * steps)
        flat = scf.ForOp(zero, total, one)
    with ir.InsertionPoint(flat.body), loop.location:
        outer_iv = _at(arith.divui(flat.induction_variable, index_constant(steps)), outer_bounds)
        inner_iv = _at(arith.remui(flat.induction_variable, index_constant(steps)), inner_bounds)
        end = scf.YieldOp([])
    _move_body(loop, flat, end, outer_iv)
    inner_yield = list(inner.regions[0].blocks[0].operations)[-1]
    carried = inner.regions[0].blocks[0].arguments[1]
    carried.replace_all_uses_with(read.results[0])
    _move_body(inner, flat, end, inner_iv)
    write.operands[0] = inner_yield.operands[0]
    write.move_before(end)
    inner.erase()
    loop.erase()
    return flat.operation


def _carried_steps(
    loop: ir.Operation,
) -> tuple[ir.Operation, ir.Operation, ir.Operation] | None:
    """The accumulator's read, the inner loop and the write back, where the loop fits: the
    write puts back exactly what the read takes (same place, map, in-bounds lanes), and
    nothing in the inner loop touches the accumulator's buffer."""
    ops = list(loop.regions[0].blocks[0].operations)
    if len(ops) < 4 or len(loop.results) or constant_bounds(loop) is None:
        return None
    *pure, read, inner, write, _ = ops
    if (
        read.name != "vector.transfer_read"
        or inner.name != "scf.for"
        or write.name != "vector.transfer_write"
        or constant_bounds(inner) is None
        or len(inner.results) != 1
        or list(inner.operands)[3:] != [read.results[0]]
        or write.operands[0] != inner.results[0]
        or list(write.operands)[1:] != list(read.operands)[:-1]
        or not _round_trip(read, write)
        or any(op.name not in PURE_INDEX for op in pure)
    ):
        return None
    buffer = _root(read.operands[0])
    touched = [
        value
        for op in ops_where(inner, lambda _: True)
        for value in op.operands
        if isinstance(value.type, ir.MemRefType)
    ]
    return None if any(_root(value) == buffer for value in touched) else (read, inner, write)


PURE_INDEX = {*INDEX_ARITHMETIC, "memref.subview"}


def _round_trip(read: ir.Operation, write: ir.Operation) -> bool:
    """Whether the write stores back every lane the read loaded: one permutation map without
    broadcast dims, every lane in bounds."""
    attributes = ("permutation_map", "in_bounds")
    if any(read.attributes[name] != write.attributes[name] for name in attributes):
        return False
    in_bounds = ir.ArrayAttr(read.attributes["in_bounds"])
    permutation = ir.AffineMapAttr(read.attributes["permutation_map"]).value
    return (
        all(ir.BoolAttr(lane).value for lane in in_bounds) and permutation.is_projected_permutation
    )


def _root(value: ir.Value) -> ir.Value:
    """The buffer a view is of."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    return value


def _at(index: ir.Value, bounds: range) -> ir.Value:
    """The bounds' start + index * step."""
    if bounds.step != 1:
        index = arith.muli(index, index_constant(bounds.step))
    return arith.addi(index, index_constant(bounds.start)) if bounds.start else index


def _move_body(loop: ir.Operation, flat: scf.ForOp, end: ir.Operation, iv: ir.Value) -> None:
    """The loop's ops but its terminator moved before `end`, its induction variable `iv`."""
    body = loop.regions[0].blocks[0]
    body.arguments[0].replace_all_uses_with(iv)
    for op in list(body.operations)[:-1]:
        op.move_before(end)
