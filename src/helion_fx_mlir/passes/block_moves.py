"""Block moves after bufferization, as loops over rows of masked vector chunks.

Two moves of a block-shaped buffer remain once tile bodies are vectorized and bufferized:
a copy of a tile's valid lanes into (or out of) a view (`memref.copy`), and a padded load
(a masked `vector.transfer_read` of the whole block, written whole into its buffer). As one
n-D transfer, every row of the block is one value, live at once: LLVM's register allocator
took seconds over them (a 47x101 copy 11 s, two 128x128 padded loads 3 s), and one padded
row of thousands of lanes is one value whose lanes LLVM inserted one at a time into a
spilled vector (a 4100-wide row sum, its last 4096-wide chunk 4 lanes valid: 2 ms a row,
9.8 s for 4096 rows). As a loop over rows, each row in chunks of up to LANES lanes, a
chunk is one masked read and one write; a padded load's chunk with no lanes to read (a row
past the source's) is the padding value, with no load.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, scf, vector
from torch_mlir.dialects import memref as memref_dialect

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import MEMREF_VIEWS, constant_int, index_constant, ops_named
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import (
    HALF_TYPES,
    LANES,
    VECTOR_ELEMENT_TYPES,
    inner_lanes,
    unrolls_well,
)


@register(
    "helion-vectorize-copies",
    "copies out of block-shaped buffers and padded loads -> loops of masked vector chunks",
)
def vectorize_copies(module: ir.Module) -> None:
    """A copy out of (or into) a block-shaped buffer, e.g. a tile's valid lanes stored into
    the output, and a padded load of a block become loops over rows of masked chunks.
    Copies with no static bound stay as they are."""
    with mlir_context():
        for op in ops_named(module, "memref.copy"):
            bound = _copy_bound(op.operands[0]) or _copy_bound(op.operands[1])
            if bound is not None:
                _masked_copy(op, bound)
        for op in ops_named(module, "vector.transfer_write"):
            if _is_padded_load(op):
                _padded_load_rows(op)


def _copy_bound(value: ir.Value) -> list[int] | None:
    """Static sizes no larger than the view's: its own, or the buffer it is a full-rank view of.
    Not for f16/bf16: LLVM's X86 backend aborts on their masked stores ("Do not know how to
    soft promote this operator's operand"), at every optimization level."""
    memref = ir.MemRefType(value.type)
    element = str(memref.element_type)
    if element not in VECTOR_ELEMENT_TYPES or element in HALF_TYPES or memref.rank == 0:
        return None
    shape = list(memref.shape)
    owner = value.owner
    if (
        not memref.has_static_shape
        and isinstance(owner, ir.OpView)
        and owner.name == "memref.subview"
    ):
        source = ir.MemRefType(owner.operands[0].type)
        shape = (
            list(source.shape) if source.rank == memref.rank and source.has_static_shape else shape
        )
    if any(ir.ShapedType.is_dynamic_size(d) for d in shape):
        return None
    return shape if unrolls_well(shape) else None


@dataclass(frozen=True)
class _Move:
    """A block move being rewritten: its ends, the loops' constants, and how many lanes of
    the chunk at (rows, column) to read (the rest read as `pad`)."""

    source: ir.Value
    target: ir.Value
    zero: ir.Value
    one: ir.Value
    lanes: int
    step: ir.Value  # `lanes` as an index
    pad: ir.Value
    lanes_left: Callable[[list[ir.Value], ir.Value], ir.Value]
    masked_write: bool  # a copy writes only what it reads; a padded load writes every lane
    # The source's indices of a chunk's (the target's).
    read_at: Callable[[list[ir.Value]], list[ir.Value]] = list


def _masked_copy(op: ir.Operation, bound: list[int]) -> None:
    """The copy, row by row over the view's sizes, in chunks of up to LANES."""
    source, target = op.operands
    memref = ir.MemRefType(source.type)
    with ir.InsertionPoint(op), op.location:
        sizes = [memref_dialect.dim(source, index_constant(i)) for i in range(memref.rank)]
        lanes = min(bound[-1], LANES)
        step = index_constant(lanes)

        def left(rows: list[ir.Value], column: ir.Value) -> ir.Value:
            return arith.minsi(arith.subi(sizes[-1], column), step)

        move = _Move(
            source,
            target,
            index_constant(0),
            index_constant(1),
            lanes,
            step,
            _zero(memref.element_type),
            left,
            masked_write=True,
        )
        _rows(move, sizes, [])
    op.erase()


