"""bf16 matmuls into f32 as AVX512_BF16 dot products (`vdpbf16ps`).

The vector schedule of a matmul (vectorize.py) extends bf16 operands to f32 before its
FMAs. `vdpbf16ps` instead takes K in pairs: each f32 lane adds `a[2i] * b[2i] +
a[2i+1] * b[2i+1]`, twice the flops of an f32 FMA per instruction. So a bf16 x bf16 -> f32
`linalg.matmul` whose K is even and whose N is a multiple of 16 is tiled here, before the
general schedule sees it, into register tiles of K pairs: per pair, B's two rows are
interleaved into (B[k, n], B[k+1, n]) pairs, each row's A pair (A[m, k], A[m, k+1]) is
broadcast as one 32-bit word, and `x86.avx512.dot` accumulates them into f32 registers
held across the K loop. A bf16 product is exact in f32; the instruction rounds after each
of its two adds and flushes subnormal inputs and results to zero, whatever MXCSR says.

It runs after the K loop became one contraction (whole_contractions.py) and before the
general schedule. Only for CPUs with AVX512_BF16: `compile_kernel` lowers with
`pipelines.LLVM_BF16_DOT` where `host_has_bf16_dot`, with `LLVM` elsewhere.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import vector, x86

from helion_fx_mlir.host_cpu import cpu_flags
from helion_fx_mlir.mlir.attributes import VECTOR_WIDTHS
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import calls_intrinsic, ops_named
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vector_width import vector_width
from helion_fx_mlir.passes.vectorize import PLAIN_MAPS, Schedule, apply_schedules

LANES = 16  # f32 lanes of one dot product (a 512-bit register; 8 at 256 bits)
# Accumulator rows x columns held in registers across the K loop. Measured on Zen 4 with
# 64^3 blocks: 8x32 beat 4x64 and 6x64 (one broadcast A pair per two dots), and tiling K
# further (B's K x 32 strip in L1) did not help.
TILE = (8, 32)
PAIR = 2  # K elements one dot product takes per lane
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
        for op in ops_named(module, "linalg.matmul"):
            sources = bf16_operands(op)
            schedule = _schedule(op, sources, lanes) if sources is not None else None
            if sources is None or schedule is None:
                continue
            for i, source in enumerate(sources):
                op.operands[i] = source
            scheduled.append((op, schedule))
        if not scheduled:
            return
        apply_schedules(module, scheduled)
        for contract in ops_named(module, "vector.contract"):
            if _is_pair_contraction(contract, lanes):
                _as_dots(contract, lanes)


def _lanes(module: ir.Module) -> int:
    """The f32 lanes of one dot product: a whole register of the module's vector width
    (`helion-limit-vector-width`; LLVM cannot select the 512-bit dot in 256-bit code)."""
    return LANES * (vector_width(module) or VECTOR_WIDTHS[0]) // VECTOR_WIDTHS[0]


def bf16_operands(op: ir.Operation) -> list[ir.Value] | None:
    """The matmul's A and B as bf16 values, into an f32 accumulator: the operands
    themselves, or what an elementwise bf16 -> f32 extension of them (`hl.dot` casts its
    operands to the accumulator's type) extended; exact, so the matmul may take them."""
    if str(ir.ShapedType(op.operands[2].type).element_type) != "f32":
        return None
    sources = [_bf16_source(v) for v in op.operands[:2]]
    found = [s for s in sources if s is not None]
    return found if len(found) == len(sources) else None


def _bf16_source(value: ir.Value) -> ir.Value | None:
    if str(ir.ShapedType(value.type).element_type) == "bf16":
        return value
    body = lane_wise_body(value)
    if body is None or [op.name for op in body] != ["arith.extf", "linalg.yield"]:
        return None
    source = value.owner.operands[0]
    return source if str(ir.ShapedType(source.type).element_type) == "bf16" else None


def lane_wise_body(value: ir.Value) -> list[ir.Operation] | None:
    """The body of the one-input linalg.generic of identity maps, all parallel, that made
    the value (an elementwise op of one tensor: a cast, a copy); None for anything else."""
    owner = value.owner
    if (
        not isinstance(owner, ir.OpView)
        or owner.name != "linalg.generic"
        or len(owner.operands) != 2
        or "reduction" in str(owner.attributes["iterator_types"])
    ):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(owner.attributes["indexing_maps"])]
    if not all(m == ir.AffineMap.get_identity(m.n_dims) for m in maps):
        return None
    return list(owner.regions[0].blocks[0].operations)


def _schedule(op: ir.Operation, sources: list[ir.Value], lanes: int) -> Schedule | None:
    """TILE of the accumulator (divisors of M and N, N's a multiple of `lanes`), K in pairs;
    None for any other matmul (odd K, N not in whole registers, dynamic shapes)."""
    lhs, rhs, acc = (ir.ShapedType(v.type) for v in (*sources, op.operands[2]))
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != PLAIN_MAPS["linalg.matmul"] or not all(t.has_static_shape for t in (lhs, rhs, acc)):
        return None
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
