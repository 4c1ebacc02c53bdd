"""bf16 matmuls as contractions over K pairs, with B packed in pairs: what the dot-product
(`bf16_dot.py`) and AMX (`amx_tiles.py`) passes share.

Both instructions take K in pairs: `vdpbf16ps` adds a[2i] * b[2i] + a[2i+1] * b[2i+1]
into each f32 lane, an AMX tile product does so over 16 pairs. So B's rows are packed
once, in pairs: for each 16 columns, a contiguous block of K/2 rows of 32 bf16, row k2
holding (B[2 k2, n], B[2 k2 + 1, n]) for the block's columns n. A dot product's B operand
(16 columns' pairs) is then one 64-byte row, and an AMX tile (16 such rows) 1 KB in one
piece. The matmul becomes acc[m, j, c] += A[m, k2, p] * packed[j, k2, c, p], with A's K
viewed as pairs and the accumulator's N as blocks of 16: views only, no copies.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, scf, tensor, vector

from helion_fx_mlir.mlir.walk import index_constant, lane_wise_body
from helion_fx_mlir.passes.vectorize import PLAIN_MAPS

PAIR = 2  # K elements one lane's products take
BLOCK = 16  # columns of B per packed block: an AMX tile's, a 512-bit dot product's lanes
ROW = BLOCK * PAIR  # bf16 per packed row
PACK_LANES = 64  # B columns each read of the packing takes
PAIRS = [[0], [1, 2]]  # [R, 2C] <-> [R, C, 2]: a row's K as pairs (the accumulator's N as blocks)
PAIR_MAPS = (
    "affine_map<(m, j, c, k2, p) -> (m, k2, p)>",
    "affine_map<(m, j, c, k2, p) -> (j, k2, c, p)>",
    "affine_map<(m, j, c, k2, p) -> (m, j, c)>",
)
PAIR_ITERATORS = ("parallel", "parallel", "parallel", "reduction", "reduction")


def bf16_operands(op: ir.Operation) -> list[ir.Value] | None:
    """The A and B of a matmul in the plain layout, of static shapes, as bf16 values into
    an f32 accumulator: the operands themselves, or what an elementwise bf16 -> f32
    extension of them (`hl.dot` casts its operands to the accumulator's type) extended;
    exact, so the matmul may take them. None for any other matmul."""
    if str(ir.ShapedType(op.operands[2].type).element_type) != "f32":
        return None
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != PLAIN_MAPS["linalg.matmul"]:
        return None
    sources = [_bf16_source(v) for v in op.operands[:2]]
    found = [s for s in sources if s is not None]
    types = [ir.ShapedType(v.type) for v in (*found, op.operands[2])]
    if len(found) != len(sources) or not all(t.has_static_shape for t in types):
        return None
    return found


def _bf16_source(value: ir.Value) -> ir.Value | None:
    if str(ir.ShapedType(value.type).element_type) == "bf16":
        return value
    body = lane_wise_body(value)
    if body is None or [op.name for op in body] != ["arith.extf", "linalg.yield"]:
        return None
    source = value.owner.operands[0]
    return source if str(ir.ShapedType(source.type).element_type) == "bf16" else None


def packs(k: int, n: int) -> bool:
    """Whether B [K, N] packs in pairs: whole pairs of rows, whole blocks of columns."""
    return k > 0 and n > 0 and k % PAIR == 0 and n % BLOCK == 0


def pair_packed(b: ir.Value) -> ir.Value:
    """B [K, N] (its block itself where B is its contiguous copy, `uncopied`) as one
    block per 16 columns, [N/16 * K/2, 32]: row j * K/2 + k2 holds B's columns
    16j..16j+15 of rows 2*k2 and 2*k2 + 1, interleaved. A loop of two-row reads
    interleaved; it depends on B's block alone, so the programs of a column of output
    tiles share it (`shared_strips.py`)."""
    b = uncopied(b)
    k, n = ir.ShapedType(b.type).shape
    bf16 = ir.BF16Type.get()
    empty = tensor.EmptyOp([n // BLOCK * k // PAIR, ROW], bf16).result
    loop = scf.ForOp(index_constant(0), index_constant(k // PAIR), index_constant(1), [empty])
    with ir.InsertionPoint(loop.body):
        pair_row = loop.induction_variable
        first = arith.muli(pair_row, index_constant(PAIR))
        second = arith.addi(first, index_constant(1))
        pad = arith.ConstantOp(bf16, ir.FloatAttr.get(bf16, 0.0)).result
        packed = loop.inner_iter_args[0]
        lanes = next(w for w in (PACK_LANES, 32, BLOCK) if n % w == 0)
        read = ir.VectorType.get([lanes], bf16)
        row_map = ir.AffineMap.get_minor_identity(2, 1)
        for column in range(0, n, lanes):
            at = index_constant(column)
            rows = [
                vector.transfer_read(read, b, [row, at], row_map, pad, [True])
                for row in (first, second)
            ]
            pairs = vector.interleave(*rows)
            for block in range(lanes // BLOCK):
                block_row = plus(pair_row, (column // BLOCK + block) * k // PAIR)
                packed = vector.transfer_write(
                    packed.type,
                    _block_pairs(pairs, block),
                    packed,
                    [block_row, index_constant(0)],
                    row_map,
                    [True],
                )
        scf.YieldOp([packed])
    return loop.results[0]


def uncopied(value: ir.Value) -> ir.Value:
    """B's block itself where B is its contiguous copy (`packed_operands.py`): the pair
    packing is a copy already."""
    body = lane_wise_body(value)
    return value.owner.operands[0] if body is not None and len(body) == 1 else value


def _block_pairs(pairs: ir.Value, block: int) -> ir.Value:
    """The 32 interleaved lanes of `pairs` that belong to its `block`-th 16 columns."""
    if ir.VectorType(pairs.type).shape == [ROW]:
        return pairs
    return vector.extract_strided_slice(
        ir.VectorType.get([ROW], ir.BF16Type.get()), pairs, [block * ROW], [ROW], [1]
    )


def pair_views(a: ir.Value, packed: ir.Value, acc: ir.Value) -> list[ir.Value]:
    """The pair contraction's operands (PAIR_MAPS): A as [M, K/2, 2], the packed B as
    [N/16, K/2, 16, 2] and the accumulator as [M, N/16, 16]."""
    (m, k), n = ir.ShapedType(a.type).shape, ir.ShapedType(acc.type).shape[1]
    return [
        expanded(a, PAIRS, [m, k // PAIR, PAIR]),
        expanded(packed, [[0, 1], [2, 3]], [n // BLOCK, k // PAIR, BLOCK, PAIR]),
        expanded(acc, PAIRS, [m, n // BLOCK, BLOCK]),
    ]


def as_matmul_result(op: ir.Operation, blocks: ir.Value) -> None:
    """Replace the matmul by the pair contraction's accumulator ([M, N/16, 16], back as
    [M, N]), and erase what fed only the matmul (its operands' casts, B's copy)."""
    with ir.InsertionPoint(op), op.location:
        result = tensor.collapse_shape(op.results[0].type, blocks, [[0], [1, 2]])
    op.results[0].replace_all_uses_with(result)
    operands = list(op.operands[:2])
    op.erase()
    for operand in operands:
        _erase_if_dead(operand.owner)


def _erase_if_dead(op: ir.Operation | ir.Block) -> None:
    """Erase a linalg.generic nothing uses any more (an operand's cast read
    through), then what fed it, likewise."""
    if not isinstance(op, ir.OpView) or op.name != "linalg.generic":
        return
    if any(True for result in op.results for _ in result.uses):
        return
    inputs = list(op.operands)
    op.erase()
    for value in inputs:
        _erase_if_dead(value.owner)


def expanded(value: ir.Value, groups: list[list[int]], shape: list[int]) -> ir.Value:
    """A tensor viewed with its dims split as `groups` says, into `shape`."""
    typed = ir.RankedTensorType.get(shape, ir.ShapedType(value.type).element_type)
    return tensor.expand_shape(typed, value, groups, [], shape)


def plus(value: ir.Value, offset: int) -> ir.Value:
    return value if offset == 0 else arith.addi(value, index_constant(offset))
