"""bf16 matmuls into f32 as AVX512_BF16 dot products (`vdpbf16ps`).

The vector schedule of a matmul (vectorize.py) extends bf16 operands to f32 before its
FMAs. `vdpbf16ps` instead takes K in pairs: each f32 lane adds `a[2i] * b[2i] +
a[2i+1] * b[2i+1]`, twice the flops of an f32 FMA per instruction. So a bf16 x bf16 -> f32
`linalg.matmul` with even K is tiled here, before the general schedule sees it, into
register tiles of K pairs: each row's A pair (A[m, k], A[m, k+1]) is broadcast as one
32-bit word, and `x86.avx512.dot` accumulates into f32 registers held across the K loop.
Where N is a multiple of 16, B is first packed in pairs (`bf16_pairs.py`), each block of
16 columns a contiguous run of 64-byte pair rows that a dot reads as they are; elsewhere
(N a multiple of the 8 lanes of 256-bit code) B's two rows are interleaved into
(B[k, n], B[k+1, n]) pairs in registers, per register tile. A bf16 product is exact in
f32; the instruction rounds after each of its two adds and flushes subnormal inputs and
results to zero, whatever MXCSR says.

It runs after the K loop became one contraction (whole_contractions.py) and before the
general schedule. Only for CPUs with AVX512_BF16: `compile_kernel` lowers with
`pipelines.LLVM_BF16_DOT` where `host_has_bf16_dot`, with `LLVM` elsewhere.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, vector, x86

from helion_fx_mlir.host_cpu import cpu_flags
from helion_fx_mlir.mlir.attributes import VECTOR_WIDTHS
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import calls_intrinsic, index_constant, ops_named
from helion_fx_mlir.passes.bf16_pairs import (
    BLOCK,
    PAIR,
    PAIR_MAPS,
    ROW,
    as_matmul_result,
    bf16_operands,
    packs,
    pair_packed,
    pair_views,
    plus,
)
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vector_width import vector_width
from helion_fx_mlir.passes.vectorize import PLAIN_MAPS, Schedule, apply_schedules

LANES = 16  # f32 lanes of one dot product (a 512-bit register; 8 at 256 bits)
# Accumulator rows x columns held in registers across the K loop. Measured on Zen 4 with
# 64^3 blocks: B interleaved per tile, 8x32 beat 4x64 and 6x64 (one broadcast A pair per
# two dots), and tiling K further (B's K x 32 strip in L1) did not help; B packed in pairs,
# 8x32, 4x64 and 12x32 run level (204-213 GFLOP/s on one thread), 16x16 at 155.
TILE = (8, 32)
DOT_INTRINSIC = "llvm.x86.avx512bf16.dpbf16ps"


def host_has_bf16_dot() -> bool:
    """Whether this machine's CPU lists AVX512_BF16 (LLVM targets the host CPU)."""
    return "avx512_bf16" in cpu_flags()


def has_bf16_dots(module: ir.Module) -> bool:
    """Whether a module in the LLVM dialect calls the dot product's intrinsic."""
    return calls_intrinsic(module, DOT_INTRINSIC)


@register(
    "helion-bf16-dot-products",
    "bf16 x bf16 -> f32 matmuls with even K -> register tiles of x86.avx512.dot (vdpbf16ps)",
)
def bf16_dot_products(module: ir.Module) -> None:
    """Tile and vectorize each such matmul in K pairs, then turn its contractions into dots."""
    with mlir_context():
        lanes = _lanes(module)
        scheduled: list[tuple[ir.Operation, Schedule]] = []
        pair_maps = _pair_maps()
        for op in ops_named(module, "linalg.matmul"):
            if (sources := bf16_operands(op)) is None:
                continue
            if (paired := _paired(op, sources, pair_maps)) is not None:
                scheduled.append(paired)
            elif (schedule := _schedule(op, sources, lanes)) is not None:
                for i, source in enumerate(sources):
                    op.operands[i] = source
                scheduled.append((op, schedule))
        if not scheduled:
            return
        apply_schedules(module, scheduled)
        for contract in ops_named(module, "vector.contract"):
            if _is_pair_contraction(contract, lanes):
                _as_dots(contract, lanes)
            elif _is_packed_contraction(contract, pair_maps):
                _packed_dots(contract, lanes)


def _lanes(module: ir.Module) -> int:
    """The f32 lanes of one dot product: a whole register of the module's vector width
    (`helion-limit-vector-width`; LLVM cannot select the 512-bit dot in 256-bit code)."""
    return LANES * (vector_width(module) or VECTOR_WIDTHS[0]) // VECTOR_WIDTHS[0]


