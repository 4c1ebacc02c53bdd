"""bf16 matmuls into f32 on AMX tiles (`tdpbf16ps`), on CPUs that have them.

On a Sapphire Rapids, torch.mm on bf16 tensors runs on AMX (oneDNN): 1024^3 in 1.7-1.9 ms,
five times the peak of the AVX512_BF16 dot products `bf16_dot.py` schedules. An AMX
instruction multiplies a 16x32 bf16 tile of A by a 16x32 bf16 tile of B, read as 16 rows
of K pairs (B[k, n], B[k+1, n]), into a 16x16 f32 tile: each f32 element adds its 16 pair
products, rounding as the hardware does (subnormal inputs and results flushed to zero).

Two passes, so that each works on the form it needs:
- `helion-amx-pair-contractions`, on tensors, in place of the dot products: a bf16 x bf16
  -> f32 `linalg.matmul` with static M and N multiples of 16 and K of 32 gets B packed
  into K pairs (a loop of two-row reads interleaved into one row of [K/2, 2N]) and
  becomes the same contraction over the pairs, a `linalg.generic` tagged AMX_TILES, which
  the vectorizer leaves alone. Untagged, it is still the matmul (slowly, as loops).
- `helion-amx-tile-contractions`, after bufferization: each tagged contraction becomes
  loops over 2x2 (or fewer) accumulator tiles, 4 C + 2 A + 2 B: AMX's 8 tile registers.
  A tile cannot be carried through a loop (`convert-cf-to-llvm` has no type for it), so a
  chunk of up to CHUNK_STEPS K steps is unrolled with the accumulators loaded before it and
  stored after it.

The JIT runs these (`pipelines.LLVM_AMX`) where `host_cpu.amx_usable()`: the CPU lists
AMX_BF16 and the kernel granted the process the tile state (`arch_prctl`; without it the
first tile instruction kills the process with SIGILL).
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, scf, tensor, vector, x86

from helion_fx_mlir.mlir.attributes import AMX_TILES
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import calls_intrinsic, index_constant, ops_named
from helion_fx_mlir.passes.bf16_dot import bf16_operands
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import PLAIN_MAPS

ROWS = 16  # rows of every tile; an f32 tile's 16 columns, a bf16 tile's 16 K pairs
K_STEP = 32  # K elements one tile multiplication takes (16 pairs)
PAIR = 2
PAIRS = [[0], [1, 2]]  # [R, 2C] <-> [R, C, 2]: a row's K (or B's 2N) as pairs
MAX_TILES = 2  # accumulator tiles along M and along N: 4 C + 2 A + 2 B = 8 tile registers
CHUNK_STEPS = 16  # K steps unrolled between loading and storing the accumulators
PACK_LANES = 64  # B columns each read of the pair packing takes
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
            if sources is not None and _fits(op, sources):
                _as_pair_contraction(op, *sources)


def _fits(op: ir.Operation, sources: list[ir.Value]) -> bool:
    """Plain maps, static shapes, M and N in whole tiles, K in whole tile steps."""
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    types = [ir.ShapedType(v.type) for v in (*sources, op.operands[2])]
    if maps != PLAIN_MAPS["linalg.matmul"] or not all(t.has_static_shape for t in types):
        return False
    (m, k), (_, n) = types[0].shape, types[1].shape
    return m > 0 and n > 0 and k > 0 and m % ROWS == 0 and n % ROWS == 0 and k % K_STEP == 0


def _as_pair_contraction(op: ir.Operation, a: ir.Value, b: ir.Value) -> None:
    with ir.InsertionPoint(op), op.location:
        packed = _pair_packed(b)
        contraction = _pair_contraction(a, packed, op.operands[2])
    op.results[0].replace_all_uses_with(contraction.results[0])
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


def _pair_packed(b: ir.Value) -> ir.Value:
    """B [K, N] as [K/2, 2N]: row k2 interleaves B's rows 2*k2 and 2*k2 + 1."""
    k, n = ir.ShapedType(b.type).shape
    bf16 = ir.BF16Type.get()
    empty = tensor.EmptyOp([k // PAIR, PAIR * n], bf16).result
    loop = scf.ForOp(index_constant(0), index_constant(k // PAIR), index_constant(1), [empty])
    with ir.InsertionPoint(loop.body):
        pair_row = loop.induction_variable
        first = arith.muli(pair_row, index_constant(PAIR))
        second = arith.addi(first, index_constant(1))
        pad = arith.ConstantOp(bf16, ir.FloatAttr.get(bf16, 0.0)).result
        packed = loop.inner_iter_args[0]
        lanes = next(w for w in (PACK_LANES, 32, ROWS) if n % w == 0)
        read = ir.VectorType.get([lanes], bf16)
        row_map = ir.AffineMap.get_minor_identity(2, 1)
        for column in range(0, n, lanes):
            at = index_constant(column)
            rows = [
                vector.transfer_read(read, b, [row, at], row_map, pad, [True])
                for row in (first, second)
            ]
            pairs = vector.interleave(*rows)
            packed = vector.transfer_write(
                packed.type,
                pairs,
                packed,
                [pair_row, index_constant(PAIR * column)],
                row_map,
                [True],
            )
        scf.YieldOp([packed])
    return loop.results[0]


def _pair_contraction(a: ir.Value, packed: ir.Value, acc: ir.Value) -> ir.Operation:
    """acc[m, n] += A[m, k2, p] * packed[k2, n, p], A and the packed B viewed with K (2N)
    split into pairs: the matmul over K pairs (maps linalg can invert)."""
    maps = [
        "affine_map<(m, n, k2, p) -> (m, k2, p)>",
        "affine_map<(m, n, k2, p) -> (k2, n, p)>",
        "affine_map<(m, n, k2, p) -> (m, n)>",
    ]
    iterators = ["parallel", "parallel", "reduction", "reduction"]
    generic = linalg.GenericOp(
        [acc.type],
        [_in_pairs(a), _in_pairs(packed)],
        [acc],
        ir.ArrayAttr.get([ir.Attribute.parse(m) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{i}>") for i in iterators]),
    )
    bf16, f32 = ir.BF16Type.get(), ir.F32Type.get()
    body = generic.regions[0].blocks.append(bf16, bf16, f32)
    with ir.InsertionPoint(body):
        lhs, rhs, total = body.arguments
        product = arith.mulf(arith.extf(f32, lhs), arith.extf(f32, rhs))
        linalg.YieldOp([arith.addf(total, product)])
    generic.attributes[AMX_TILES] = ir.UnitAttr.get()
    return generic


def _in_pairs(value: ir.Value) -> ir.Value:
    """[R, 2C] viewed as [R, C, 2]."""
    rows, columns = ir.ShapedType(value.type).shape
    shape = [rows, columns // PAIR, PAIR]
    pairs = ir.RankedTensorType.get(shape, ir.ShapedType(value.type).element_type)
    return tensor.expand_shape(pairs, value, PAIRS, [], shape)


@register(
    "helion-amx-tile-contractions",
    "tagged pair contractions on buffers -> loops of AMX tile loads, tdpbf16ps and stores",
)
def amx_tile_contractions(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "linalg.generic"):
            if AMX_TILES not in op.attributes:
                continue
            a, packed = (_unpaired(v) for v in op.operands[:2])
            rows = [v for v in (a, packed, op.operands[2]) if v is not None and _unit_rows(v)]
            if len(rows) == 3:
                with ir.InsertionPoint(op), op.location:
                    _tile_loops(a, packed, op.operands[2])
                op.erase()


def _unit_rows(value: ir.Value) -> bool:
    """A 2-D buffer whose rows are contiguous: a tile loads or stores rows of it (a view
    of a strided argument, say a transposed one, stays loops)."""
    strides, _ = ir.MemRefType(value.type).get_strides_and_offset()
    return len(strides) == 2 and strides[1] == 1


def _unpaired(value: ir.Value) -> ir.Value | None:
    """The [R, 2C] buffer a [R, C, 2] view of it (`_in_pairs`, bufferized) was expanded
    from; None for anything else (the contraction then stays loops)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.name != "memref.expand_shape":
        return None
    source = owner.operands[0]
    return source if isinstance(source.type, ir.MemRefType) and source.type.rank == 2 else None


def _tile_loops(a: ir.Value, packed: ir.Value, acc: ir.Value) -> None:
    """For each group of accumulator tiles: each chunk of K steps loads them, multiplies
    the A and B tiles of its steps into them, and stores them."""
    m, k = ir.MemRefType(a.type).shape
    n = ir.MemRefType(acc.type).shape[1]
    rows, cols = (MAX_TILES if extent % (MAX_TILES * ROWS) == 0 else 1 for extent in (m, n))
    steps = k // K_STEP
    chunk = next(s for s in range(min(steps, CHUNK_STEPS), 0, -1) if steps % s == 0)
    for_m = _loop(m, rows * ROWS)
    with ir.InsertionPoint(for_m.body):
        for_n = _loop(n, cols * ROWS)
        with ir.InsertionPoint(for_n.body):
            for_k = _loop(k, chunk * K_STEP)
            with ir.InsertionPoint(for_k.body):
                tile_m = [_plus(for_m.induction_variable, i * ROWS) for i in range(rows)]
                tile_n = [_plus(for_n.induction_variable, j * ROWS) for j in range(cols)]
                _chunk(a, packed, acc, tile_m, tile_n, for_k.induction_variable, chunk)
                scf.YieldOp([])
            scf.YieldOp([])
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
    pair_columns = [arith.muli(nj, index_constant(PAIR)) for nj in tile_n]
    for step in range(steps):
        k = _plus(k0, step * K_STEP)
        pair_row = arith.divui(k, index_constant(PAIR))
        a_tiles = [x86.TileLoadOp(ab_type, a, [mi, k]).result for mi in tile_m]
        b_tiles = [x86.TileLoadOp(ab_type, packed, [pair_row, col]).result for col in pair_columns]
        for (i, j), tile in c.items():
            c[i, j] = x86.TileMulFOp(a_tiles[i], b_tiles[j], tile, results=[c_type]).result
    for (i, j), tile in c.items():
        x86.TileStoreOp(acc, [tile_m[i], tile_n[j]], tile)


def _loop(extent: int, step: int) -> scf.ForOp:
    return scf.ForOp(index_constant(0), index_constant(extent), index_constant(step))


def _plus(value: ir.Value, offset: int) -> ir.Value:
    return value if offset == 0 else arith.addi(value, index_constant(offset))
