"""Sequential grids whose programs are independent, made parallel after bufferization.

A grid whose programs store inside their own loops (a looped reduction's
`out[tile_m, chunk]`, a second pass over a row) is emitted as an `scf.for` nest: tensor
SSA has no parallel form for stores made inside a loop. Helion runs the programs of a grid
in any order, and along an axis every access of a stored tensor takes a tile of (atomics
included: `LoweringContext.independent_axes`) the frontend marks the axis's loops. On
buffers the loop's stores go straight to the output, so the outermost marked loop can
become an `scf.forall` (and OpenMP threads) once its scratch buffers are its own:
bufferization hoists a program's temporaries out of the loop (as far as the function), so
those allocations (and their views), used only by the loop, move back into its body, where
`stack_program_buffers` makes them one per thread. A loop sharing a buffer with code
outside it stays sequential. (layer_norm, 4096x1024 f32, `reduction_loops=[256]`, 2
threads: 4.9 -> 0.8 ms; split-K atomics over 333x4500 @ 4500x405, default config: 19 ->
9 ms, eager 7.)
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import scf

from helion_fx_mlir.mlir.attributes import INDEPENDENT_PROGRAMS
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import MEMREF_VIEWS, constant_int, defined_in, ops_where, within
from helion_fx_mlir.passes.registry import register

ALLOCATIONS = {"memref.alloc", "memref.alloca"}


@register(
    "helion-parallelize-independent-grids",
    "the outermost scf.for of a grid marked helion.independent_programs -> scf.forall",
)
def parallelize_independent_programs(module: ir.Module) -> None:
    with mlir_context():
        for loop in ops_where(module, _outermost_marked):
            private = _private_buffers(loop)
            if private is not None and _from_zero_by_one(loop) and not loop.results:
                for op in reversed(private):
                    op.move_before(next(iter(loop.regions[0].blocks[0].operations)))
                _to_forall(loop)


def _outermost_marked(op: ir.Operation) -> bool:
    if op.name != "scf.for" or INDEPENDENT_PROGRAMS not in op.attributes:
        return False
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.for" and INDEPENDENT_PROGRAMS in parent.attributes:
            return False
        parent = parent.parent
    return True


def _from_zero_by_one(loop: ir.Operation) -> bool:
    lower, _, step = list(loop.operands)[:3]
    return constant_int(lower) == 0 and constant_int(step) == 1


def _private_buffers(loop: ir.Operation) -> list[ir.Operation] | None:
    """The allocations (and views of them) the loop uses, from before it in its block or
    the blocks of the loops around it (bufferization hoists them to the function), in
    order; None if one is shared with code outside, or allocated elsewhere."""
    before = [op for op in _ops_before(loop.operation) if _is_buffer(op)]
    mine = [op for op in before if any(within(use.owner, loop) for use in op.results[0].uses)]
    pending = list(mine)
    while pending:  # a view's source, then its source's
        view = pending.pop()
        source = view.operands[0].owner if view.name in MEMREF_VIEWS else None
        if source is not None and not any(source.operation == op.operation for op in mine):
            mine.append(source.operation)
            pending.append(source.operation)
    buffers = [op for op in before if any(op.operation == m.operation for m in mine)]

    def private(op: ir.Operation) -> bool:
        return any(op.operation == buffer.operation for buffer in buffers)

    for op in buffers:
        for use in op.results[0].uses:
            if not (within(use.owner, loop) or private(use.owner)):
                return None
    for op in ops_where(loop, lambda op: True):
        for value in op.operands:
            owner = value.owner
            if (
                isinstance(owner, ir.Operation | ir.OpView)
                and owner.name in ALLOCATIONS | MEMREF_VIEWS
                and not defined_in(value, loop)
                and not private(owner)
            ):
                return None
    return buffers


def _ops_before(op: ir.Operation) -> list[ir.Operation]:
    """The ops before `op` in its block and, outward, before each op around it up to the
    function, the outermost first."""
    before: list[ir.Operation] = []
    while True:
        block_ops = list(op.block.operations)
        before = block_ops[: block_ops.index(op)] + before
        parent = op.parent
        if parent is None or parent.name == "func.func":
            return before
        op = parent.operation


def _is_buffer(op: ir.Operation) -> bool:
    """An allocation, or a view whose source is an allocation or a view of one."""
    if op.name in ALLOCATIONS:
        return True
    if op.name not in MEMREF_VIEWS:
        return False
    source = op.operands[0].owner
    return isinstance(source, ir.Operation | ir.OpView) and _is_buffer(source.operation)


def _to_forall(loop: ir.Operation) -> None:
    """`scf.for %i = 0 to %n step 1 {body}` -> `scf.forall (%i) in (%n) {body}`."""
    with ir.InsertionPoint(loop), loop.location:
        grid = scf.ForallOp([0], [loop.operands[1]], [1])
        with ir.InsertionPoint(grid.body):
            scf.InParallelOp()
    body = loop.regions[0].blocks[0]
    body.arguments[0].replace_all_uses_with(grid.induction_variables[0])
    terminator = next(iter(grid.body.operations))
    for op in list(body.operations)[:-1]:
        op.move_before(terminator)
    loop.erase()
