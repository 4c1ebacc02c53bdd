"""Rewrites around bufferization: inits untied before it, program buffers on the stack after."""

from __future__ import annotations

import math
from collections.abc import Callable

from torch_mlir import ir

from helion_fx_mlir.errors import RewriteError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named, ops_where
from helion_fx_mlir.passes.registry import register

# Module attribute: {func name: the arguments its results are written into, as emitted}.
OUTPUT_ARGS = "helion.output_args"


@register("helion-record-outputs", "the arguments each func's results are written into, recorded")
def record_outputs(module: ir.Module) -> None:
    """Before any rewrite: which arguments each kernel func's results are written into
    (the outputs its grid loops carry), recorded in OUTPUT_ARGS for `read_only_inputs`.
    A func whose results cannot all be traced to their arguments is not recorded."""
    found = {}
    with mlir_context():
        for func in ops_named(module, "func.func"):
            written = _written_arguments(func) if func.regions[0].blocks else None
            if written is not None:
                name = ir.StringAttr(func.attributes["sym_name"]).value
                found[name] = ir.DenseI64ArrayAttr.get(sorted(written))
        module.operation.attributes[OUTPUT_ARGS] = ir.DictAttr.get(found)


@register("helion-read-only-inputs", "tensor arguments that are not outputs: not writable in place")
def read_only_inputs(module: ir.Module) -> None:
    """The tensor arguments of a func that `record_outputs` did not record as outputs (its
    inputs) get `bufferization.writable = false`.

    One-shot bufferization takes every function argument as writable. Found by the fuzzer:
    with one program in its grid, `out = sum(partial, 0) + bias` had become the sum written
    into a value of `bias` (`fold_accumulations` made `bias` the sum's init), returned as
    `out`, and bufferized in place: the right `out`, and the user's `bias` overwritten."""
    if OUTPUT_ARGS not in module.operation.attributes:
        return
    recorded = ir.DictAttr(module.operation.attributes[OUTPUT_ARGS])
    with mlir_context():
        for func in ops_named(module, "func.func"):
            name = ir.StringAttr(func.attributes["sym_name"]).value
            if name in recorded:
                _mark_read_only(func, set(ir.DenseI64ArrayAttr(recorded[name])))


def _written_arguments(func: ir.Operation) -> set[int] | None:
    """The arguments the func's results are written into, through the ops that write a
    result into an operand's tensor (a loop's init, a destination); None for any other."""
    entry = func.regions[0].blocks[0]
    written: set[int] = set()
    for ret in ops_named(func, "func.return"):
        for value in ret.operands:
            origin = _destination_origin(value, entry)
            if origin is None:
                return None
            if origin >= 0:
                written.add(origin)
    return written


# op name -> the operand a result is written into, from the result's number and the op
_TIED: dict[str, Callable[[ir.Operation, int], ir.Value]] = {
    "scf.forall": lambda op, r: op.operands[len(op.operands) - len(op.results) + r],
    "scf.for": lambda op, r: op.operands[3 + r],
    "tensor.insert_slice": lambda op, r: op.operands[1],
    "tensor.cast": lambda op, r: op.operands[0],
}


def _destination_origin(value: ir.Value, entry: ir.Block) -> int | None:
    """The argument of `entry` this value is written into, -1 for a value of its own (a
    fresh tensor: a result the runtime allocates), None where it cannot be told."""
    while True:
        if isinstance(value, ir.BlockArgument):
            return value.arg_number if value.owner == entry else None
        op = value.owner
        if op.name in _TIED:
            value = _TIED[op.name](op, ir.OpResult(value).result_number)
        elif op.name == "tensor.empty":
            return -1
        else:
            return None


def _mark_read_only(func: ir.Operation, outputs: set[int]) -> None:
    arguments = func.regions[0].blocks[0].arguments
    old = func.attributes.get("arg_attrs")
    marked = []
    for i, argument in enumerate(arguments):
        attrs = {a.name: a.attr for a in ir.DictAttr(old[i])} if old is not None else {}
        if isinstance(argument.type, ir.RankedTensorType) and i not in outputs:
            attrs["bufferization.writable"] = ir.BoolAttr.get(False)
        marked.append(ir.DictAttr.get(attrs))
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(marked)


@register("helion-untie-shared-inits", "each use of a shared init tensor gets its own copy")
def untie_shared_inits(module: ir.Module) -> None:
    """Each use of an init (a tensor written only from constants: `tensor.empty`, a fill, or
    its vectorized form) gets its own copy of it.

    One-shot bufferization misses a conflict when one init feeds two results that two
    `parallel_insert_slice`s of one `scf.forall` write to different outputs: after empty-tensor
    elimination both results share the first output's slice, and the first insert overwrites
    the second result before it is copied (two equal accumulators returned the first one twice).
    A fresh init per use has one writer, so no such alias exists; the copies cost what the
    copies bufferization would make cost (an empty tensor is no memory)."""
    with mlir_context():
        for op in ops_where(module, lambda op: _fresh_init_dest(op) is not None):
            uses = [(use.owner, use.operand_number) for use in op.results[0].uses]
            for owner, index in uses[1:]:
                owner.operands[index] = _copy_init(op)