def _is_padded_load(write: ir.Operation) -> bool:
    """`transfer_write(transfer_read(src[0..], mask = create_mask(sizes)), buffer[0..])`, or a
    `constant_mask` of static sizes: a whole block of two or more rows or one row longer
    than a chunk, read masked and written unmasked into a static buffer of its shape (what
    a vectorized tensor.pad bufferizes to)."""
    read = write.operands[0].owner
    if not isinstance(read, ir.OpView) or read.name != "vector.transfer_read":
        return False
    shape = list(ir.VectorType(write.operands[0].type).shape)
    target = write.operands[1].type
    # a read's operands: source, one index per dim, padding, mask; a write's: value,
    # target, indices (no mask)
    mask = read.operands[-1].owner if len(read.operands) == len(shape) + 3 else None
    return (
        (math.prod(shape[:-1]) > 1 or shape[-1] > LANES)
        and len(write.operands) == 2 + len(shape)
        and all(_identity(op, len(shape)) for op in (read, write))
        and isinstance(target, ir.MemRefType)
        and list(ir.MemRefType(target).shape) == shape
        and isinstance(mask, ir.OpView)
        and mask.name in MASKS
        and _all_zero([*write.operands[2:], *read.operands[1 : 1 + len(shape)]])
        and len(list(read.results[0].uses)) == 1
        and _nothing_writes_between(read, write)
    )


MASKS = {"vector.create_mask", "vector.constant_mask"}
# What may sit between a padded load's read and its write: the read moves to the write,
# so nothing in between may write memory.
_PURE_DIALECTS = ("arith.", "affine.", "index.")
_NO_WRITES = MEMREF_VIEWS | {
    "memref.alloca",
    "memref.alloc",
    "memref.dim",
    "memref.reinterpret_cast",
    *MASKS,
}


def _nothing_writes_between(read: ir.OpView, write: ir.Operation) -> bool:
    if read.operation.block != write.block:
        return False
    ops = [op.operation for op in write.block.operations]
    first, last = ops.index(read.operation), ops.index(write)
    return all(
        op.name.startswith(_PURE_DIALECTS) or op.name in _NO_WRITES for op in ops[first + 1 : last]
    )


def _identity(transfer: ir.Operation, rank: int) -> bool:
    permutation = ir.AffineMapAttr(transfer.attributes["permutation_map"]).value
    return permutation == ir.AffineMap.get_identity(rank)


def _all_zero(values: list[ir.Value]) -> bool:
    return all(constant_int(v) == 0 for v in values)


def _padded_load_rows(write: ir.Operation) -> None:
    """The padded load, row by row over the whole block: a chunk reads the lanes of the
    mask's sizes that fall in it (none in a row past them) and writes every lane, the
    rest being the padding value."""
    read = write.operands[0].owner
    shape = list(ir.VectorType(write.operands[0].type).shape)
    with ir.InsertionPoint(write), write.location:
        sizes = _mask_sizes(read.operands[-1].owner)
        lanes = _chunk(shape[-1])
        step = index_constant(lanes)
        zero = index_constant(0)

        def left(rows: list[ir.Value], column: ir.Value) -> ir.Value:
            lanes_left = arith.maxsi(arith.minsi(arith.subi(sizes[-1], column), step), zero)
            for row, size in zip(rows, sizes):
                inside = arith.cmpi(arith.CmpIPredicate.slt, row, size)
                lanes_left = arith.select(inside, lanes_left, zero)
            return lanes_left

        source, read_at = _uncollapsed(read.operands[0], zero)
        move = _Move(
            source,
            write.operands[1],
            zero,
            index_constant(1),
            lanes,
            step,
            read.operands[len(shape) + 1],
            left,
            masked_write=False,
            read_at=read_at,
        )
        _rows(move, [index_constant(extent) for extent in shape], [])
    mask = read.operands[-1].owner
    write.erase()
    read.erase()
    if not list(mask.results[0].uses):
        mask.erase()


