"""Programs that copy the same operand blocks run in groups that copy the whole strip once.

A contraction's B block is copied into a buffer of its own first (`packed_operands.py`):
read across rows a page apart, it would not stay in cache. Every program of one column of
output tiles copies the same blocks, and with small blocks the copies cost about as much as
the arithmetic they feed. Programs whose only buffer is that copy (a matmul) interleave in
groups that share it (`grid_groups.py`); programs with buffers of their own besides (an
attention's running max, sum, accumulator and scores) cannot interleave without a copy of
each per program. Here such a grid, where the copy (once per program, or once per step of
a loop over K) does not depend on one grid dimension, runs in groups of consecutive
programs along it: the group copies every step's block once, side by side into one strip,
then runs its programs one after another, each reading its step's block from the strip and
its own buffers reused in turn, as one thread's programs reuse them anyway
(`buffers.py`). Attention over 8 heads of 1024x64 f32 in the default 16-row blocks, 2
threads, A/B in one process: 22.3 -> 18.5 ms (eager 16-17); a bf16 matmul, whose programs
keep an f32 accumulator besides the copy, 1024^3 in 16^3 blocks: 29.2 -> 22.9 ms.

After bufferization and grid grouping, on `scf.forall` grids with static bounds; the strip
lives on the heap (freed by the deallocation pipeline), at most MAX_STRIP_BYTES, which L2
keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, memref, scf

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import (
    DYNAMIC,
    constant_bounds,
    index_constant,
    ops_named,
    ops_where,
    remap,
    within,
)
from helion_fx_mlir.passes.grid_groups import (
    PURE_SETUP,
    READS,
    filling_op,
    grid_trips,
    groups_of,
    program_loop,
    retarget,
    sharing_size,
    threads_of,
    uses_any,
    views_of,
)
from helion_fx_mlir.passes.registry import register

MAX_GROUP = 16
MAX_STRIP_BYTES = 512 * 1024


@dataclass(frozen=True)
class Strip:
    """What a group shares: the program's buffer, the op filling it (`pack`), the loop over
    steps it is in (None: once per program, in the program's body), the pure ops its
    operands come from, the steps of the loop (1 without one), and the grid dimension and
    group size."""

    buffer: ir.Operation
    pack: ir.Operation
    loop: ir.Operation | None
    steps: int
    inputs: tuple[ir.Operation, ...]
    dim: int
    size: int


@register(
    "helion-share-packed-strips",
    "programs copying the same operand blocks -> groups that copy the whole strip once",
)
def share_packed_strips(module: ir.Module) -> None:
    with mlir_context():
        threads = threads_of(module)
        for grid in ops_named(module, "scf.forall"):
            if (strip := _strip(grid, threads)) is not None:
                _share(grid, strip)


def _strip(grid: ir.Operation, threads: int) -> Strip | None:
    """The grid's shareable buffer, if it has one."""
    trips = grid_trips(grid)
    ops = list(grid.regions[0].blocks[0].operations)
    if not trips or list(ops[-1].regions[0].blocks[0].operations):
        return None
    buffers = [op for op in ops[:-1] if op.name == "memref.alloc"]
    if len(buffers) < 2:
        return None  # programs with no buffers of their own interleave (grid_groups.py)
    for buffer in buffers:
        found = _filled(buffer, ops[:-1])
        if found is None or not _retypable(buffer) or _bytes(buffer, found[2]) > MAX_STRIP_BYTES:
            continue
        pack, loop, steps = found
        inputs = _inputs(pack, buffer, grid)
        for dim, variable in enumerate(grid.regions[0].blocks[0].arguments):
            size = sharing_size(trips, dim, MAX_GROUP, threads)
            if inputs is not None and size > 1 and not _depends(pack, inputs, variable):
                return Strip(buffer, pack, loop, steps, tuple(inputs), dim, size)
    return None


def _filled(
    buffer: ir.Operation, ops: list[ir.Operation]
) -> tuple[ir.Operation, ir.Operation | None, int] | None:
    """The op filling the buffer, the loop it is in and the loop's steps: the first of the
    program's ops to use the buffer fills it, or is a loop of constant steps holding every
    use of the buffer, the first of its body's ops to use it filling it."""
    views = views_of(buffer.result)
    users = [op for op in ops if uses_any(op, views)]
    pack = filling_op(users, views)
    if pack is not None:
        return pack, None, 1
    if len(users) != 1 or users[0].name != "scf.for" or not (steps := _trip_count(users[0])):
        return None
    loop = users[0]
    body = list(loop.regions[0].blocks[0].operations)
    pack = filling_op([op for op in body if uses_any(op, views)], views)
    return (pack, loop, steps) if pack is not None else None


def _trip_count(loop: ir.Operation) -> int | None:
    """Iterations of an scf.for with constant bounds and no results, else None."""
    bounds = constant_bounds(loop)
    return None if bounds is None or len(loop.results) else len(bounds)


def _bytes(buffer: ir.Operation, steps: int) -> float:
    """The strip's size; unbounded for elements of no fixed width (index)."""
    shape = ir.MemRefType(buffer.result.type)
    width = getattr(shape.element_type, "width", None)
    return steps * math.prod(shape.shape) * width / 8 if isinstance(width, int) else math.inf


def _retypable(buffer: ir.Operation) -> bool:
    """Whether the buffer's users keep their types when it becomes a step's slice of the
    strip (a view with a dynamic offset): reads, and views whose offset is dynamic."""
    memref_type = ir.MemRefType(buffer.result.type)
    if not memref_type.has_static_shape or memref_type.affine_map != ir.AffineMap.get_identity(
        memref_type.rank
    ):
        return False
    for use in buffer.result.uses:
        user = use.owner
        if user.name == "memref.subview":
            layout = ir.MemRefType(user.results[0].type).layout
            if not isinstance(layout, ir.StridedLayoutAttr) or layout.offset != DYNAMIC:
                return False
        elif user.name not in READS and user.name not in {"vector.transfer_write"}:
            return False
    return True


def _inputs(
    pack: ir.Operation, buffer: ir.Operation, grid: ir.Operation
) -> list[ir.Operation] | None:
    """The pure ops of the program (outside the pack) the pack's operands but the buffer
    are computed by, in program order; None where one is not pure."""
    found: dict[ir.Operation, None] = {}

    def collect(value: ir.Value) -> bool:
        owner = value.owner
        if (
            isinstance(owner, ir.Block)
            or value == buffer.result
            or not within(owner, grid)
            or within(owner, pack)
        ):
            return True
        if owner.name not in PURE_SETUP:
            return False
        if owner not in found:
            if not all(collect(operand) for operand in owner.operands):
                return False
            found[owner] = None
        return True

    operands = [o for op in ops_where(pack, lambda _: True) for o in op.operands]
    return list(found) if all(collect(value) for value in operands) else None


def _depends(pack: ir.Operation, inputs: list[ir.Operation], variable: ir.Value) -> bool:
    return any(uses_any(op, {variable}) for op in [*inputs, pack])


def _share(grid: ir.Operation, strip: Strip) -> None:
    body = grid.regions[0].blocks[0]
    ops = list(body.operations)[:-1]
    trips = list(ir.DenseI64ArrayAttr(grid.attributes["staticUpperBound"]))
    programs = trips[strip.dim]
    trips[strip.dim] = groups_of(programs, strip.size)
    grid.attributes["staticUpperBound"] = ir.DenseI64ArrayAttr.get(trips)
    with grid.location, ir.InsertionPoint(ops[0]):
        whole = _strip_buffer(strip)
        _copy_strip(strip, whole)
        loop, program = program_loop(
            body.arguments[strip.dim], strip.size, programs, ir.InsertionPoint(ops[0])
        )
    for op in ops:
        if op.name == "memref.alloc" and not op.operands:
            op.move_before(loop)  # one per group, reused by its programs in turn
        else:
            op.move_before(list(loop.body.operations)[-1])
    retarget(body.arguments[strip.dim], program, loop)
    _read_from_strip(strip, whole)


def _strip_buffer(strip: Strip) -> ir.Value:
    """memref<steps x block>, aligned as the block's buffer was."""
    block = ir.MemRefType(strip.buffer.result.type)
    whole = ir.MemRefType.get([strip.steps, *block.shape], block.element_type)
    alloc = memref.AllocOp(whole, [], [])
    if "alignment" in strip.buffer.attributes:
        alloc.attributes["alignment"] = strip.buffer.attributes["alignment"]
    return alloc.result


def _slot(whole: ir.Value, step: ir.Value) -> ir.Value:
    """The step's block of the strip, as a view with a dynamic offset."""
    whole_type = ir.MemRefType(whole.type)
    shape = whole_type.shape[1:]
    strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    layout = ir.StridedLayoutAttr.get(DYNAMIC, strides)
    result = ir.MemRefType.get(shape, whole_type.element_type, layout=layout)
    rank = len(whole_type.shape)
    return memref.SubViewOp(
        result, whole, [step], [], [], [DYNAMIC] + [0] * (rank - 1), [1, *shape], [1] * rank
    ).result


def _copy_strip(strip: Strip, whole: ir.Value) -> None:
    """A loop over the steps, each filling its block of the strip as the pack did."""
    index = ir.IndexType.get()
    zero, one, count = (arith.ConstantOp(index, v).result for v in (0, 1, strip.steps))
    loop = scf.ForOp(zero, count, one)
    with ir.InsertionPoint(loop.body):
        mapping: dict[ir.Value, ir.Value] = {}
        if strip.loop is not None:
            low, _, step = list(strip.loop.operands)[:3]
            start = arith.addi(low, arith.muli(loop.induction_variable, step))
            mapping[strip.loop.regions[0].blocks[0].arguments[0]] = start
        mapping[strip.buffer.result] = _slot(whole, loop.induction_variable)
        for op in [*strip.inputs, strip.pack]:
            remap(op.clone(), mapping, op)
        scf.YieldOp([])


def _read_from_strip(strip: Strip, whole: ir.Value) -> None:
    """The program's pack gone; its buffer's reads read the step's block of the strip."""
    loop = strip.loop
    if loop is None:
        with ir.InsertionPoint(strip.pack), strip.pack.location:
            slot = _slot(whole, index_constant(0))
    else:
        low, _, size = list(loop.operands)[:3]
        iv = loop.regions[0].blocks[0].arguments[0]
        with ir.InsertionPoint.at_block_begin(loop.regions[0].blocks[0]), strip.pack.location:
            slot = _slot(whole, arith.divui(arith.subi(iv, low), size))
    strip.pack.erase()
    strip.buffer.result.replace_all_uses_with(slot)
    strip.buffer.erase()
