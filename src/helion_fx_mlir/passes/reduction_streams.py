"""A long row reduction reads its row as two streams: both halves at once.

Helion's default config gives a row reduction one row per program (`block_sizes=[1]`); its
vectorized loop reads the row front to back, 64 lanes a step into a carried accumulator
(`acc += x[row, k:k+64]`), then reduces the accumulator's lanes. One sequential stream per
core leaves memory bandwidth unused on this kind of CPU (Zen 3, 2 threads: 4096^2 f32 rows
summed at 0.62-0.72 of the read limit); the same loop reading the two halves of the row at
once, 32 lanes from each a step (`acc += concat(x[row, k:k+32], x[row, n/2+k:n/2+k+32])`),
runs 6-15% faster in one process (0.84-0.87 of the read limit in the bench), as fast as two or
four rows per program, with the same registers.

The lanes of the accumulator then sum other elements of the row, and every element still
once: where the loop's results only feed full reductions (the lanes' order is not seen) and
its body is lane-wise (elementwise ops, reads of the innermost dim at the loop variable,
values the same in every lane), this is the vectorizer's own reassociation of the sum,
another order of it. Loops that write, mask, nest or index otherwise stay as they are.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, vector

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import constant_bounds, defined_in, index_constant, ops_named
from helion_fx_mlir.passes.registry import register

# Each half is at least a 4 KB page: sum_rows on 2 threads, ms off -> on, same process:
# 4096^2 f32 (8 KB halves) 2.1 -> 1.8, 2.9 -> 2.5; 8192x2048 and 1024x16384 2-11% faster,
# 2048x8192 level; 16384x1024 (2 KB halves, one page a row) 2.7 -> 3.0, 3.3 -> 3.8.
MIN_HALF_BYTES = 4096
# Views of a kernel argument a row may be read through.
SLICES = {"tensor.extract_slice", "tensor.collapse_shape", "tensor.expand_shape"}
# Ops whose vector may be the same in every lane (`_uniform` says when).
UNIFORM = {"vector.broadcast", "arith.constant"}


@register(
    "helion-split-reduction-streams",
    "a long row reduction's loop reads both halves of the row at once",
)
def split_reduction_streams(module: ir.Module) -> None:
    with mlir_context():
        for loop in ops_named(module, "scf.for"):
            bounds = constant_bounds(loop)
            if bounds is not None and (reads := _split_reads(loop, bounds)) is not None:
                _split(loop, bounds, reads)


def _split_reads(loop: ir.Operation, bounds: range) -> list[ir.Operation] | None:
    """The reads of a loop this pass splits (see the module docstring), else None."""
    lanes = _lanes(loop)
    if lanes is None or bounds.start != 0 or bounds.step != lanes:
        return None
    body = list(loop.regions[0].blocks[0].operations)
    reads = [op for op in body if op.name == "vector.transfer_read"]
    induction = loop.regions[0].blocks[0].arguments[0]
    fits = (
        bounds.stop % lanes == 0
        and reads
        and _half_bytes(reads, bounds.stop) >= MIN_HALF_BYTES
        and all(_row_read(op, induction, loop, lanes) for op in reads)
        and all(use.owner in reads for use in induction.uses)
        and all(_lane_wise(op, loop, lanes) for op in body if op not in reads)
        and all(_fully_reduced(result) for result in loop.results)
    )
    return reads if fits else None


def _lanes(loop: ir.Operation) -> int | None:
    """The lanes of the loop's carried vectors (all 1-D of one length, with inits the same
    in every lane), else None."""
    inits = list(loop.operands)[3:]
    if not inits or not all(_is_vector(v) and _uniform(v) for v in inits):
        return None
    shapes = {tuple(ir.VectorType(v.type).shape) for v in inits}
    (shape, *others) = shapes
    return shape[0] if not others and len(shape) == 1 and shape[0] % 2 == 0 else None


def _is_vector(value: ir.Value) -> bool:
    return isinstance(value.type, ir.VectorType)


def _half_bytes(reads: list[ir.Operation], length: int) -> int:
    """The bytes of half the row, read by the narrowest read (0 for elements of no width)."""
    widths = [ir.VectorType(op.results[0].type).element_type for op in reads]
    bits = [t.width for t in widths if isinstance(t, ir.FloatType | ir.IntegerType)]
    return length // 2 * min(bits) // 8 if len(bits) == len(widths) else 0


def _row_read(op: ir.Operation, induction: ir.Value, loop: ir.Operation, lanes: int) -> bool:
    """An unmasked in-bounds read of `lanes` elements of a kernel argument's innermost dim at
    the loop variable, its other indices set before the loop."""
    view = op.opview
    indices = list(view.indices)
    return (
        view.mask is None
        and ir.VectorType(op.results[0].type).shape == [lanes]
        and all(bool(ir.BoolAttr(flag).value) for flag in ir.ArrayAttr(view.in_bounds))
        and bool(indices)
        and _minor_identity(view.permutation_map, len(indices))
        and indices[-1] == induction
        and not any(defined_in(index, loop) for index in indices[:-1])
        and _kernel_argument(view.base)
    )


def _kernel_argument(value: ir.Value) -> bool:
    """Whether the value is a kernel argument or a slice of one: rows in memory, where the
    streams are (a row copied into a buffer of the program's is read from the caches, and
    two streams over it ran 4x slower: a 4100-wide row's padded chunks)."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in SLICES:
        value = value.owner.operands[0]
    owner = value.owner
    return isinstance(owner, ir.Block) and owner.owner.operation.name == "func.func"


def _minor_identity(permutation: ir.AffineMapAttr, rank: int) -> bool:
    """Whether the map reads the innermost of `rank` dims."""
    return permutation == ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1))