def _paired(
    op: ir.Operation, sources: list[ir.Value], pair_maps: list[ir.AffineMap]
) -> tuple[ir.Operation, Schedule] | None:
    """The matmul as a contraction over K pairs with B packed in pairs (`bf16_pairs.py`),
    and its schedule: TILE of the accumulator, one pair a step. None where B does not pack.

    The packed B is read as it is, one 64-byte row per 16 columns a step; B's own rows had
    to be interleaved in registers for every register tile (two `vpermt2w` per 16 dot
    products). 1024^3, one thread, AMD EPYC (Zen 4): 172-181 -> 196-212 GFLOP/s (torch.mm
    of the bf16 tensors 203-213)."""
    (m, k), n = ir.ShapedType(sources[0].type).shape, ir.ShapedType(op.operands[2].type).shape[1]
    if m == 0 or not packs(k, n):
        return None
    with ir.InsertionPoint(op), op.location:
        a, b, acc = pair_views(sources[0], pair_packed(sources[1]), op.operands[2])
        contraction = linalg.contract(a, b, outs=[acc], indexing_maps=pair_maps)
    as_matmul_result(op, contraction)
    blocks = _divisor(n // BLOCK, TILE[1] // BLOCK, 1)
    rows = _divisor(m, TILE[0], 1)
    return contraction.owner, Schedule(
        (rows, blocks, 0, 1, 0), (rows, blocks, BLOCK, 1, PAIR), contraction=True
    )


def _pair_maps() -> list[ir.AffineMap]:
    """PAIR_MAPS as the maps linalg.contract takes and vector.contract carries."""
    return [ir.AffineMapAttr(ir.Attribute.parse(m)).value for m in PAIR_MAPS]


def _schedule(op: ir.Operation, sources: list[ir.Value], lanes: int) -> Schedule | None:
    """TILE of the accumulator (divisors of M and N, N's a multiple of `lanes`), K in pairs;
    None for any other matmul (odd K, N not in whole registers)."""
    lhs, acc = (ir.ShapedType(v.type) for v in (sources[0], op.operands[2]))
    m, n = acc.shape
    k = lhs.shape[1]
    if 0 in (m, n) or k % PAIR or n % lanes:
        return None
    extents = (m, n, k)
    tile = (_divisor(m, TILE[0], 1), _divisor(n, TILE[1], lanes), PAIR)
    return Schedule(
        tuple(0 if t >= e else t for t, e in zip(tile, extents)), tile, contraction=True
    )


def _divisor(extent: int, most: int, unit: int) -> int:
    """The largest multiple of `unit` up to `most` dividing `extent` (`extent` % `unit` == 0)."""
    return next(t for t in range(min(extent, most) // unit * unit, 0, -unit) if extent % t == 0)


def _is_pair_contraction(op: ir.Operation, lanes: int) -> bool:
    """vector<Mx2xbf16> x vector<2xNxbf16> into vector<MxNxf32>, plain maps, N in registers."""
    lhs, rhs, acc = (ir.VectorType(v.type) for v in op.operands[:3])
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return (
        maps == PLAIN_MAPS["linalg.matmul"]
        and [str(t.element_type) for t in (lhs, rhs, acc)] == ["bf16", "bf16", "f32"]
        and lhs.shape[1] == PAIR
        and acc.shape[1] % lanes == 0
    )


def _as_dots(contract: ir.Operation, lanes: int) -> None:
    """Each `lanes`-wide part of each accumulator row gets one dot of the row's A pair,
    broadcast, with the interleaved B columns of that part."""
    lhs, rhs, acc = contract.operands[:3]
    rows, cols = ir.VectorType(acc.type).shape
    with ir.InsertionPoint(contract), contract.location:
        columns = _interleaved_rows(rhs, cols, lanes)
        result = acc
        for i in range(rows):
            pair = _broadcast_pair(vector.extract(lhs, [], [i]), lanes)
            row = vector.extract(acc, [], [i])
            for j, b in enumerate(columns):
                part = vector.extract_strided_slice(_f32(lanes), row, [j * lanes], [lanes], [1])
                dot = x86.DotBF16Op(part, pair, b, results=[_f32(lanes)]).dst
                row = vector.insert_strided_slice(dot, row, [j * lanes], [1])
            result = vector.insert(row, result, [], [i])
    contract.results[0].replace_all_uses_with(result)
    contract.erase()


def _is_packed_contraction(op: ir.Operation, pair_maps: list[ir.AffineMap]) -> bool:
    """A register tile of the pair contraction (`_paired`): vector<Rx1x2xbf16> of A and
    vector<Jx1x16x2xbf16> of the packed B into vector<RxJx16xf32>."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    lhs, rhs = (ir.VectorType(v.type) for v in op.operands[:2])
    return (
        maps == pair_maps
        and str(lhs.element_type) == str(rhs.element_type) == "bf16"
        and lhs.shape[1:] == [1, PAIR]
        and rhs.shape[1:] == [1, BLOCK, PAIR]
    )


def _packed_dots(contract: ir.Operation, lanes: int) -> None:
    """Each `lanes`-wide part of each accumulator block gets one dot of its row's A pair,
    broadcast, with that part of the block's packed row."""
    lhs, rhs, acc = contract.operands[:3]
    rows, blocks, _ = ir.VectorType(acc.type).shape
    with ir.InsertionPoint(contract), contract.location:
        parts = [_packed_parts(rhs, j, lanes) for j in range(blocks)]
        result = acc
        for i in range(rows):
            pair = _broadcast_pair(vector.extract(lhs, [], [i, 0]), lanes)
            for j in range(blocks):
                block = vector.extract(acc, [], [i, j])
                result = vector.insert(_dots(block, pair, parts[j], lanes), result, [], [i, j])
    contract.results[0].replace_all_uses_with(result)
    contract.erase()
    if isinstance(rhs.owner, ir.OpView) and not any(True for _ in rhs.uses):
        rhs.owner.erase()


def _dots(block: ir.Value, pair: ir.Value, parts: list[ir.Value], lanes: int) -> ir.Value:
    """One accumulator block's dots, a `lanes`-wide part of it with each B part."""
    if len(parts) == 1:
        return x86.DotBF16Op(block, pair, parts[0], results=[_f32(lanes)]).dst
    for h, b in enumerate(parts):
        part = vector.extract_strided_slice(_f32(lanes), block, [h * lanes], [lanes], [1])
        dot = x86.DotBF16Op(part, pair, b, results=[_f32(lanes)]).dst
        block = vector.insert_strided_slice(dot, block, [h * lanes], [1])
    return block


def _packed_parts(rhs: ir.Value, block: int, lanes: int) -> list[ir.Value]:
    """The B operands of one block's dots: its packed row (`_packed_row`) in `lanes`-pair
    parts."""
    row = _packed_row(rhs, block)
    if lanes == BLOCK:
        return [row]
    return [
        vector.extract_strided_slice(
            _bf16(PAIR * lanes), row, [h * PAIR * lanes], [PAIR * lanes], [1]
        )
        for h in range(BLOCK // lanes)
    ]


def _packed_row(rhs: ir.Value, block: int) -> ir.Value:
    """One block's packed row of the step as a vector<32xbf16>: read from the packed 2-D
    tensor where the tile read it through its [N/16, K/2, 16, 2] view (one 64-byte load;
    the 4-D read is unrolled per 2-element innermost row), else taken from the tile."""
    read = rhs.owner
    is_read = isinstance(read, ir.OpView) and read.name == "vector.transfer_read"
    view = read.operands[0].owner if is_read else None
    if not isinstance(view, ir.OpView) or view.name != "tensor.expand_shape":
        return vector.shape_cast(_bf16(ROW), vector.extract(rhs, [], [block, 0]))
    packed, (first, pair_row) = view.operands[0], read.operands[1:3]
    pair_rows = ir.ShapedType(read.operands[0].type).shape[1]
    row = arith.addi(arith.muli(plus(first, block), index_constant(pair_rows)), pair_row)
    bf16 = ir.BF16Type.get()
    pad = arith.ConstantOp(bf16, ir.FloatAttr.get(bf16, 0.0)).result
    return vector.transfer_read(
        _bf16(ROW),
        packed,
        [row, index_constant(0)],
        ir.AffineMap.get_minor_identity(2, 1),
        pad,
        [True],
    )


def _interleaved_rows(rhs: ir.Value, cols: int, lanes: int) -> list[ir.Value]:
    """B's two rows as (B[0, n], B[1, n]) pairs, one vector<2*lanes x bf16> per `lanes`
    columns."""
    first, second = (vector.extract(rhs, [], [k]) for k in range(PAIR))
    return [
        vector.shuffle(
            first,
            second,
            [lane for n in range(j, j + lanes) for lane in (n, cols + n)],
            results=[_bf16(PAIR * lanes)],
        )
        for j in range(0, cols, lanes)
    ]


def _broadcast_pair(pair: ir.Value, lanes: int) -> ir.Value:
    """vector<2xbf16> -> the pair in every 32-bit lane of a vector<2*lanes x bf16>."""
    i32 = ir.IntegerType.get_signless(32)
    word = vector.bitcast(ir.VectorType.get([1], i32), pair)
    words = vector.broadcast(ir.VectorType.get([lanes], i32), word)
    return vector.bitcast(_bf16(PAIR * lanes), words)


def _f32(lanes: int) -> ir.VectorType:
    return ir.VectorType.get([lanes], ir.F32Type.get())


def _bf16(lanes: int) -> ir.VectorType:
    return ir.VectorType.get([lanes], ir.BF16Type.get())
