"""A grid whose tiles are whole but on its last row or column: the edges as grids apart.

Where M or N do not divide their blocks, Helion sizes every tile `min(block, M - i *
block)` and pads it up to the block, though only the grid's last row and column of
programs pad anything. Every program then takes the padded, dynamically sized path: masked
reads, padded copies of whole strips, loops over K that cannot become one contraction, and
no B strip shared across programs (`shared_strips.py`). Here a grid whose program-id
arithmetic is the same on every program but the last along a dimension becomes a grid of
the programs before it and a grid of the edge, chained through the output tensor; in each,
the values that are the same on all its programs become constants, so the interior's
tiles are static and whole and the edges' tiles static and short. The values are
evaluated on every program (`grid_values.py`), never assumed. f32 in 64^3 blocks, 2
threads, with `trimmed_accumulators.py`: 1040^3 9.5-9.7 -> 7.9 ms, 1000^3 7.9-8.1 -> 6.9
(1024^3 7.2, torch.mm 5.5-6.5 in the same runs).

A dimension splits only where the programs before its edge are at least as many as the
threads (`helion.threads`; the grids run one after another, each shared by the threads),
and along two programs only where a tile's size changes (an offset changes on the last
program too: a batch of 21 in blocks of 16 splits, one of 32 does not). A
piece of one program becomes its body as `helion-promote-single-program-grids` makes it
(MLIR's canonicalizer would lose a program's second store). On linalg on tensors,
`scf.forall` grids with static bounds, before canonicalization folds the constants into
static shapes (`helion-fuse-elementwise`).
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.grid_values import GridValues
from helion_fx_mlir.mlir.walk import constant_int, index_constant, ops_named, ops_where
from helion_fx_mlir.passes.grid_groups import grid_trips, threads_of
from helion_fx_mlir.passes.helion_ops import one_program, promote_program
from helion_fx_mlir.passes.registry import register

MAX_PROGRAMS = 1 << 14  # grids evaluated program by program up to this size
Box = list[range]  # programs of a grid: a range of ids per dimension


@register(
    "helion-split-grid-edges",
    "a grid whose tiles differ only on its last row or column -> the grid before it and "
    "the edges' grids, the program-invariant sizes as constants",
)
def split_grid_edges(module: ir.Module) -> None:
    with mlir_context():
        threads = threads_of(module)
        for grid in ops_named(module, "scf.forall"):
            if grid.operation.parent.name == "func.func":  # a grid, not a loop in one
                _split(grid, threads)


def _split(grid: ir.Operation, threads: int) -> None:
    """The grid as the programs before its edges, then each edge, split further in turn;
    or, without edges, its program-invariant values folded."""
    trips = grid_trips(grid)
    if trips is not None and one_program(grid):
        promote_program(grid)  # as the linalg pipeline does (upstream's loses stores)
        return
    if trips is None or math.prod(trips) > MAX_PROGRAMS or _carries_several_tiles(grid):
        return
    body = grid.regions[0].blocks[0]
    values = GridValues(list(body.arguments)[: len(trips)], [range(t) for t in trips])
    ends = [
        t - 1 if _splits(body, values, trips, dim, threads) else t for dim, t in enumerate(trips)
    ]
    if ends == trips:
        _fold(body, values)
        return
    outputs = list(grid.operands)
    pieces = []
    for box in [[range(e) for e in ends], *_edges(ends, trips)]:
        piece = _piece(grid, box, outputs)
        outputs = list(piece.results)
        pieces.append(piece)
    for old, new in zip(grid.results, outputs):
        old.replace_all_uses_with(new)
    grid.erase()
    for piece in pieces:
        _split(piece, threads)


def _carries_several_tiles(grid: ir.Operation) -> bool:
    """Whether a loop of the grid's programs carries more than one tensor (attention's
    running max, sum and accumulator). Static, their unit dims fold into reshapes that
    `write_into_loop_carried` does not follow, and each step allocated its tiles anew:
    attention on 8 x 1000 x 64 (16-row tiles) 12.2 -> 13.9 ms split. Such grids stay
    whole."""
    loops = ops_where(grid, lambda op: op.name in ("scf.for", "affine.for"))
    return any(sum(isinstance(r.type, ir.RankedTensorType) for r in op.results) > 1 for op in loops)


def _splits(body: ir.Block, values: GridValues, trips: list[int], dim: int, threads: int) -> bool:
    """Whether the grid splits before its last program along `dim`: the programs before
    it are at least as many as the threads, and a value changes on the last program alone.
    Along two programs an offset changes there too, whole tiles or not: there only a tile's
    size (an affine.min) tells an edge."""
    before = math.prod(trips) // trips[dim] * (trips[dim] - 1)
    return before >= threads and _edge_varies(body, values, dim, trips[dim] > 2)


def _edge_varies(body: ir.Block, values: GridValues, dim: int, any_value: bool) -> bool:
    """Whether a top-level value of the body (any, or a tile's size) is the same along
    `dim` on every program but the last, and another on the last (a tile's size, where
    the last tile is partial)."""
    return any(
        values.changes_last(result, dim)
        for op in body.operations
        if values.evaluated(op) and (any_value or op.name == "affine.min")
        for result in op.results
    )


def _edges(ends: list[int], trips: list[int]) -> list[Box]:
    """The programs past the box [0, ends), as disjoint boxes: past its end along one
    dimension, within it along the dimensions before."""
    return [
        [
            *(range(e) for e in ends[:dim]),
            range(ends[dim], trips[dim]),
            *(range(t) for t in trips[dim + 1 :]),
        ]
        for dim in range(len(trips))
        if ends[dim] < trips[dim]
    ]


def _piece(grid: ir.Operation, box: Box, outputs: list[ir.Value]) -> ir.Operation:
    """A copy of the grid before it, over the box's programs and writing into `outputs`,
    its program-invariant values folded."""
    with ir.InsertionPoint(grid), grid.location:
        piece = grid.clone()
    piece.attributes["staticUpperBound"] = ir.DenseI64ArrayAttr.get([len(r) for r in box])
    for i, output in enumerate(outputs):
        piece.operands[i] = output
    body = piece.regions[0].blocks[0]
    ids = list(body.arguments)[: len(box)]
    _shift_ids(body, ids, box)
    _fold(body, GridValues(ids, [range(len(r)) for r in box]))
    return piece


def _shift_ids(body: ir.Block, ids: list[ir.Value], box: Box) -> None:
    """Uses of each program id the id plus the box's start (the grid still runs from 0)."""
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        for variable, programs in zip(ids, box):
            if programs.start:
                shifted = arith.addi(variable, index_constant(programs.start))
                for use in list(variable.uses):
                    if use.owner != shifted.owner:
                        use.owner.operands[use.operand_number] = shifted


def _constants(ops: list[ir.Operation]) -> dict[tuple[str, int], ir.Value]:
    """The body's integer constants by type and value, moved to its start (where they
    dominate every use a fold gives them): each value is made once."""
    found: dict[tuple[str, int], ir.Value] = {}
    for op in ops:
        number = constant_int(op.results[0]) if op.name == "arith.constant" else None
        if number is not None:
            op.move_before(ops[0])
            found.setdefault((str(op.results[0].type), number), op.results[0])
    return found


def _fold(body: ir.Block, values: GridValues) -> None:
    """Top-level values the same on every program -> constants; what computed them, left
    unused, erased."""
    ops = list(body.operations)
    constants = _constants(ops)
    for op in ops:
        for result in op.results if values.evaluated(op) and op.name != "arith.constant" else ():
            number = values.uniform(result)
            if number is None:
                continue
            key = (str(result.type), number)
            if key not in constants:
                with ir.InsertionPoint(ops[0]), op.location:
                    constants[key] = arith.ConstantOp(result.type, number).result
            result.replace_all_uses_with(constants[key])
    for op in reversed(ops):
        if values.evaluated(op) and not any(True for r in op.results for _ in r.uses):
            op.erase()
