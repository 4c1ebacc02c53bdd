"""bf16 matmuls into f32 on AMX tiles (`tdpbf16ps`), on CPUs that have them.

On a Sapphire Rapids, torch.mm on bf16 tensors runs on AMX (oneDNN): 1024^3 in 1.7-1.9 ms,
five times the peak of the AVX512_BF16 dot products `bf16_dot.py` schedules. An AMX
instruction multiplies a 16x32 bf16 tile of A by a 16x32 bf16 tile of B, read as 16 rows
of K pairs (B[k, n], B[k+1, n]), into a 16x16 f32 tile: each f32 element adds its 16 pair
products, rounding as the hardware does (subnormal inputs and results flushed to zero).

Two passes, so that each works on the form it needs:
- `helion-amx-pair-contractions`, on tensors, in place of the dot products: a bf16 x bf16
  -> f32 `linalg.matmul` with static M and N multiples of 16 and K of 32 gets B packed
  into K pairs, one contiguous 1 KB block per B tile (`bf16_pairs.py`, as the dot
  products take it), and becomes the same contraction over the pairs, a
  `linalg.generic` tagged AMX_TILES, which the vectorizer leaves alone. Untagged, it is
  still the matmul (slowly, as loops). The pairs are packed from B's block itself, not
  from its contiguous copy: the pack then depends on the block alone, and the programs
  of a column of output tiles share it (`shared_strips.py`).
- `helion-amx-tile-contractions`, after bufferization: each tagged contraction becomes
  loops over 2x2 (or fewer) accumulator tiles, 4 C + 2 A + 2 B: AMX's 8 tile registers.
  A tile cannot be carried through a loop (`convert-cf-to-llvm` has no type for it), so a
  chunk of up to CHUNK_STEPS K steps is unrolled with the accumulators loaded before it and
  stored after it; the chunks of a strip of A rows are the middle loop, so that the
  strip's chunk stays in L1 for every group of accumulators along N.

Measured on 1024^3 bf16, 2 threads, one process against the layout of B in pair rows
[K/2, 2N] (all 16 rows of a B tile 4 KB apart, in one L1 set), the loops m, n, k and
chunks of 16 steps, and pairs packed per program: 256x256x1024 blocks 1.23 -> 1.02 ms,
512x256x1024 1.17 -> 1.06, 64^3 1.64 -> 1.08, 32^3 2.33 -> 1.18, 16^3 4.10 -> 2.05
(torch.mm of the bf16 tensors 1.6). A C probe of the same loops with B and A packed
beforehand, outside the timing, reaches 0.80 ms.

The JIT runs these (`pipelines.LLVM_AMX`) where `host_cpu.amx_usable()`: the CPU lists
AMX_BF16 and the kernel granted the process the tile state (`arch_prctl`; without it the
first tile instruction kills the process with SIGILL).
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, scf, x86

from helion_fx_mlir.mlir.attributes import AMX_TILES
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import calls_intrinsic, index_constant, ops_named
from helion_fx_mlir.passes.bf16_pairs import (
    PAIR_ITERATORS,
    PAIR_MAPS,
    as_matmul_result,
    bf16_operands,
    pair_packed,
    pair_views,
    plus,
)
from helion_fx_mlir.passes.registry import register

ROWS = 16  # rows of every tile; an f32 tile's 16 columns, a bf16 tile's 16 K pairs
K_STEP = 32  # K elements one tile multiplication takes (16 pairs)
PAIR = 2
MAX_TILES = 2  # accumulator tiles along M and along N: 4 C + 2 A + 2 B = 8 tile registers
CHUNK_STEPS = 8  # K steps unrolled between loading and storing the accumulators
MULF_INTRINSIC = "llvm.x86.tdpbf16ps"


def has_amx_tiles(module: ir.Module) -> bool:
    """Whether a module in the LLVM dialect multiplies AMX tiles."""
    return calls_intrinsic(module, MULF_INTRINSIC)


@register(
    "helion-amx-pair-contractions",
    "bf16 x bf16 -> f32 matmuls of 16-row, 32-deep tiles -> B packed in K pairs, a tagged "
    "pair contraction",
)
def amx_pair_contractions(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "linalg.matmul"):
            sources = bf16_operands(op)
            if sources is not None and _fits(sources):
                _as_pair_contraction(op, *sources)


def _fits(sources: list[ir.Value]) -> bool:
    """M and N in whole tiles, K in whole tile steps (`bf16_operands`: static shapes)."""
    (m, k), (_, n) = (ir.ShapedType(v.type).shape for v in sources)
    return m > 0 and n > 0 and k > 0 and m % ROWS == 0 and n % ROWS == 0 and k % K_STEP == 0


def _as_pair_contraction(op: ir.Operation, a: ir.Value, b: ir.Value) -> None:
    with ir.InsertionPoint(op), op.location:
        contraction = _tagged_contraction(pair_views(a, pair_packed(b), op.operands[2]))
    as_matmul_result(op, contraction)


def _tagged_contraction(views: list[ir.Value]) -> ir.Value:
    """acc[m, j, c] += A[m, k2, p] * packed[j, k2, c, p] (`bf16_pairs.PAIR_MAPS`) as a
    linalg.generic tagged AMX_TILES, which the vectorizer leaves alone."""
    a, b, acc = views
    generic = linalg.GenericOp(
        [acc.type],
        [a, b],
        [acc],
        ir.ArrayAttr.get([ir.Attribute.parse(m) for m in PAIR_MAPS]),
        ir.ArrayAttr.get(
            [ir.Attribute.parse(f"#linalg.iterator_type<{i}>") for i in PAIR_ITERATORS]
        ),
    )
    bf16, f32 = ir.BF16Type.get(), ir.F32Type.get()
    body = generic.regions[0].blocks.append(bf16, bf16, f32)
    with ir.InsertionPoint(body):
        lhs, rhs, total = body.arguments
        product = arith.mulf(arith.extf(f32, lhs), arith.extf(f32, rhs))
        linalg.YieldOp([arith.addf(total, product)])
    generic.attributes[AMX_TILES] = ir.UnitAttr.get()
    return generic.results[0]


@register(
    "helion-amx-tile-contractions",
    "tagged pair contractions on buffers -> loops of AMX tile loads, tdpbf16ps and stores",
)
def amx_tile_contractions(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "linalg.generic"):
            if AMX_TILES not in op.attributes:
                continue
            buffers = [_unexpanded(v) for v in op.operands]
            if all(v is not None and _unit_rows(v) for v in buffers):
                with ir.InsertionPoint(op), op.location:
                    _tile_loops(*buffers)
                views = dict.fromkeys(v.owner for v in op.operands)
                op.erase()
                for view in views:
                    if not any(True for _ in view.results[0].uses):
                        view.erase()  # the views of the operands only the contraction read


def _unit_rows(value: ir.Value) -> bool:
    """A 2-D buffer whose rows are contiguous: a tile loads or stores rows of it (a view
    of a strided argument, say a transposed one, stays loops)."""
    strides, _ = ir.MemRefType(value.type).get_strides_and_offset()
    return len(strides) == 2 and strides[1] == 1


def _unexpanded(value: ir.Value) -> ir.Value | None:
    """The 2-D buffer a view of the contraction's operand (`bf16_pairs.expanded`,
    bufferized) was expanded from; None for anything else (the contraction then stays loops)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.name != "memref.expand_shape":
        return None
    source = owner.operands[0]
    return source if isinstance(source.type, ir.MemRefType) and source.type.rank == 2 else None