def _fresh_init_dest(op: ir.Operation) -> list[int] | None:
    """The operand positions an init op writes into (none for `tensor.empty`), or None when
    the op is not an init."""
    if len(op.results) != 1 or not isinstance(op.results[0].type, ir.RankedTensorType):
        return None
    if op.name == "tensor.empty":
        return []
    if op.name == "linalg.fill" or (op.name == "vector.transfer_write" and _fills(op)):
        dests = [1]
    elif op.name == "scf.for" and _only_writes(op):
        dests = [3]
    else:
        return None
    return dests if all(_is_fresh_init(op.operands[i]) for i in dests) else None


def _fills(write: ir.Operation) -> bool:
    """A vectorized fill: the value written is a constant or one scalar broadcast (a row
    read from memory and written into a buffer is data, whose readers may share it)."""
    owner = write.operands[0].owner
    return isinstance(owner, ir.OpView) and owner.name in ("arith.constant", "vector.broadcast")


def _is_fresh_init(value: ir.Value) -> bool:
    return (
        isinstance(value.owner, ir.Operation | ir.OpView)
        and _fresh_init_dest(value.owner.operation) is not None
    )


def _only_writes(loop: ir.Operation) -> bool:
    """A loop that fills its one tensor: its body reads no tensor."""
    body = loop.regions[0].blocks[0]
    return len(loop.results) == 1 and all(
        op.name in ("vector.transfer_write", "scf.yield") or op.name.startswith("arith.")
        for op in body.operations
    )


def _copy_init(op: ir.Operation) -> ir.Value:
    """A copy of the init op and of the inits it writes into, placed beside the original."""
    with ir.InsertionPoint(op):
        copy = op.clone()
    for index in _fresh_init_dest(op) or []:
        copy.operands[index] = _copy_init(op.operands[index].owner.operation)
    return copy.results[0]


# A grid program's own buffers up to this size live on its thread's stack
# (see stack_program_buffers).
MAX_STACK_BUFFER = 64 * 1024
MAX_STACK_PER_PROGRAM = 256 * 1024


@register("helion-stack-program-buffers", "small static buffers of a grid program -> memref.alloca")
def stack_program_buffers(module: ir.Module) -> None:
    """A grid program's temporaries (static buffers allocated in the body of the scf.forall,
    not inside its loops) become stack buffers: with tens of thousands of small programs,
    malloc and free per program cost more than the work. After the grid becomes OpenMP,
    `inline_alloca_scopes` moves them to the start of the parallel region, one per thread,
    reused by the programs that thread runs one after another."""
    with mlir_context():
        for grid in ops_named(module, "scf.forall"):
            budget = MAX_STACK_PER_PROGRAM
            for op in list(grid.regions[0].blocks[0].operations):
                size = _static_bytes(op) if op.name == "memref.alloc" else None
                if size is None or size > MAX_STACK_BUFFER or size > budget:
                    continue
                budget -= size
                with ir.InsertionPoint(op), op.location:
                    alloca = ir.Operation.create(
                        "memref.alloca",
                        results=[op.results[0].type],
                        attributes={name: op.attributes[name] for name in op.attributes},
                        operands=[],
                    )
                op.results[0].replace_all_uses_with(alloca.results[0])
                op.erase()


def _static_bytes(alloc: ir.Operation) -> int | None:
    """The byte size of a static-shaped alloc with no dynamic sizes or symbols, else None."""
    memref = ir.MemRefType(alloc.results[0].type)
    width = getattr(memref.element_type, "width", None)
    if alloc.operands or not memref.has_static_shape or not isinstance(width, int) or width % 8:
        return None
    return math.prod(memref.shape) * width // 8


@register(
    "helion-inline-alloca-scopes", "memref.alloca_scope bodies inlined, stack buffers per thread"
)
def inline_alloca_scopes(module: ir.Module) -> None:
    """convert-scf-to-openmp wraps each program of the grid in memref.alloca_scope, whose
    region must stay one block, which convert-scf-to-cf breaks. So each scope's body is
    inlined into the parallel loop, and its stack buffers (`stack_program_buffers`) move to
    the start of the enclosing omp.parallel region: one per thread, not one per program."""
    with mlir_context():
        for scope in ops_named(module, "memref.alloca_scope"):
            body = list(scope.regions[0].blocks[0].operations)
            *inlined, terminator = body
            region_start = (
                _parallel_region_start(scope)
                if any(op.name == "memref.alloca" for op in body)
                else None
            )
            for op in inlined:
                if op.name == "memref.alloca":
                    op.move_before(region_start)
                else:
                    op.move_before(scope)
            for result, value in zip(scope.results, terminator.operands):
                result.replace_all_uses_with(value)
            scope.erase()


def _parallel_region_start(op: ir.Operation) -> ir.Operation:
    """The first op of the omp.parallel region around `op` (where per-thread buffers go)."""
    parent = op.parent
    while parent is not None and parent.name != "omp.parallel":
        parent = parent.parent
    if parent is None:
        raise RewriteError(
            "openmp", [(op.location, "a stack buffer outside an OpenMP parallel region")]
        )
    return parent.regions[0].blocks[0].operations[0]
