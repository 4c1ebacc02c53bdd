"""Register tiles whose accumulator starts as a constant start from the constant itself.

`hl.zeros` (a `linalg.fill`) vectorizes into a loop writing zeros into every row of the
accumulator tile, and each register tile of the contraction then reads its part back as
its K loop's first value: after bufferization the fill writes the whole output tile (a
64 x 64 f32 tile: 16 KB, in the output's own memory) only for the register tiles to load
it again. Where the register tiles cover the accumulator exactly (loops from 0 to each dim
in steps of the tile's shape, or a dim the tile spans from 0: a bmm's unit batch dim) and
each reads its own part before it writes it, that read is the fill's constant: it becomes
the constant vector, and the fill goes. The same where the tiles leave the last rows to a
tile of their own after them (a block whose rows the tile's do not divide, peeled), which
reads them from the first tiles' result: the two together cover the accumulator. Not
where the accumulator is carried further (a K loop of blocks around the tiles: the next
block reads what the last one wrote).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import constant_bounds, constant_int, ops_named
from helion_fx_mlir.passes.registry import register

# The operand each op of a fill's chain takes the filled tensor (or the empty one) from.
FILL_SOURCES = {"tensor.extract_slice": 0, "linalg.fill": 1, "scf.for": 3}


@dataclass(frozen=True)
class TileNest:
    """A register tile's read of the accumulator and its write back, the loops (outermost
    first, maybe none) whose induction variables index them and carry the accumulator, the
    accumulator's value before them, and the part of it (start, stop per dim) their tiles
    cover."""

    read: ir.Operation
    write: ir.Operation
    loops: list[ir.Operation]
    init: ir.Value
    region: list[tuple[int, int]]

    def whole(self) -> bool:
        """Whether the tiles cover the whole accumulator."""
        return self.region == [(0, dim) for dim in ir.RankedTensorType(self.init.type).shape]

    def result(self) -> ir.Value:
        """The accumulator after the nest: its loop's result, or the tile's write."""
        return self.loops[0].results[0] if self.loops else self.write.results[0]


@register(
    "helion-start-tiles-from-fills",
    "register tiles that cover a constant-filled accumulator start from the constant",
)
def start_tiles_from_fills(module: ir.Module) -> None:
    with mlir_context():
        starts = []  # found before any is rewritten: a rewrite erases a later read
        for read in ops_named(module, "vector.transfer_read"):
            nest = _tile_nest(read)
            if nest is None or (scalar := _fill(nest.init)) is None:
                continue
            if nest.whole():
                starts.append(([read], nest, scalar))
            elif (rest := _rest_of(nest)) is not None:
                starts.append(([read, rest.read], nest, scalar))
        for reads, nest, scalar in starts:
            _start_from(reads, nest, scalar)


def _tile_nest(read: ir.Operation) -> TileNest | None:
    """The nest, when the read's source is a tensor the nest's loops (if any) carry and step
    over in disjoint tiles of the read's shape, and the tile is written back where it was
    read after the read."""
    if not _whole_tile(read):
        return None
    indices = list(read.operands)[1:-1]
    carried = read.operands[0]
    loops: list[ir.Operation] = []
    while _is_iter_arg(carried) and (not loops or len(list(carried.uses)) == 1):
        loop = carried.owner.owner
        loops.insert(0, loop)
        carried = loop.operands[3]
    region = _region(loops, indices, read)
    write = _written(read, loops)
    if region is None or write is None:
        return None
    return TileNest(read, write, loops, carried, region)


def _rest_of(nest: TileNest) -> TileNest | None:
    """The tiles after a nest that leaves the last part of one dim (a peeled loop's last
    register tile of rows, `vectorize.py`'s peel_rows): a nest reading that part from the
    first one's result, and its only user, which together with the first covers the
    accumulator."""
    shape = ir.RankedTensorType(nest.init.type).shape
    partial = [d for d, (start, stop) in enumerate(nest.region) if (start, stop) != (0, shape[d])]
    if len(partial) != 1:
        return None
    dim, result = partial[0], nest.result()
    wanted = list(nest.region)
    wanted[dim] = (nest.region[dim][1], shape[dim])
    users = [use.owner for use in result.uses]
    reads = [op for user in users for op in ops_named(user, "vector.transfer_read")]
    for read in reads:
        rest = _tile_nest(read)
        if rest is None or rest.init != result or rest.region != wanted:
            continue
        if len(users) == (1 if rest.loops else 2):  # a loop nest: its loop; else read and write
            return rest
    return None


def _whole_tile(read: ir.Operation) -> bool:
    """An unmasked, in-bounds read of a tensor's tile of its own rank."""
    source = read.operands[0]
    if not isinstance(source.type, ir.RankedTensorType):
        return False
    rank = ir.RankedTensorType(source.type).rank
    in_bounds = ir.ArrayAttr(read.attributes["in_bounds"])
    permutation = ir.AffineMapAttr(read.attributes["permutation_map"]).value
    return (
        len(read.operands) == rank + 2
        and ir.VectorType(read.results[0].type).rank == rank
        and all(ir.BoolAttr(flag).value for flag in in_bounds)
        and permutation == ir.AffineMap.get_identity(rank)
    )


def _is_iter_arg(value: ir.Value) -> bool:
    """The only iter_arg of an scf.for (an outer loop's: used only as the next one's init)."""
    if not isinstance(value, ir.BlockArgument) or value.arg_number != 1:
        return False
    loop = value.owner.owner
    return loop.name == "scf.for" and len(loop.results) == 1


def _region(
    loops: list[ir.Operation], indices: list[ir.Value], read: ir.Operation
) -> list[tuple[int, int]] | None:
    """The part (start, stop per dim) of the tensor the nest's tiles cover, where each
    index is a loop's induction variable, running from 0 in steps of the tile's size (each
    loop one dim), or a constant; None otherwise."""
    dims = ir.RankedTensorType(read.operands[0].type).shape
    tile = ir.VectorType(read.results[0].type).shape
    variables = [loop.regions[0].blocks[0].arguments[0] for loop in loops]
    if any(sum(index == variable for index in indices) != 1 for variable in variables):
        return None
    region = []
    for index, dim, size in zip(indices, dims, tile, strict=True):
        if index in variables:
            bounds = constant_bounds(loops[variables.index(index)])
            if bounds is None or bounds.start != 0 or bounds.step != size:
                return None
            region.append((0, len(bounds) * size))
            if region[-1][1] > dim:
                return None
        elif (start := constant_int(index)) is not None and start + size <= dim:
            region.append((start, start + size))
        else:
            return None
    return region


def _written(read: ir.Operation, loops: list[ir.Operation]) -> ir.Operation | None:
    """The write of the tile where it was read, after the read, the only other use of the
    carried tile; each loop yielding the next one's result and the innermost the write."""
    for outer, inner in itertools.pairwise(loops):
        if _yielded(outer) != inner.results[0]:
            return None
    tile = read.operands[0]
    if loops:
        write = _yielded(loops[-1]).owner
    else:
        write = next((use.owner for use in tile.uses if use.owner != read), None)
    fits = (
        isinstance(write, ir.OpView)
        and write.name == "vector.transfer_write"
        and write.operands[1] == tile
        and write.operands[0].type == read.results[0].type
        and list(write.operands)[2:] == list(read.operands)[1:-1]
        and write.attributes["in_bounds"] == read.attributes["in_bounds"]
        and write.attributes["permutation_map"] == read.attributes["permutation_map"]
        and len(list(tile.uses)) == 2
        and _before(read, write.operation)
    )
    return write.operation if fits else None


def _yielded(loop: ir.Operation) -> ir.Value:
    return list(loop.regions[0].blocks[0].operations)[-1].operands[0]


def _before(first: ir.Operation, second: ir.Operation) -> bool:
    """Whether `first` comes before `second` in the block that holds both."""
    if first.block != second.block:
        return False
    for op in first.block.operations:
        if op.operation == first:
            return True
        if op.operation == second:
            return False
    return False


def _fill(value: ir.Value) -> ir.Attribute | None:
    """The scalar of a value that is an empty tensor filled with one constant: a
    `linalg.fill`, the loop vectorizing one (a splat written row by row), or a slice of
    either (an edge program's accumulator trimmed to its valid corner)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return None
    if owner.name == "tensor.extract_slice":
        return _fill(owner.operands[0])
    if owner.name == "linalg.fill":
        scalar, empty = owner.operands
        constant = scalar.owner
        element = ir.RankedTensorType(empty.type).element_type
        if (
            isinstance(constant, ir.OpView)
            and constant.name == "arith.constant"
            and scalar.type == element  # not a scalar the fill converts
            and _is_empty(empty)
        ):
            return constant.attributes["value"]
        return None
    if owner.name == "scf.for" and len(owner.results) == 1:
        return _filled_rows(owner.operation)
    return None


def _filled_rows(loop: ir.Operation) -> ir.Attribute | None:
    """A loop over every row of an empty tensor (one dim, in steps of 1) that writes the
    same splat over each whole row (every other dim spanned from 0) and nothing else."""
    empty = loop.operands[3]
    body = loop.regions[0].blocks[0]
    ops = list(body.operations)
    if not _is_empty(empty) or len(ops) != 2 or ops[0].name != "vector.transfer_write":
        return None
    write = ops[0]
    splat, tile = write.operands[0], write.operands[1]
    constant = splat.owner
    if (
        tile != body.arguments[1]
        or ops[1].operands[0] != write.results[0]
        or len(write.operands) != 2 + ir.RankedTensorType(empty.type).rank
        or not _covers_by_rows(write, loop)
        or not isinstance(constant, ir.OpView)
        or constant.name != "arith.constant"
    ):
        return None
    elements = ir.DenseElementsAttr(constant.attributes["value"])
    return elements.get_splat_value() if elements.is_splat else None


def _covers_by_rows(write: ir.Operation, loop: ir.Operation) -> bool:
    """Whether the write, at the loop's step, covers its tensor: the loop's variable indexes
    one dim (from 0 to its size, in steps of 1, a vector dim of 1), and every other dim is
    written whole from 0."""
    dims = ir.RankedTensorType(write.operands[1].type).shape
    shape = ir.VectorType(write.operands[0].type).shape
    variable = loop.regions[0].blocks[0].arguments[0]
    indices = list(write.operands)[2:]
    looped = [d for d, index in enumerate(indices) if index == variable]
    if len(looped) != 1 or constant_bounds(loop) != range(0, dims[looped[0]], 1):
        return False
    return all(
        size == 1 if d == looped[0] else (size == dim and constant_int(index) == 0)
        for d, (index, dim, size) in enumerate(zip(indices, dims, shape, strict=True))
    )


def _is_empty(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, ir.OpView) and owner.name == "tensor.empty"


def _start_from(reads: list[ir.Operation], nest: TileNest, scalar: ir.Attribute) -> None:
    """The reads become the constant, the nest starts from an empty tensor (its outermost
    loop's init, or the tile's write's destination), and the fill (and the slices of it)
    go once nothing else uses them."""
    first, operand = (nest.loops[0], 3) if nest.loops else (nest.write, 1)
    for read in reads:
        vector_type = read.results[0].type
        with ir.InsertionPoint(read), read.location:
            splat = ir.DenseElementsAttr.get_splat(vector_type, scalar)
            constant = arith.ConstantOp(vector_type, splat)
        read.results[0].replace_all_uses_with(constant.result)
        read.erase()
    with ir.InsertionPoint(first), first.location:
        tile_type = ir.RankedTensorType(nest.init.type)
        first.operands[operand] = tensor.EmptyOp(tile_type.shape, tile_type.element_type).result
    _erase_unused(nest.init)


def _erase_unused(value: ir.Value) -> None:
    """The fill behind `value` (its slices, the fill, its empty tensor), op by op while
    nothing uses it."""
    while not list(value.uses) and isinstance(value.owner, ir.OpView):
        owner = value.owner
        source = FILL_SOURCES.get(owner.name)
        next_value = None if source is None else owner.operands[source]
        owner.erase()
        if next_value is None:
            return
        value = next_value
