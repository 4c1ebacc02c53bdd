"""Programs of a grid that loop over strips run in groups, their loops interleaved.

`for tile_n in hl.tile(n): acc = 0; for tile_m in hl.tile(m): acc += x[tile_m, tile_n].sum(0)`
(a column sum) gives each program a narrow column strip: every row it reads is 16 KB from
the last, on a new page, where hardware prefetchers stop. The programs of a grid are
independent, so any interleaving of them is the same kernel: a group of G consecutive
programs runs each one's set-up, then the loop once, doing all G programs' iteration m
before m + 1. A row is then read G strips wide, contiguously (a 32-wide column sum of a
4096^2 tensor: 5.4 -> about 2.7 ms on 2 threads). The same holds along a row of 2-D tiles:
an add in 32x32 tiles reads 32 rows 128 bytes at a time, 96 streams for 3 tensors; grouped
by up to 128 along the grid's last dimension, whole 16 KB rows at a time (4096^2 on 2
threads: 30.4 -> 23.1 ms, eager 24.3, in groups of 16; 1024x4096: 1.38 -> 0.99 ms from 16
to 128, eager 1.20).

Only strips are grouped: where the loop (or a loop in it) indexes the innermost dimension
of a memory access, each program already reads contiguous runs, and interleaving G of
them turns one stream into G (an add of 4096^2 tensors in 8x4096 tiles: 9.1 ms on one
thread alone, 12.4 grouped; in 1x4096 tiles on two threads, 5.0 against 11.1).

After bufferization: the grid is an `scf.forall` with static bounds, grouped along its last
dimension, whose body is set-up (index arithmetic, views, and writes that initialize the
program's own output) then one `scf.for` with no results whose bounds do not depend on the
program.
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith, scf

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import INDEX_ARITHMETIC, defined_in, ops_named, ops_where, within
from helion_fx_mlir.passes.registry import register

PURE_SETUP = {
    "arith.constant",
    *INDEX_ARITHMETIC,
    "memref.subview",
    "memref.expand_shape",
    "memref.collapse_shape",
    "ub.poison",
    "vector.broadcast",
}
INIT_SETUP = {"vector.transfer_write", "linalg.fill"}
# Programs per group: 128 strips of 32 f32 are a 16 KB row, so a group of 2-D tiles reads its
# rows whole, one contiguous run per tensor (an add of 1024x4096 f32 in 32x32 tiles on 2
# threads: 1.38-1.80 ms in groups of 16, 0.99-1.41 in groups of 128, eager 1.20-1.55).
MAX_GROUP = 128
MIN_GROUPS = 8  # groups left to share among threads


@register(
    "helion-group-grid-programs", "programs of a large grid run in groups, setup shared per group"
)
def group_grid_programs(module: ir.Module) -> None:
    """Interleave the programs of each grid that fits (see the module docstring)."""
    with mlir_context():
        for grid in ops_named(module, "scf.forall"):
            trips = _trips(grid)
            if trips and (size := _group_size(trips)) > 1 and _fits(grid):
                _group(grid, trips, size)


def _trips(grid: ir.Operation) -> list[int] | None:
    """Programs per dimension of a grid with static bounds from 0 in steps of 1, else None."""
    lower, upper, step = (
        list(ir.DenseI64ArrayAttr(grid.attributes[f"static{name}"]))
        for name in ("LowerBound", "UpperBound", "Step")
    )
    if (
        grid.operands
        or any(lower)
        or any(s != 1 for s in step)
        or any(ir.ShapedType.is_dynamic_size(u) for u in upper)
    ):
        return None
    return upper


def _group_size(trips: list[int]) -> int:
    """The largest power of two up to MAX_GROUP dividing the last dimension, leaving
    MIN_GROUPS groups in the grid."""
    size = MAX_GROUP
    while size > 1 and (trips[-1] % size or math.prod(trips) // size < MIN_GROUPS):
        size //= 2
    return size


def _fits(grid: ir.Operation) -> bool:
    """Set-up ops, one loop with no results and program-independent bounds, the terminator."""
    ops = list(grid.regions[0].blocks[0].operations)
    if (
        len(ops) < 2
        or ops[-2].name != "scf.for"
        or len(ops[-2].results)
        or list(ops[-1].regions[0].blocks[0].operations)
    ):
        return False
    if any(op.name not in PURE_SETUP | INIT_SETUP for op in ops[:-2]):
        return False
    loop = ops[-2]
    return not any(defined_in(value, grid) for value in list(loop.operands)[:3]) and _strips(loop)


# Memory accesses, by the indices (or offsets) of their memref's dimensions.
ACCESSES = {
    "vector.transfer_read",
    "vector.transfer_write",
    "vector.load",
    "vector.store",
    "memref.load",
    "memref.store",
    "memref.subview",
}


def _strips(loop: ir.Operation) -> bool:
    """Whether no access in the loop has an innermost index that its loops move."""
    moved = _loop_dependent(loop)
    accesses = ops_where(loop, lambda op: op.name in ACCESSES)
    return not any(_innermost_index(op) in moved for op in accesses)


def _loop_dependent(loop: ir.Operation) -> set[ir.Value]:
    """The values inside the loop that its iterations (or a nested loop's) change: every
    block argument of its regions and everything computed from one."""
    moved: set[ir.Value] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        for region in op.regions:
            for block in region.blocks:
                moved.update(block.arguments)
        if any(value in moved for value in op.operands):
            moved.update(op.results)
        return ir.WalkResult.ADVANCE

    loop.walk(visit, ir.WalkOrder.PRE_ORDER)  # a region's arguments before its ops
    return moved


def _innermost_index(op: ir.Operation) -> ir.Value | None:
    """The index of the access's last (contiguous) dimension, None where it is static."""
    view = op.opview
    if op.name != "memref.subview":
        return view.indices[-1] if len(view.indices) else None
    if not ir.ShapedType.is_dynamic_size(list(view.static_offsets)[-1]):
        return None
    return view.offsets[-1]


def _group(grid: ir.Operation, trips: list[int], size: int) -> None:
    """The grid over groups of its last dimension: every program's set-up, then the loop
    over each program's iteration."""
    body = grid.regions[0].blocks[0]
    group = body.arguments[len(trips) - 1]
    ops = list(body.operations)
    setup, loop = ops[:-2], ops[-2]
    grouped = [*trips[:-1], trips[-1] // size]
    grid.attributes["staticUpperBound"] = ir.DenseI64ArrayAttr.get(grouped)
    with grid.location:
        setups, setup_program = _program_loop(
            group, size, ir.InsertionPoint(setup[0] if setup else loop)
        )
        for op in setup:
            op.move_before(_terminator(setups))
        loop_body = loop.regions[0].blocks[0]
        steps, step_program = _program_loop(
            group, size, ir.InsertionPoint.at_block_begin(loop_body)
        )
        body_ops = list(loop_body.operations)
        for op in body_ops[body_ops.index(steps.operation) + 1 : -1]:
            op.move_before(_terminator(steps))
        _rematerialize([op for op in setup if op.name in PURE_SETUP], steps)
        _retarget(group, setup_program, setups)
        _retarget(group, step_program, steps)


def _terminator(loop: scf.ForOp) -> ir.Operation:
    return list(loop.body.operations)[-1]


def _program_loop(
    group: ir.Value, size: int, where: ir.InsertionPoint
) -> tuple[scf.ForOp, ir.Value]:
    """`scf.for %j = 0 to size` at `where`, and the program `group * size + %j` in its body."""
    index = ir.IndexType.get()
    with where:
        zero, one, count = (arith.ConstantOp(index, v).result for v in (0, 1, size))
        loop = scf.ForOp(zero, count, one)
    with ir.InsertionPoint(loop.body):
        program = arith.addi(arith.muli(group, count), loop.induction_variable)
        scf.YieldOp([])
    return loop, program


def _retarget(group: ir.Value, program: ir.Value, loop: scf.ForOp) -> None:
    """Uses of the grid variable inside the loop (but the program's own arithmetic) use the
    program."""
    computing = program.owner.operands[0].owner
    for use in list(group.uses):
        if use.owner != computing and within(use.owner, loop):
            use.owner.operands[use.operand_number] = program


def _rematerialize(pure: list[ir.Operation], loop: scf.ForOp) -> None:
    """Copies of the set-up's pure ops at the start of the loop body (after the program's
    own arithmetic), and the loop's uses of the originals pointed at the copies."""
    anchor = list(loop.body.operations)[2]  # after `group * size` and `+ %j`
    with ir.InsertionPoint(anchor):
        copies = [op.clone() for op in pure]
    for op, copy in zip(pure, copies):
        for result, copied in zip(op.results, copy.results):
            for use in list(result.uses):
                if within(use.owner, loop):
                    use.owner.operands[use.operand_number] = copied
