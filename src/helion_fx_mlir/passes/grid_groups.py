"""Programs of a grid run in groups, their loops interleaved, where neighbours share data.

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

Strips are grouped only where no loop indexes the innermost dimension of a memory access:
otherwise each program already reads contiguous runs, and interleaving G of them turns one
stream into G (an add of 4096^2 tensors in 8x4096 tiles: 9.1 ms on one thread alone, 12.4
grouped; in 1x4096 tiles on two threads, 5.0 against 11.1).

Matmul programs group for another reason: each copies its B block into a buffer of its own
(`packed_operands.py`), and the programs of one column of output tiles copy the same block.
Grouped along a grid dimension the copy does not depend on, the group copies it once (per
step of the loop, for a K loop in chunks) and its programs all read that copy: 1024^3 f32
in the default 16^3 blocks, 2 threads, 22 -> 14 ms (torch.mm 17); bmm 8x512^3 17 -> 14. With
64^3 blocks, one program's compute already hides its copy: level.

Groups are as large as the threads the code runs on (module attribute `helion.threads`,
torch's thread count when the JIT compiles; DEFAULT_THREADS without it) share about as
evenly as they would share the programs alone: fewer, larger groups read longer runs.
Programs sharing a copy make the fewest such groups, as equal as can be, the last one
shorter where their count does not divide (`sharing_size`): 1500 rows in 64-row blocks
are 23 whole ones, which no group size divided, so each program copied the same B strip;
f32 in 64^3 blocks, 2 threads, A/B in one process, GFLOP/s: 1500^3 228 -> 296 (torch.mm
348), 777^3 260 -> 276 (308), 3000x300x3000 182 -> 190 (203), 1000^3 300 -> 304 (343).
A process that changes torch's thread count keeps the code its kernels compiled first
(right on any count; its groups sized for the first); the disk cache keys code by the
count.

After bufferization: the grid is an `scf.forall` with static bounds whose body is set-up
(index arithmetic, views, buffers and writes that initialize the program's own output)
then one `scf.for` with no results whose bounds do not depend on the program, and for a
matmul whose block's last rows are a register tile of their own (`vectorize.py`), the
work on those rows after it, which the group's programs then run one after another. What
does not depend on the program stays outside the loops over a group's programs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, scf

from helion_fx_mlir.mlir.attributes import (
    DEFAULT_THREADS,
    THREADS,
    module_integer,
    set_module_integer,
)
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import (
    INDEX_ARITHMETIC,
    VIEWS,
    defined_in,
    ops_named,
    ops_where,
    within,
)
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.step_loops import flatten_carried_steps

PURE_SETUP = {"arith.constant", *INDEX_ARITHMETIC, *VIEWS, "ub.poison", "vector.broadcast"}
INIT_SETUP = {"vector.transfer_write", "linalg.fill"}
READS = {"vector.transfer_read", "vector.load", "memref.load", "x86.amx.tile_load"}
WRITES = {
    "vector.transfer_write",
    "vector.store",
    "memref.store",
    "memref.copy",
}  # target: operand 1
# What else a packing copy may hold: reads, index arithmetic, views, masks, lane shuffles
# (AMX's K pairs, amx_tiles.py), its loops.
PACK_OPS = {
    *PURE_SETUP,
    *READS,
    "memref.dim",
    "vector.create_mask",
    "vector.interleave",
    "vector.extract_strided_slice",
    "scf.for",
    "scf.yield",
}
# Set-up a group shares: what does not depend on the program stays outside its loops.
KEPT_SETUP = {*PURE_SETUP, "memref.alloc"}
# Programs per group: 128 strips of 32 f32 are a 16 KB row, so a group of 2-D tiles reads its
# rows whole, one contiguous run per tensor (an add of 1024x4096 f32 in 32x32 tiles on 2
# threads: 1.38-1.80 ms in groups of 16, 0.99-1.41 in groups of 128, eager 1.20-1.55).
MAX_GROUP = 128
# Groups may leave the busiest thread this much more work than the programs alone would:
# fewer, larger groups read longer runs (a 32-wide column sum of 4096^2 f32 on 2 threads:
# 4.9 ms in 8 groups, 3.7 in 4, 3.0 in 2).
IMBALANCE = 1.25
# Programs sharing one packed B block: 1024^3 f32 in 16^3 blocks, 2 threads, ms: 22 alone,
# 15 in groups of 8, 13.6 of 16, 15 of 32, 17 of 64 (the group's output tiles leave L1).
MAX_PACK_GROUP = 16


@register(
    "helion-group-grid-programs", "programs of a large grid run in groups, setup shared per group"
)
def group_grid_programs(module: ir.Module) -> None:
    """Interleave the programs of each grid that fits (see the module docstring)."""
    with mlir_context():
        threads = threads_of(module)
        for grid in ops_named(module, "scf.forall"):
            trips, parts = grid_trips(grid), _parts(grid)
            if not trips or parts is None:
                continue
            if plan := _strips_plan(parts, trips, threads):
                parts = dataclasses.replace(parts, loop=flatten_carried_steps(parts.loop))
                _group(grid, trips, plan, parts)
            elif plan := _shared_pack_plan(grid, parts, trips, threads):
                _group(grid, trips, plan, parts)


def threads_of(module: ir.Module) -> int:
    """The threads the module's grids are shared among (DEFAULT_THREADS unless it says;
    at least one)."""
    return max(1, module_integer(module, THREADS, DEFAULT_THREADS))


def target_threads(module: ir.Module, threads: int) -> None:
    """Record the threads the code will run on (the JIT's: torch's thread count)."""
    with mlir_context():
        set_module_integer(module, THREADS, threads)


@dataclass(frozen=True)
class Grouping:
    """Consecutive programs along grid dimension `dim`, `size` to a group; `shared` are ops of
    the loop body that run once per step of the group (a packed operand's copy), not once
    per program."""

    dim: int
    size: int
    shared: tuple[ir.Operation, ...] = ()


@dataclass(frozen=True)
class Parts:
    """A grid body's set-up, its loop (an scf.for with no results whose bounds do not
    depend on the program) and the work after that loop (a matmul's last register tile of
    rows, `vectorize.py`'s peel_rows), before a terminator with nothing to insert."""

    setup: list[ir.Operation]
    loop: ir.Operation
    tail: list[ir.Operation]

    @property
    def steps(self) -> list[ir.Operation]:
        """The loop body's ops, its terminator left out."""
        return list(self.loop.regions[0].blocks[0].operations)[:-1]


def _parts(grid: ir.Operation) -> Parts | None:
    """The grid body split into `Parts`, or None where it has no such loop."""
    *ops, end = list(grid.regions[0].blocks[0].operations)
    if list(end.regions[0].blocks[0].operations):
        return None
    loops = [i for i, op in enumerate(ops) if op.name == "scf.for" and not len(op.results)]
    if not loops:
        return None
    at = loops[-1]
    loop = ops[at]
    if any(defined_in(value, grid) for value in list(loop.operands)[:3]):
        return None
    return Parts(ops[:at], loop, ops[at + 1 :])


def _strips_plan(parts: Parts, trips: list[int], threads: int) -> Grouping | None:
    """Programs reading strips, grouped along the last dimension."""
    dim = len(trips) - 1
    size = group_size(trips, dim, MAX_GROUP, threads)
    fits = (
        size > 1
        and not parts.tail
        and all(op.name in PURE_SETUP | INIT_SETUP for op in parts.setup)
        and _strips(parts.loop)
    )
    return Grouping(dim, size) if fits else None


def _shared_pack_plan(
    grid: ir.Operation, parts: Parts, trips: list[int], threads: int
) -> Grouping | None:
    """Programs that each copy the same operand block into a buffer of their own, grouped
    along the first dimension the copy does not depend on."""
    body = grid.regions[0].blocks[0]
    buffers = [op for op in parts.setup if op.name == "memref.alloc"]
    in_order = [*parts.setup, *parts.steps, *parts.tail]
    pack = _pack(in_order, buffers[0]) if len(buffers) == 1 else None
    if pack is None or not all(_setup_op(op) or op == pack for op in parts.setup):
        return None
    for dim, variable in enumerate(body.arguments):
        size = sharing_size(trips, dim, MAX_PACK_GROUP, threads)
        if size > 1 and pack not in _per_program(variable, in_order, lambda _: True):
            return Grouping(dim, size, (pack,))
    return None


def grid_trips(grid: ir.Operation) -> list[int] | None:
    """Programs per dimension of a grid with static bounds from 0 in steps of 1 (its
    operands, if any, the tensors it writes into), else None."""
    lower, upper, step = (
        list(ir.DenseI64ArrayAttr(grid.attributes[f"static{name}"]))
        for name in ("LowerBound", "UpperBound", "Step")
    )
    if (
        len(grid.operands) != len(grid.results)
        or any(lower)
        or any(s != 1 for s in step)
        or any(ir.ShapedType.is_dynamic_size(u) for u in upper)
    ):
        return None
    return upper


def _setup_op(op: ir.Operation) -> bool:
    """Index arithmetic, views, a buffer, or writes initializing the program's output (one
    or a loop of them)."""
    if op.name == "scf.for":
        inner = ops_where(op, lambda nested: nested != op)
        return not len(op.results) and all(
            nested.name in {*PURE_SETUP, *INIT_SETUP, "scf.yield"} for nested in inner
        )
    return op.name in {*KEPT_SETUP, *INIT_SETUP}


def _pack(ops: list[ir.Operation], buffer: ir.Operation) -> ir.Operation | None:
    """Of the ops (in order), the one that fills the buffer (`filling_op`)."""
    views = views_of(buffer.result)
    return filling_op([op for op in ops if uses_any(op, views)], views)


def filling_op(users: list[ir.Operation], views: set[ir.Value]) -> ir.Operation | None:
    """The first of a buffer's users (in order), where it is a loop nest that reads memory
    and writes only the buffer (`views`), and every later user only reads it."""
    if not users or users[0].name != "scf.for":
        return None
    pack, readers = users[0], users[1:]
    fills = all(
        op.name in PACK_OPS or (op.name in WRITES and op.operands[1] in views)
        for op in ops_where(pack, lambda op: op != pack)
    )
    only_read = all(
        op.name in VIEWS | READS or not any(value in views for value in op.operands)
        for reader in readers
        for op in ops_where(reader, lambda _: True)
    )
    return pack if fills and only_read else None


def views_of(buffer: ir.Value) -> set[ir.Value]:
    """The buffer and every view of it."""
    views, pending = set(), [buffer]
    while pending:
        value = pending.pop()
        views.add(value)
        pending.extend(
            result for use in value.uses if use.owner.name in VIEWS for result in use.owner.results
        )
    return views


def group_size(trips: list[int], dim: int, most: int, threads: int) -> int:
    """Strips: the largest power of two up to `most` dividing dimension `dim` whose groups
    the threads share about as evenly as the programs alone (IMBALANCE); where none but 1
    does, the largest other divisor that do; where none does (a prime), `sharing_size`."""
    fits = [
        size
        for size in range(min(most, trips[dim]), 0, -1)
        if trips[dim] % size == 0 and _balanced(trips, dim, size, threads)
    ]
    powers = [size for size in fits if not size & (size - 1)]
    if powers[0] > 1:
        return powers[0]
    return fits[0] if fits[0] > 1 else sharing_size(trips, dim, most, threads)


def sharing_size(trips: list[int], dim: int, most: int, threads: int) -> int:
    """Programs sharing a copy: the fewest groups of up to `most` programs along `dim`, as
    equal as can be (the last one shorter where they do not divide), that the threads
    share about as evenly as the programs alone. The 15 programs of one column of 64^3
    matmul tiles (a grid's right edge) on 2 threads: 2 groups (8 and 7), not 3 of 5 (10
    programs on one thread, 5 on the other); 23 rows of them: 12 and 11, not 23 programs
    copying the same B strip each."""
    programs = trips[dim]
    counts = range(max(1, -(-programs // most)), programs + 1)
    sizes = (-(-programs // count) for count in counts)
    return next((size for size in sizes if _balanced(trips, dim, size, threads)), 1)


def groups_of(programs: int, size: int) -> int:
    """Groups of `size` programs (the last one shorter where `size` does not divide)."""
    return -(-programs // size)


def _balanced(trips: list[int], dim: int, size: int, threads: int) -> bool:
    """Whether groups of `size` along `dim` leave the busiest thread at most IMBALANCE
    times the programs it would run alone (counting every group as a whole one)."""
    programs = math.prod(trips)
    alone = -(-programs // threads)
    groups = programs // trips[dim] * groups_of(trips[dim], size)
    return -(-groups // threads) * size <= IMBALANCE * alone


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


def _group(grid: ir.Operation, trips: list[int], plan: Grouping, parts: Parts) -> None:
    """The grid over groups along `plan.dim`: every program's set-up, then the loop over
    each program's iteration, then each program's work after the loop. What does not
    depend on the program (pure index arithmetic, the group's buffers, `plan.shared`) stays
    outside the loops over programs."""
    body = grid.regions[0].blocks[0]
    group = body.arguments[plan.dim]
    moved = _per_program(
        group,
        [*parts.setup, *parts.steps],
        lambda op: (
            op in plan.shared or op.name in (KEPT_SETUP if op in parts.setup else PURE_SETUP)
        ),
    )
    grouped = list(trips)
    programs = trips[plan.dim]
    grouped[plan.dim] = groups_of(programs, plan.size)
    grid.attributes["staticUpperBound"] = ir.DenseI64ArrayAttr.get(grouped)
    pure = [op for op in parts.setup if op in moved and op.name in PURE_SETUP]
    count = (plan.size, programs)
    with grid.location:
        loops = [_programs_of(group, count, ir.InsertionPoint(parts.loop), parts.setup, moved)]
        loop_end = ir.InsertionPoint(list(parts.loop.regions[0].blocks[0].operations)[-1])
        loops.append(_programs_of(group, count, loop_end, parts.steps, moved))
        if parts.tail:
            after = ir.InsertionPoint(list(body.operations)[-1])
            loops.append(_programs_of(group, count, after, parts.tail, set(parts.tail)))
        for loop, _ in loops[1:]:
            _rematerialize(pure, loop)
        for loop, program in loops:
            retarget(group, program, loop)


def _programs_of(
    group: ir.Value,
    count: tuple[int, int],
    where: ir.InsertionPoint,
    ops: list[ir.Operation],
    moved: set[ir.Operation],
) -> tuple[scf.ForOp, ir.Value]:
    """A loop over the group's programs at `where` (`count`: the group's size, the
    programs along the grouped dimension), with the `moved` of the ops (in order)."""
    loop, program = program_loop(group, *count, where)
    for op in ops:
        if op in moved:
            op.move_before(_terminator(loop))
    return loop, program


def _per_program(
    variable: ir.Value, ops: list[ir.Operation], shareable: Callable[[ir.Operation], bool]
) -> set[ir.Operation]:
    """The ops (in order) to run once per program: those that use the program variable or
    a result of an earlier such op (directly or in their regions), and those not
    `shareable`."""
    values = {variable}
    found: set[ir.Operation] = set()
    for op in ops:
        if not shareable(op) or uses_any(op, values):
            found.add(op)
            values.update(op.results)
    return found


def uses_any(op: ir.Operation, values: set[ir.Value]) -> bool:
    """Whether op, or an op in its regions, has one of the values as an operand."""
    used = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal used
        used = used or any(value in values for value in inner.operands)
        return ir.WalkResult.INTERRUPT if used else ir.WalkResult.ADVANCE

    op.walk(visit)
    return used


def _terminator(loop: scf.ForOp) -> ir.Operation:
    return list(loop.body.operations)[-1]


def program_loop(
    group: ir.Value, size: int, programs: int, where: ir.InsertionPoint
) -> tuple[scf.ForOp, ir.Value]:
    """`scf.for %j = 0 to size` at `where` (to the `programs` left, where `size` does not
    divide them), and the program `group * size + %j` in its body."""
    index = ir.IndexType.get()
    with where:
        zero, one, count = (arith.ConstantOp(index, v).result for v in (0, 1, size))
        upper = count
        if programs % size:
            total = arith.ConstantOp(index, programs).result
            upper = arith.minsi(count, arith.subi(total, arith.muli(group, count)))
        loop = scf.ForOp(zero, upper, one)
    with ir.InsertionPoint(loop.body):
        program = arith.addi(arith.muli(group, count), loop.induction_variable)
        scf.YieldOp([])
    return loop, program


def retarget(group: ir.Value, program: ir.Value, loop: scf.ForOp) -> None:
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
