"""Matmuls whose columns no wide power of two divides, split into parts that one does.

A matmul's register tile takes the largest power of two dividing its columns, up to the
target's (64 f32 on AVX-512, `vectorize.MATMUL_TILES`): other widths (vector<24xf32>)
made code 10-30x slower. A grid's edge is rarely so kind: 1000 columns in 64-column
blocks leave an edge of 40, whose programs then multiplied in 8x8 tiles, a quarter of
the FMA rate of 8x32. Here such a matmul becomes one per part of its columns, the widest
a multiple of the tile's columns, the rest powers of two (40: 32 and 8; 1000: 960, 32
and 8), each vectorized on its own. A chain of matmuls into one accumulator (the whole-K
contraction, then its K tail) splits as a whole, each part's tail accumulating into that
part; the parts land in a fresh tensor, which empty-tensor elimination makes the
program's output tile. f32 in 64^3 blocks, 2 threads, A/B in one process, GFLOP/s:
777^3 275 -> 310 (torch.mm 302), 1500^3 292 -> 304 (345), 1000^3 295 -> 302 (337),
3000x300x3000 182 -> 186 (213).

Before `helion-vectorize-tile-bodies`, after the passes that take bf16 matmuls their own
way (AMX tiles, dot products), on linalg on tensors of static shapes.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import linalg, tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vector_width import vector_registers
from helion_fx_mlir.passes.vectorize import MATMUL_TILES, PLAIN_MAPS, MatmulTile, plain_layout

# Columns are split where this does not divide them: the widest power of two that does
# would make narrower register tiles.
SPLIT_COLUMNS = 16


@register(
    "helion-split-matmul-columns",
    "matmuls whose columns no wide power of two divides -> one per part of the columns",
)
def split_matmul_columns(module: ir.Module) -> None:
    with mlir_context():
        tile = MATMUL_TILES[vector_registers(module)]
        for op in [op for op in ops_named(module, *PLAIN_MAPS) if _chain_head(op)]:
            _split(op, tile)


def _chain_head(op: ir.Operation) -> bool:
    """A plain matmul on tensors of static shapes whose accumulator is not another's result."""
    return (
        bool(op.results)
        and ir.ShapedType(op.results[0].type).has_static_shape
        and plain_layout(op)
        and _chained(op.operands[2]) is None
    )


def _split(op: ir.Operation, tile: MatmulTile) -> None:
    """The chain from `op`, one chain per part of its columns (`_widths`)."""
    chain = [op]
    while (after := _chained_after(chain[-1])) is not None:
        chain.append(after)
    result_type = ir.RankedTensorType(op.results[0].type)
    parts = _widths(result_type.shape[-1], tile.widest(result_type.element_type.width))
    if len(parts) < 2:
        return
    with ir.InsertionPoint(chain[-1]), op.location:
        result = tensor.EmptyOp(result_type.shape, result_type.element_type).result
        start = 0
        for width in parts:
            acc = _columns(op.operands[2], start, width)
            for link in chain:
                acc = _matmul_like(link, _columns(link.operands[1], start, width), acc)
            result = _into_columns(acc, result, start)
            start += width
    chain[-1].results[0].replace_all_uses_with(result)
    for link in reversed(chain):
        link.erase()


def _widths(n: int, most: int) -> list[int]:
    """n columns as the largest multiple of `most` then powers of two, widest first (1000
    in 64s: 960, 32, 8); [n] where SPLIT_COLUMNS divides n or n is half of it or less."""
    if n % SPLIT_COLUMNS == 0 or n <= SPLIT_COLUMNS // 2:
        return [n]
    whole = n - n % most
    parts = [whole] if whole else []
    rest = n - whole
    while rest:
        parts.append(1 << (rest.bit_length() - 1))
        rest -= parts[-1]
    return parts


def _chained(acc: ir.Value) -> ir.Operation | None:
    """The plain matmul whose result, used only here, this accumulator is."""
    owner = acc.owner
    if not isinstance(owner, ir.OpView) or owner.name not in PLAIN_MAPS:
        return None
    return owner if plain_layout(owner) and len(list(owner.results[0].uses)) == 1 else None


def _chained_after(op: ir.Operation) -> ir.Operation | None:
    """The matmul of op's kind that accumulates into op's result, its only use."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or uses[0].operand_number != 2:
        return None
    user = uses[0].owner
    return user if user.name == op.name and _chained(user.operands[2]) is not None else None


def _matmul_like(op: ir.Operation, rhs: ir.Value, acc: ir.Value) -> ir.Value:
    """A matmul of op's kind and attributes, op's A times `rhs` into `acc`."""
    built = getattr(linalg, op.name.removeprefix("linalg."))(op.operands[0], rhs, outs=[acc])
    for name in op.attributes:
        built.owner.attributes[name] = op.attributes[name]
    return built


def _columns(value: ir.Value, start: int, width: int) -> ir.Value:
    """The tensor's columns (last dim) [start, start + width)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    rank = len(shape)
    sizes = [*shape[:-1], width]
    typed = ir.RankedTensorType.get(sizes, ir.RankedTensorType(value.type).element_type)
    offsets = [0] * (rank - 1) + [start]
    return tensor.extract_slice(typed, value, [], [], [], offsets, sizes, [1] * rank)


def _into_columns(part: ir.Value, whole: ir.Value, start: int) -> ir.Value:
    """`part` inserted into `whole`'s columns from `start`."""
    sizes = list(ir.RankedTensorType(part.type).shape)
    offsets = [0] * (len(sizes) - 1) + [start]
    return tensor.insert_slice(part, whole, [], [], [], offsets, sizes, [1] * len(sizes))