def _uncollapsed(
    source: ir.Value, zero: ir.Value
) -> tuple[ir.Value, Callable[[list[ir.Value]], list[ir.Value]]]:
    """The memref to read chunks from and its indices of a chunk's: where the source
    collapses unit dims into the dim after them (a row slice that kept its unit dims:
    `keep_sliced_unit_dims`), the memref before the collapse, since the collapse of a
    dynamic size has a dynamic stride and a chunk read through it is a gather of single
    lanes (a 4100-wide row sum's padded chunks 3x slower); else the source itself."""
    owner = source.owner
    if not isinstance(owner, ir.OpView) or owner.name != "memref.collapse_shape":
        return source, list
    shape = list(ir.MemRefType(owner.operands[0].type).shape)
    reassociation = ir.ArrayAttr(owner.attributes["reassociation"])
    groups = [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)] for g in reassociation]
    if any(shape[d] != 1 for group in groups for d in group[:-1]):
        return source, list

    def at(indices: list[ir.Value]) -> list[ir.Value]:
        return [i for g, index in zip(groups, indices) for i in [zero] * (len(g) - 1) + [index]]

    return owner.operands[0], at


def _mask_sizes(mask: ir.OpView) -> list[ir.Value]:
    """The valid sizes of a mask, per dim (a constant mask's as index constants)."""
    if mask.name == "vector.create_mask":
        return list(mask.operands)
    sizes = ir.DenseI64ArrayAttr(mask.attributes["mask_dim_sizes"])
    return [index_constant(size) for size in sizes]


def _chunk(extent: int) -> int:
    """Lanes per chunk of a row the chunks must tile exactly (each written whole)."""
    lanes = inner_lanes(extent)
    return lanes if extent % lanes == 0 else extent


def _rows(move: _Move, extents: list[ir.Value], rows: list[ir.Value]) -> None:
    """A loop over each outer dim not yet indexed by `rows`, then the innermost row."""
    if len(rows) == len(extents) - 1:
        _row(move, rows, extents[-1])
        return
    loop = scf.ForOp(move.zero, extents[len(rows)], move.one)
    with ir.InsertionPoint(loop.body):
        _rows(move, extents, [*rows, loop.induction_variable])
        scf.YieldOp([])


def _row(move: _Move, rows: list[ir.Value], extent: ir.Value) -> None:
    """One row in chunks of `lanes`, each read masked to the lanes left to read."""
    element = ir.MemRefType(move.target.type).element_type
    loop = scf.ForOp(move.zero, extent, move.step)
    with ir.InsertionPoint(loop.body):
        column = loop.induction_variable
        lanes_left = move.lanes_left(rows, column)
        mask = vector.create_mask(
            ir.VectorType.get([move.lanes], ir.IntegerType.get_signless(1)), [lanes_left]
        )
        at = [*rows, column]
        identity = ir.AffineMap.get_minor_identity(len(at), 1)
        if move.masked_write:
            chunk = _read(move, element, at, mask)
        else:
            chunk = _read_or_pad(move, element, at, mask, lanes_left)
        written = mask if move.masked_write else None
        vector.transfer_write(None, chunk, move.target, at, identity, [True], mask=written)
        scf.YieldOp([])


def _read(move: _Move, element: ir.Type, at: list[ir.Value], mask: ir.Value) -> ir.Value:
    """The chunk at `at`, its lanes past the mask the padding value."""
    read_at = move.read_at(at)
    return vector.transfer_read(
        ir.VectorType.get([move.lanes], element),
        move.source,
        read_at,
        ir.AffineMap.get_minor_identity(len(read_at), 1),
        move.pad,
        [True],
        mask=mask,
    )


def _read_or_pad(
    move: _Move, element: ir.Type, at: list[ir.Value], mask: ir.Value, lanes_left: ir.Value
) -> ir.Value:
    """A padded load's chunk: read where it has lanes to read, else the padding value
    without a read. A chunk of a row past the source's (the last program's block of 8
    valid rows in 32) read nothing, but its masked load still went to an address past the
    source, and such loads cost microcode assists: softmax_two_pass 1000x3072 in 32x32
    blocks spent 1.1 ms in its last program's 24 padded rows, where the 31 whole programs
    took 1.3."""
    vector_type = ir.VectorType.get([move.lanes], element)
    empty = arith.cmpi(arith.CmpIPredicate.eq, lanes_left, move.zero)
    branch = scf.IfOp(empty, [vector_type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([vector.broadcast(vector_type, move.pad)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_read(move, element, at, mask)])
    return branch.results[0]


def _zero(element: ir.Type) -> ir.Value:
    if isinstance(element, ir.FloatType):
        return arith.ConstantOp(element, ir.FloatAttr.get(element, 0.0)).result
    return arith.ConstantOp(element, ir.IntegerAttr.get(element, 0)).result