def _tile_loops(a: ir.Value, packed: ir.Value, acc: ir.Value) -> None:
    """For each strip of accumulator rows and each chunk of K steps (the last one shorter
    where CHUNK_STEPS does not divide them), each group of accumulator tiles along N is
    loaded, multiplied by the chunk's A and B tiles and stored: the chunk of A stays in L1
    while B's tiles stream past it from L2."""
    m, k = ir.MemRefType(a.type).shape
    n = ir.MemRefType(acc.type).shape[1]
    rows, cols = (MAX_TILES if extent % (MAX_TILES * ROWS) == 0 else 1 for extent in (m, n))
    steps = k // K_STEP
    chunk = min(steps, CHUNK_STEPS)
    whole, rest = divmod(steps, chunk)
    for_m = _loop(m, rows * ROWS)
    with ir.InsertionPoint(for_m.body):
        tile_m = [plus(for_m.induction_variable, i * ROWS) for i in range(rows)]
        for_k = _loop(whole * chunk * K_STEP, chunk * K_STEP)
        with ir.InsertionPoint(for_k.body):
            _along_n(a, packed, acc, tile_m, cols, for_k.induction_variable, chunk)
            scf.YieldOp([])
        if rest:
            _along_n(a, packed, acc, tile_m, cols, index_constant(whole * chunk * K_STEP), rest)
        scf.YieldOp([])


def _along_n(
    a: ir.Value,
    packed: ir.Value,
    acc: ir.Value,
    tile_m: list[ir.Value],
    cols: int,
    k0: ir.Value,
    steps: int,
) -> None:
    """The loop over the groups of accumulator tiles along N, one chunk of K steps each."""
    for_n = _loop(ir.MemRefType(acc.type).shape[1], cols * ROWS)
    with ir.InsertionPoint(for_n.body):
        tile_n = [plus(for_n.induction_variable, j * ROWS) for j in range(cols)]
        _chunk(a, packed, acc, tile_m, tile_n, k0, steps)
        scf.YieldOp([])


def _chunk(
    a: ir.Value,
    packed: ir.Value,
    acc: ir.Value,
    tile_m: list[ir.Value],
    tile_n: list[ir.Value],
    k0: ir.Value,
    steps: int,
) -> None:
    c_type = ir.Type.parse(f"!x86.amx.tile<{ROWS}x{ROWS}xf32>")
    ab_type = ir.Type.parse(f"!x86.amx.tile<{ROWS}x{K_STEP}xbf16>")
    c = {
        (i, j): x86.TileLoadOp(c_type, acc, [mi, nj]).result
        for i, mi in enumerate(tile_m)
        for j, nj in enumerate(tile_n)
    }
    pair_rows = ir.MemRefType(a.type).shape[1] // PAIR
    blocks = [arith.muli(nj, index_constant(pair_rows // ROWS)) for nj in tile_n]
    for step in range(steps):
        k = plus(k0, step * K_STEP)
        pair_row = arith.divui(k, index_constant(PAIR))
        a_tiles = [x86.TileLoadOp(ab_type, a, [mi, k]).result for mi in tile_m]
        b_tiles = [
            x86.TileLoadOp(ab_type, packed, [arith.addi(block, pair_row), index_constant(0)]).result
            for block in blocks
        ]
        for (i, j), tile in c.items():
            c[i, j] = x86.TileMulFOp(a_tiles[i], b_tiles[j], tile, results=[c_type]).result
    for (i, j), tile in c.items():
        x86.TileStoreOp(acc, [tile_m[i], tile_n[j]], tile)


def _loop(extent: int, step: int) -> scf.ForOp:
    return scf.ForOp(index_constant(0), index_constant(extent), index_constant(step))