def _lane_wise(op: ir.Operation, loop: ir.Operation, lanes: int) -> bool:
    """An elementwise op on vectors of the loop's lanes, whatever it takes from outside the
    loop the same in every lane; a value the same in every lane; the loop's yield."""
    if op.name == "scf.yield":
        return True
    if op.name in UNIFORM:
        return _uniform(op.results[0])
    elementwise = op.name.split(".")[0] in {"arith", "math"} and not op.regions
    shaped = all(
        _is_vector(v) and ir.VectorType(v.type).shape == [lanes]
        for v in [*op.operands, *op.results]
    )
    outside = [v for v in op.operands if not defined_in(v, loop)]
    return elementwise and shaped and all(_uniform(v) for v in outside)


def _uniform(value: ir.Value) -> bool:
    """A vector the same in every lane: a splat constant or a broadcast scalar."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name not in UNIFORM:
        return False
    if owner.name == "vector.broadcast":
        return not _is_vector(owner.operands[0])
    attr = owner.attributes["value"]
    return isinstance(attr, ir.DenseElementsAttr) and attr.is_splat


def _fully_reduced(result: ir.Value) -> bool:
    """Whether every use of the value reduces all its lanes to one."""
    return all(
        use.owner.name == "vector.multi_reduction"
        and use.operand_number == 0
        and list(ir.DenseI64ArrayAttr(use.owner.attributes["reduction_dims"])) == [0]
        for use in result.uses
    )


def _split(loop: ir.Operation, bounds: range, reads: list[ir.Operation]) -> None:
    """The loop over the first half of the row in half-width steps; each read the
    concatenation of a step's lanes from the first half and from the second."""
    lanes = bounds.step // 2
    with ir.InsertionPoint(loop), loop.location:
        half = index_constant(bounds.stop // 2)
        loop.operands[1] = half
        loop.operands[2] = index_constant(lanes)
    for read in reads:
        with ir.InsertionPoint(read), read.location:
            induction = list(read.opview.indices)[-1]
            first = _part(read, induction, lanes)
            second = _part(read, arith.addi(induction, half), lanes)
            whole = vector.shuffle(first, second, list(range(2 * lanes)))
        read.results[0].replace_all_uses_with(whole)
        read.erase()


def _part(read: ir.Operation, index: ir.Value, lanes: int) -> ir.Value:
    """`lanes` elements of the read's row from `index` on."""
    view = read.opview
    element = ir.VectorType(read.results[0].type).element_type
    return vector.TransferReadOp(
        ir.VectorType.get([lanes], element),
        view.base,
        [*list(view.indices)[:-1], index],
        view.permutation_map,
        view.padding,
        [True],
    ).result
