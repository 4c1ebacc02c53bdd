"""Vector schedules for tile bodies, applied with the transform dialect.

Tile bodies have static block-size shapes, so each linalg op in them can be cut into
register-sized tiles and vectorized without masks: one schedule per op class (elementwise,
reduction, matmul, padded load). Ops a schedule does not fit (dynamic shapes, element types
the vector lowering does not handle here) stay scalar loops; a vectorization the transform
dialect refuses leaves its op unchanged. After bufferization, block moves (copies out of
block-shaped buffers, padded loads) become loops of masked rows (block_moves.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith
from torch_mlir.dialects.transform import interpreter

from helion_fx_mlir.errors import RewriteError
from helion_fx_mlir.mlir.attributes import AMX_TILES
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import DYNAMIC, ops_named, ops_where
from helion_fx_mlir.passes.reduction_combiners import known_combiners, subtractions_as_additions
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vector_width import vector_registers

TAG = "helion.schedule"
VECTOR_ELEMENT_TYPES = {"f32", "f64", "i32", "i64", "f16", "bf16"}
HALF_TYPES = {"f16", "bf16"}
LANES = 64  # elements per vector along the innermost dim: four AVX-512 registers of f32
# Rows a reduction reads at once, an innermost one ROW_LANES (one AVX-512 register) of each
# per step: a core keeps more reads in flight over several rows than down one (sum of 4096
# rows of 4096 f32 on 2 threads in 8-row blocks: 1.94 -> 1.76 ms, eager 1.66).
REDUCTION_ROWS = 8
ROW_LANES = 16
MAX_ROWS = 128  # 1-D transfers an n-D one may unroll into (compile time grows with them)
MIN_LANES = 4
# Elements one transfer may move: LLVM legalizes a huge vector type slowly (minutes for
# vector<64x8192xf32>) and, for bf16, into stores it cannot select.
MAX_TRANSFER = 16384
SCALAR_ONLY_OPS = {"math.fpowi", "math.ipowi"}


@dataclass(frozen=True)
class Schedule:
    """Register tile (per loop; 0 keeps the loop whole) and the vector shape of one tile."""

    tile: tuple[int, ...]
    vector: tuple[int, ...]
    contraction: bool = False  # vectorized as vector.contract (FMAs), not multiply + reduce
    split_reduction: int = 0  # lanes of a partial accumulator along the innermost reduction loop
    peel: bool = False  # the innermost tile does not divide its loop: peel the partial tile
    interchange: tuple[int, ...] = ()  # the tile loops' order, outermost first (empty: as is)
    # (dim, rows): a matmul's M loop, which its tile's rows do not divide, peeled; its last
    # tile vectorized at its own rows, so that no tile is masked
    peel_rows: tuple[int, int] | None = None


@dataclass(frozen=True)
class MatmulTile:
    """A matmul's register tile on one target: up to `cols` f32 columns (half as many of a
    64-bit type), and as many rows, up to `rows`, as keep about `accumulators` vector
    registers of `lanes` f32 accumulating across the K loop, beside B's vectors and a
    broadcast A value."""

    cols: int
    lanes: int
    accumulators: int
    rows: int
    peel: bool  # rows that do not divide the block: peeled (else the largest that divide)

    def widest(self, bits: int) -> int:
        """The most columns of `bits`-bit elements a tile takes."""
        return self.cols // (max(bits, 32) // 32)

    def shape(self, n: int, bits: int) -> tuple[int, int]:
        """(rows, columns) for an accumulator n columns wide of `bits`-bit elements."""
        scale = max(bits, 32) // 32
        cols = _lanes_divisor(n, self.widest(bits))
        vectors = max(1, cols * scale // self.lanes)
        return min(self.rows, self.accumulators // vectors), cols


# By the target's vector registers (module attribute VECTOR_REGISTERS; AVX-512's 32 without
# it). AVX-512 (Sapphire Rapids), matmul 1008x1024 @ 1024x1024 f32 on 2 threads, the register
# tile alone changed, one process: 8x16 239 GFLOP/s, 16x16 228, 8x32 283, 12x32 295, 6x64
# 317, 7x64 spills (119); in the pipeline, 1024^3 in 64^3 blocks (10 tiles of 6 rows and
# one of 4 per block) 307 -> 325 (torch.mm 335). AVX2 EPYC (16 ymm), 1024^3 in 64^3
# blocks: 8x32 spills (56 GFLOP/s), 6x16 (4x16 where 6 does not divide) 92-97, 8x8 66.
MATMUL_TILES = {
    32: MatmulTile(cols=64, lanes=16, accumulators=24, rows=8, peel=True),
    16: MatmulTile(cols=16, lanes=8, accumulators=12, rows=6, peel=False),
}


@dataclass(frozen=True)
class Target:
    """What the schedules take from the CPU the code is for."""

    matmul_tile: MatmulTile


@register(
    "helion-vectorize-tile-bodies",
    "tile and vectorize the linalg ops and padded loads a schedule fits",
)
def vectorize_tile_bodies(module: ir.Module) -> None:
    """Tile and vectorize every linalg op and padded load a schedule fits."""
    with mlir_context():
        target = Target(MATMUL_TILES[vector_registers(module)])
        candidates = _candidates(module)
        for op in candidates:
            if op.name == "linalg.generic" and any(_reduction_loops(op)):
                subtractions_as_additions(op)
        scheduled = [(op, schedule_for(op, target)) for op in candidates]
        apply_schedules(module, [(op, s) for op, s in scheduled if s is not None])
        _widen_contractions(module)


def apply_schedules(module: ir.Module, scheduled: list[tuple[ir.Operation, Schedule]]) -> None:
    """Tile and vectorize each op by its schedule: ops are tagged with their schedule's
    group, one transform script handles every group, and the tags are removed."""
    groups: dict[Schedule, int] = {}
    for op, schedule in scheduled:
        op.attributes[TAG] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), groups.setdefault(schedule, len(groups))
        )
    if not groups:
        return
    apply_script(module, transform_script(groups))
    for op in _tagged(module):
        del op.attributes[TAG]


def _widen_contractions(module: ir.Module) -> None:
    """A bf16/f16 contraction into f32 gets its operands extended first: the outer-product
    lowering takes one element type (AVX-512 has FMAs in f32)."""
    for op in ops_named(module, "vector.contract"):
        acc_type = op.operands[2].type.element_type
        if all(v.type.element_type == acc_type for v in op.operands[:2]):
            continue
        with ir.InsertionPoint(op), op.location:
            wide = [_extended(v, acc_type) for v in op.operands[:2]]
            new = ir.Operation.create(
                "vector.contract",
                results=[op.results[0].type],
                operands=[*wide, *op.operands[2:]],
                attributes={name: op.attributes[name] for name in op.attributes},
            )
        op.results[0].replace_all_uses_with(new.results[0])
        op.erase()


def _extended(value: ir.Value, element: ir.Type) -> ir.Value:
    if value.type.element_type == element:
        return value
    wide = ir.VectorType.get(value.type.shape, element)
    if isinstance(element, ir.FloatType):
        return arith.extf(wide, value)
    return arith.extsi(wide, value)


def _candidates(module: ir.Module) -> list[ir.Operation]:
    """Ops a schedule may fit: not those left for AMX tiles (`amx_tiles.py`)."""
    return [op for op in ops_named(module, *SCHEDULERS) if AMX_TILES not in op.attributes]


def _tagged(module: ir.Module) -> list[ir.Operation]:
    return ops_where(module, lambda op: TAG in op.attributes)


def schedule_for(op: ir.Operation, target: Target) -> Schedule | None:
    """The op's schedule, or None to leave it scalar: so is a linalg op on buffers (input
    already bufferized), which has no result to size a schedule by."""
    if not op.results:
        return None
    checked = op.results if op.name == "tensor.pad" else [*op.operands, *op.results]
    dynamic = op.name == "linalg.generic"
    if not all(_vectorizable(v.type, dynamic) for v in checked) or _has_scalar_only_op(op):
        return None
    return SCHEDULERS[op.name](op, target)


def _has_scalar_only_op(op: ir.Operation) -> bool:
    """A body op whose LLVM lowering takes scalars only (llvm.intr.powi's exponent)."""
    return op.name != "tensor.pad" and any(
        inner.name in SCALAR_ONLY_OPS for inner in op.regions[0].blocks[0].operations
    )


def _vectorizable(type_: ir.Type, dynamic: bool = False) -> bool:
    """An element type we vectorize, in a shape known at compile time (any shape where
    `dynamic`: the op's schedule masks what the shape leaves open)."""
    if not isinstance(type_, ir.ShapedType):
        return str(type_) in VECTOR_ELEMENT_TYPES or isinstance(type_, ir.IndexType)
    shaped = type_
    static = shaped.has_static_shape or dynamic
    return static and str(shaped.element_type) in VECTOR_ELEMENT_TYPES


def _shape(value: ir.Value) -> list[int]:
    return list(ir.ShapedType(value.type).shape)


def inner_lanes(extent: int) -> int:
    """Lanes along the innermost dim: the whole dim up to LANES, else a divisor (LANES if
    none divides: the last chunk is partial)."""
    if extent <= LANES:
        return extent
    return next((w for w in (LANES, LANES // 2, LANES // 4) if extent % w == 0), LANES)


def _schedule(
    extents: Sequence[int], tile: Sequence[int], contraction: bool = False
) -> Schedule | None:
    """Tile sizes equal to the extent keep the loop whole (0); empty ops stay as they are."""
    if 0 in extents:
        return None
    sizes = tuple(0 if t >= e else t for t, e in zip(tile, extents))
    inner = next((i for i in reversed(range(len(sizes))) if sizes[i]), None)
    peel = inner is not None and extents[inner] % sizes[inner] != 0
    vector_sizes = tuple(min(t, e) for t, e in zip(tile, extents))
    return Schedule(sizes, vector_sizes, contraction, peel=peel)


def _elementwise(extents: Sequence[int]) -> Schedule | None:
    """One row at a time, LANES wide."""
    if not extents:
        return None
    return _schedule(extents, [1] * (len(extents) - 1) + [inner_lanes(extents[-1])])


def _fill(op: ir.Operation, target: Target) -> Schedule | None:
    return _elementwise(_shape(op.results[0]))


def _generic(op: ir.Operation, target: Target) -> Schedule | None:
    """Every loop one at a time but the innermost, LANES-wide chunks of it. Elementwise:
    rows of vectors. An outer-dim reduction becomes vector adds of rows. An innermost
    reduction longer than one chunk is split: chunks are combined lane by lane into a
    LANES-wide partial accumulator held in registers, reduced across lanes once at the end."""
    extents = loop_extents(op)
    if not extents:
        return None
    reduces = _reduction_loops(op)
    if any(reduces) and not known_combiners(op):
        return None  # the vectorizer would fail the whole script
    if DYNAMIC in extents:
        return _dynamic_generic(op, extents, reduces)
    chunk = inner_lanes(extents[-1])
    if _innermost_reduction(op, reduces) and extents[-1] > chunk:
        tile = [1] * (len(extents) - 1) + [extents[-1]]
        if len(extents) > 1:
            tile[-2] = _divisor(extents[-2], REDUCTION_ROWS)
            if tile[-2] > 1 and extents[-1] > ROW_LANES:
                chunk = ROW_LANES
        split = _schedule(extents, tile)
        peel = extents[-1] % chunk != 0
        return split and dataclasses.replace(split, split_reduction=chunk, peel=peel)
    return _outer_reduction(extents, reduces, chunk) or _elementwise(extents)


def _dynamic_generic(op: ir.Operation, extents: list[int], reduces: list[bool]) -> Schedule | None:
    """Sizes known at run time only (static_shapes=False): outer loops one step at a time,
    the innermost in LANES-wide chunks, its partial last chunk peeled and masked; an
    innermost reduction into a LANES-wide partial accumulator. Outer reductions stay
    scalar."""
    outer = [1] * (len(extents) - 1)
    if _innermost_reduction(op, reduces):
        return Schedule((*outer, 0), (*outer, LANES), split_reduction=LANES, peel=True)
    if any(reduces):
        return None
    return Schedule((*outer, LANES), (*outer, LANES), peel=True)


def _outer_reduction(extents: list[int], reduces: list[bool], chunk: int) -> Schedule | None:
    """Reductions over outer loops with a parallel innermost one (a column sum): each chunk
    of the innermost loop sums up to REDUCTION_ROWS rows in registers before it meets its
    accumulator, which stays in memory (a 4096^2 column sum in 2048x4 tiles, 2 threads:
    3.9-4.1 -> 2.4 ms). Whole chunks only: the chunk loop is not the last, so not peeled."""
    if reduces[-1] or not any(reduces) or extents[-1] % chunk:
        return None
    tile = [_divisor(e, REDUCTION_ROWS) if r else 1 for e, r in zip(extents[:-1], reduces)]
    schedule = _schedule(extents, [*tile, chunk])
    order = sorted(range(len(reduces)), key=lambda d: reduces[d])  # parallel loops first
    return schedule and dataclasses.replace(schedule, interchange=tuple(order))


def _reduction_loops(op: ir.Operation) -> list[bool]:
    """Per loop of a linalg op, whether it reduces."""
    return [str(kind).endswith("reduction>") for kind in op.attributes["iterator_types"]]


def _innermost_reduction(op: ir.Operation, reduces: list[bool]) -> bool:
    """One result, only the innermost loop reduces (the split takes one reduction dim), and
    the result's map is a projected permutation (a keepdim `0` in it does not vectorize)."""
    result_map = ir.AffineMapAttr(list(ir.ArrayAttr(op.attributes["indexing_maps"]))[-1]).value
    return (
        len(op.results) == 1
        and reduces[-1]
        and result_map.is_projected_permutation
        and not any(reduces[:-1])
    )


def loop_extents(op: ir.Operation) -> list[int] | None:
    """Each loop's extent, read off an operand dim its indexing map sends it to."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    extents: list[int | None] = [None] * maps[0].n_dims
    for value, amap in zip(op.operands, maps):
        for dim, expr in zip(
            _shape(value) if isinstance(value.type, ir.ShapedType) else [], amap.results
        ):
            if isinstance(expr, ir.AffineDimExpr):
                extents[expr.position] = dim
    return None if None in extents else [e for e in extents if e is not None]


def _matmul(op: ir.Operation, target: Target) -> Schedule | None:
    """The target's matmul tile of the accumulator, K one step at a time: FMAs of broadcast
    A values with B rows into registers that stay live across the K loop."""
    if not plain_layout(op):
        return None  # a transposed or broadcast operand: the schedule is for plain layouts
    *batch, m, n = _shape(op.results[0])
    k = _shape(op.operands[0])[-1]
    bits = ir.ShapedType(op.results[0].type).element_type.width
    rows, cols = target.matmul_tile.shape(n, bits)
    if not target.matmul_tile.peel:
        rows = _divisor(m, rows)
    schedule = _schedule([*batch, m, n, k], [*[1] * len(batch), rows, cols, 1], contraction=True)
    if schedule is None or m <= rows or m % rows == 0:
        return schedule
    return dataclasses.replace(schedule, peel_rows=(len(batch), m % rows))


PLAIN_MAPS = {
    "linalg.matmul": [
        "(d0, d1, d2) -> (d0, d2)",
        "(d0, d1, d2) -> (d2, d1)",
        "(d0, d1, d2) -> (d0, d1)",
    ],
    "linalg.batch_matmul": [
        "(d0, d1, d2, d3) -> (d0, d1, d3)",
        "(d0, d1, d2, d3) -> (d0, d3, d2)",
        "(d0, d1, d2, d3) -> (d0, d1, d2)",
    ],
}


def plain_layout(op: ir.Operation) -> bool:
    """A matmul or batch_matmul whose operands are in the plain layouts (PLAIN_MAPS)."""
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return maps == PLAIN_MAPS[op.name]


def _lanes_divisor(extent: int, most: int) -> int:
    """The matmul tile's columns: the largest power of two up to `most` dividing the
    extent. Other widths (vector<20xf32>, <24xf32>) make slow code: 1024x1024 @ 1024x24
    f32 in one 64-row block, 2 threads: 6.8 ms in 8x24 tiles, 0.37 in 8x8 (torch 0.26)."""
    return next(w for w in range(min(extent, most), 0, -1) if extent % w == 0 and not w & (w - 1))


def _divisor(extent: int, most: int) -> int:
    return next(t for t in range(min(extent, most), 0, -1) if extent % t == 0)


def _pad(op: ir.Operation, target: Target) -> Schedule | None:
    """A padded load: one masked vector read of the block (valid lanes), the rest the pad value."""
    shape = _shape(op.results[0])
    return Schedule((), tuple(shape)) if unrolls_well(shape) else None


def unrolls_well(shape: Sequence[int]) -> bool:
    """An n-D transfer is unrolled into one 1-D transfer per row: few rows, each several
    lanes, and not too many elements in all."""
    return (
        0 not in shape
        and math.prod(shape[:-1]) <= MAX_ROWS
        and shape[-1] >= MIN_LANES
        and math.prod(shape) <= MAX_TRANSFER
    )


SCHEDULERS = {
    "linalg.fill": _fill,
    "linalg.generic": _generic,
    "linalg.matmul": _matmul,
    "linalg.batch_matmul": _matmul,
    "tensor.pad": _pad,
}


def transform_script(groups: dict[Schedule, int]) -> str:
    """One tile + vectorize per schedule, then cleanups and accumulator hoisting."""
    body = "\n".join(_group_steps(schedule, index) for schedule, index in groups.items())
    return f"""module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
{body}
    %funcs = transform.structured.match ops{{["func.func"]}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {{
      transform.apply_patterns.vector.lower_masked_transfers
    }} : !transform.any_op
    transform.apply_patterns to %funcs {{
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.vector.transfer_permutation_patterns
    }} : !transform.any_op
    %loops = transform.structured.match ops{{["scf.for"]}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {{
    ^bb0(%loop: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %loop : !transform.any_op
    }}
    transform.apply_patterns to %funcs {{
      transform.apply_patterns.canonicalization
    }} : !transform.any_op
    transform.yield
  }}
}}"""


def _group_steps(schedule: Schedule, index: int) -> str:
    any_op = "!transform.any_op"
    match = (
        f"    %g{index} = transform.structured.match attributes {{{TAG} = {index} : i64}} in %root"
        f" : ({any_op}) -> {any_op}"
    )
    handle = f"%g{index}"
    steps = [match]
    if any(schedule.tile):
        loops = sum(1 for t in schedule.tile if t)
        results = ", ".join([f"%t{index}"] + [f"%l{index}_{i}" for i in range(loops)])
        sizes = ", ".join(map(str, schedule.tile))
        handles = ", ".join([any_op] * (loops + 1))
        order = f" interchange = [{', '.join(map(str, schedule.interchange))}]"
        steps.append(
            f"    {results} = transform.structured.tile_using_for %g{index} tile_sizes "
            f"[{sizes}]{order if schedule.interchange else ''} : ({any_op}) -> ({handles})"
        )
        handle = f"%t{index}"
        if schedule.peel_rows:
            loop, rest = _last_rows(schedule, *schedule.peel_rows)
            steps.append(_peeled_vectorize_steps(schedule, f"%l{index}_{loop}", rest))
            return "\n".join(steps)
        if schedule.peel and not schedule.split_reduction:
            steps.append(_peeled_vectorize_steps(schedule, f"%l{index}_{loops - 1}"))
            return "\n".join(steps)
    steps.append(
        _split_steps(schedule, handle, index)
        if schedule.split_reduction
        else _vectorize_steps(schedule, handle)
    )
    return "\n".join(steps)


def _peeled_vectorize_steps(schedule: Schedule, loops: str, rest: Schedule | None = None) -> str:
    """Each of the tile loops peeled (_peel_steps), the ops of both parts vectorized: the
    last part's at `rest`'s vector sizes where given (unmasked), else at the schedule's."""
    any_op = "!transform.any_op"
    peel = _peel_steps("%loop", "p").replace("\n    ", "\n      ")
    parts = [(schedule, "%p_all")] if rest is None else [(schedule, "%p_m"), (rest, "%p_r")]
    vectorize = "\n      ".join(
        _vectorize_steps(each, handle).replace("\n    ", "\n      ").strip()
        for each, handle in parts
    )
    return f"""    transform.foreach {loops} : {any_op} {{
    ^bb0(%each: {any_op}):
      transform.sequence %each : {any_op} failures(suppress) {{
      ^bb1(%loop: {any_op}):
      {peel.strip()}
      {vectorize}
      }}
    }}"""


def _last_rows(schedule: Schedule, dim: int, rows: int) -> tuple[int, Schedule]:
    """A matmul's M tile loop (op dim `dim`: its place among the tile loops) and the
    schedule of its last `rows`, which the loop's tile does not divide."""
    loop = sum(1 for t in schedule.tile[:dim] if t)
    vector = tuple(rows if i == dim else v for i, v in enumerate(schedule.vector))
    return loop, dataclasses.replace(schedule, vector=vector)


def _peel_steps(loop: str, name: str) -> str:
    """The loop's whole tiles in one loop, its partial last tile in another (both static
    once bounds fold): only the last tile is masked. `%{name}_all`: the linalg ops of both."""
    any_op = "!transform.any_op"
    return f"""    %{name}_for = transform.cast {loop} : {any_op} to !transform.op<"scf.for">
    %{name}_main, %{name}_rest = transform.loop.peel %{name}_for
      : (!transform.op<"scf.for">) -> ({any_op}, {any_op})
    %{name}_m = transform.structured.match interface{{LinalgOp}} in %{name}_main
      : ({any_op}) -> {any_op}
    %{name}_r = transform.structured.match interface{{LinalgOp}} in %{name}_rest
      : ({any_op}) -> {any_op}
    %{name}_all = transform.merge_handles %{name}_m, %{name}_r : {any_op}"""


def _vectorize_steps(schedule: Schedule, handle: str) -> str:
    any_op = "!transform.any_op"
    options = " {create_named_contraction}" if schedule.contraction else ""
    sizes = ", ".join(map(str, schedule.vector))
    return f"""    transform.foreach {handle} : {any_op} {{
    ^bb0(%op: {any_op}):
      transform.sequence %op : {any_op} failures(suppress) {{
      ^bb1(%one: {any_op}):
        transform.structured.vectorize %one vector_sizes [{sizes}]{options}
          : {any_op}
      }}
    }}"""


def _split_steps(schedule: Schedule, handle: str, index: int) -> str:
    """The innermost reduction loop in chunks into a partial accumulator (its init the
    combiner's neutral value), merged into the op's own init after the loop; all three
    vectorized. A partial last chunk is peeled (only it is masked)."""
    any_op = "!transform.any_op"
    sizes = ", ".join(["0"] * (len(schedule.tile) - 1) + [str(schedule.split_reduction)])
    chunks, vector_sizes, peel = "%chunks", "", ""
    if schedule.peel:  # the chunks' sizes are dynamic until the peeled bounds fold
        peel = "\n    " + _peel_steps("%loop", f"s{index}").replace("\n    ", "\n        ")
        chunks = f"%s{index}_all"
        lanes = [*schedule.vector[:-1], schedule.split_reduction]
        vector_sizes = f" vector_sizes [{', '.join(map(str, lanes))}]"
    return f"""    transform.foreach {handle} : {any_op} {{
    ^bb0(%op: {any_op}):
      transform.sequence %op : {any_op} failures(suppress) {{
      ^bb1(%one: {any_op}):
        %fill, %chunks, %merge, %loop = transform.structured.tile_reduction_using_for %one
          by tile_sizes = [{sizes}]
          : ({any_op}) -> ({any_op}, {any_op}, {any_op}, {any_op}){peel}
        transform.structured.vectorize %fill : {any_op}
        transform.foreach {chunks} : {any_op} {{
        ^bb2(%chunk: {any_op}):
          transform.structured.vectorize %chunk{vector_sizes} : {any_op}
        }}
        transform.structured.vectorize %merge : {any_op}
      }}
    }}"""


def patterns_script(*patterns: str) -> str:
    """A transform script applying these pattern sets (`tensor.fold_tensor_empty`, ...) to
    every function, in one greedy rewrite."""
    applied = "\n".join(f"      transform.apply_patterns.{name}" for name in patterns)
    return f"""module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %funcs = transform.structured.match ops{{["func.func"]}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {{
{applied}
    }} : !transform.any_op
    transform.yield
  }}
}}"""


def apply_script(module: ir.Module, script: str) -> None:
    """Run a transform script (transform_script) on the module."""
    transforms = ir.Module.parse(script)
    try:
        interpreter.apply_named_sequence(
            module.operation, transforms.body.operations[0], transforms
        )
    except ir.MLIRError as err:
        raise RewriteError("vectorize", [(module.operation.location, str(err))]) from None
