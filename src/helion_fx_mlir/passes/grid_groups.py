"""Programs of a 1-D grid that loop over tiles run in groups, their loops interleaved.

`for tile_n in hl.tile(n): acc = 0; for tile_m in hl.tile(m): acc += x[tile_m, tile_n].sum(0)`
(a column sum) gives each program a narrow column strip: every row it reads is 16 KB from
the last, on a new page, where hardware prefetchers stop. The programs of a grid are
independent, so any interleaving of them is the same kernel: a group of G consecutive
programs runs each one's set-up, then the loop once, doing all G programs' iteration m
before m + 1. A row is then read G strips wide, contiguously (a 32-wide column sum of a
4096^2 tensor: 5.4 -> about 2.7 ms on 2 threads).

After bufferization: the grid is an `scf.forall` with one induction variable, whose body is
set-up (index arithmetic, views, and writes that initialize the program's own output) then
one `scf.for` with no results whose bounds do not depend on the program.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, scf

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import defined_in, ops_named, within
from helion_fx_mlir.passes.registry import register

PURE_SETUP = {
    "arith.constant",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.minsi",
    "arith.maxsi",
    "arith.minui",
    "arith.maxui",
    "arith.index_cast",
    "affine.apply",
    "affine.min",
    "affine.max",
    "memref.subview",
    "memref.expand_shape",
    "memref.collapse_shape",
    "ub.poison",
    "vector.broadcast",
}
INIT_SETUP = {"vector.transfer_write", "linalg.fill"}
MAX_GROUP = 16  # programs per group: 16 strips of 32 f32 are 2 KB of each row
MIN_GROUPS = 8  # groups left to share among threads


@register(
    "helion-group-grid-programs", "programs of a large grid run in groups, setup shared per group"
)
def group_grid_programs(module: ir.Module) -> None:
    """Interleave the programs of each grid that fits (see the module docstring)."""
    with mlir_context():
        for grid in ops_named(module, "scf.forall"):
            trips = _trip_count(grid)
            if trips and (size := _group_size(trips)) > 1 and _fits(grid):
                _group(grid, trips, size)


def _trip_count(grid: ir.Operation) -> int | None:
    """Programs of a 1-D grid with static bounds from 0 in steps of 1, else None."""
    lower, upper, step = (
        list(ir.DenseI64ArrayAttr(grid.attributes[f"static{name}"]))
        for name in ("LowerBound", "UpperBound", "Step")
    )
    if (
        len(upper) != 1
        or grid.operands
        or lower != [0]
        or step != [1]
        or ir.ShapedType.is_dynamic_size(upper[0])
    ):
        return None
    return upper[0]


def _group_size(trips: int) -> int:
    """The largest power of two up to MAX_GROUP dividing the grid, leaving MIN_GROUPS groups."""
    size = MAX_GROUP
    while size > 1 and (trips % size or trips // size < MIN_GROUPS):
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
    return not any(defined_in(value, grid) for value in list(ops[-2].operands)[:3])


def _group(grid: ir.Operation, trips: int, size: int) -> None:
    """The grid over groups: every program's set-up, then the loop over each program's iteration."""
    body = grid.regions[0].blocks[0]
    group = body.arguments[0]
    ops = list(body.operations)
    setup, loop = ops[:-2], ops[-2]
    grid.attributes["staticUpperBound"] = ir.DenseI64ArrayAttr.get([trips // size])
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
