"""A K loop's accumulator over the rows and columns read after it, not the whole block.

On the grid's last row or column of a matmul whose M or N the block does not divide, a
program's A block holds fewer rows than the block (its N block fewer columns), padded with
zeros up to it; the accumulator is the whole block and only its valid corner is stored
(`extract_slice [0, 0] [16, 64]` of a 64x64 accumulator). Rows of the product past the
valid ones are computed only to be dropped: 48 of 64 where 1040 rows meet 64-row blocks.
Where the valid sizes are static (`grid_edges.py` makes them so on the edges' own grids),
the loop here carries only the valid corner and the operands are padded along K alone,
as in every other program: the contraction then takes whole-K strips too
(`whole_contractions.py`). Rows of A past the valid ones only ever reach rows of the
product past them, so the result is the same whatever the pad held.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import DYNAMIC, ops_named, static_ints
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import plain_layout

# The dim of each matmul operand that is the product's rows (A) or columns (B).
TRIMMED_DIMS = (0, 1)


@register(
    "helion-trim-padded-accumulators",
    "a K loop of matmuls on tiles padded past M or N, its result sliced to the valid "
    "corner -> the loop over that corner, its operands padded along K alone",
)
def trim_padded_accumulators(module: ir.Module) -> None:
    with mlir_context():
        for loop in ops_named(module, "affine.for", "scf.for"):
            with loop.location:
                _trim(loop)


def _trim(loop: ir.Operation) -> None:
    cut = _valid_corner(loop)
    matmul = _sole_matmul(loop) if cut is not None else None
    if cut is None or matmul is None:
        return
    sizes = static_ints(cut, "static_sizes")
    pads = [_trimmable(matmul.operands[i], d, sizes[i]) for i, d in enumerate(TRIMMED_DIMS)]
    if any(p is None for p in pads) or all(p is True for p in pads):
        return  # a pad it cannot cut, or nothing to cut
    for pad, dim, size in zip(pads, TRIMMED_DIMS, sizes):
        if pad is not True:
            _unpad(pad, dim, size)
    corner = ir.RankedTensorType.get(sizes, ir.RankedTensorType(cut.results[0].type).element_type)
    _retype_accumulator(loop, matmul, corner)
    cut.results[0].replace_all_uses_with(loop.results[0])
    cut.erase()


def _valid_corner(loop: ir.Operation) -> ir.OpView | None:
    """The loop's one result's one use, where it is a static slice from [0, 0] in steps
    of 1 (the part of the accumulator stored)."""
    if len(loop.results) != 1:
        return None
    uses = list(loop.results[0].uses)
    cut = uses[0].owner if len(uses) == 1 else None
    if cut is None or cut.name != "tensor.extract_slice" or len(cut.operands) != 1:
        return None
    sizes = static_ints(cut, "static_sizes")
    if any(static_ints(cut, "static_offsets")) or any(
        s != 1 for s in static_ints(cut, "static_strides")
    ):
        return None
    return cut if len(sizes) == 2 and DYNAMIC not in sizes else None


def _sole_matmul(loop: ir.Operation) -> ir.OpView | None:
    """The plain linalg.matmul the loop's body accumulates into its carried value, each
    used once."""
    body = loop.regions[0].blocks[0]
    acc = body.arguments[len(body.arguments) - 1]
    yielded = list(body.operations)[-1].operands[0]
    matmul = yielded.owner
    if not isinstance(matmul, ir.OpView) or matmul.name != "linalg.matmul":
        return None
    once = all(len(list(v.uses)) == 1 for v in (acc, yielded))
    return matmul if once and plain_layout(matmul) and matmul.operands[2] == acc else None


def _trimmable(operand: ir.Value, dim: int, size: int) -> ir.OpView | bool | None:
    """True where the operand is `size` long along `dim` already; the pad to cut where it
    pads a source of exactly `size` along `dim` (and feeds the matmul alone); else None."""
    if ir.RankedTensorType(operand.type).shape[dim] == size:
        return True
    pad = operand.owner
    if not isinstance(pad, ir.OpView) or pad.name != "tensor.pad" or len(list(operand.uses)) != 1:
        return None
    source = ir.RankedTensorType(pad.operands[0].type).shape[dim]
    return pad if source == size and static_ints(pad, "static_low")[dim] == 0 else None


def _unpad(pad: ir.OpView, dim: int, size: int) -> None:
    """The pad adds nothing along `dim` any more."""
    high = static_ints(pad, "static_high")
    if high[dim] == DYNAMIC:
        position = 1 + sum(x == DYNAMIC for x in static_ints(pad, "static_low"))
        position += sum(x == DYNAMIC for x in high[:dim])
        with ir.InsertionPoint(pad):
            pad.operands[position] = arith.ConstantOp(ir.IndexType.get(), 0).result
    else:
        high[dim] = 0
        pad.attributes["static_high"] = ir.DenseI64ArrayAttr.get(high)
    result = ir.RankedTensorType(pad.results[0].type)
    shape = list(result.shape)
    shape[dim] = size
    pad.results[0].set_type(ir.RankedTensorType.get(shape, result.element_type))


def _retype_accumulator(loop: ir.Operation, matmul: ir.OpView, corner: ir.Type) -> None:
    """The loop carries the corner: its initial value the corner of the old one."""
    init_position = len(loop.operands) - 1
    init = loop.operands[init_position]
    with ir.InsertionPoint(loop):
        loop.operands[init_position] = tensor.ExtractSliceOp(
            corner, init, [], [], [], [0, 0], ir.RankedTensorType(corner).shape, [1, 1]
        ).result
    body = loop.regions[0].blocks[0]
    body.arguments[len(body.arguments) - 1].set_type(corner)
    matmul.results[0].set_type(corner)
    loop.results[0].set_type(corner)
