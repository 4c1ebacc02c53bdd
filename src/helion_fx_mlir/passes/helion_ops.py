"""Rewrites of our own ops and grids before torch-mlir's conversion to linalg."""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith

from helion_fx_mlir.errors import RewriteError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.input_checks import integer_value
from helion_fx_mlir.mlir.walk import constant_int, ops_named
from helion_fx_mlir.passes.registry import register

DYNAMIC = -(2**63)  # ShapedType::kDynamic in static index arrays


@register(
    "helion-resolve-symbols",
    "loom.get_symbol -> constants from module attributes, helion.phi -> loop result",
)
def resolve_helion_ops(module: ir.Module) -> None:
    """loom.get_symbol -> arith.constant from module attributes; helion.phi -> loop result."""
    attrs = module.operation.attributes
    with mlir_context(), ir.Location.unknown():
        for op in ops_named(module, "loom.get_symbol", "helion.phi"):
            if op.name == "helion.phi":
                op.results[0].replace_all_uses_with(op.operands[1])
            else:
                name = ir.StringAttr(op.attributes["name"]).value
                value = _symbol_value(op, attrs, f"loom.{name}")
                with ir.InsertionPoint(op), op.location:
                    const = arith.ConstantOp(ir.IndexType.get(), value)
                op.results[0].replace_all_uses_with(const.result)
            op.erase()


def _symbol_value(op: ir.Operation, attrs: ir.OpAttributeMap, key: str) -> int:
    """The integer module attribute a loom.get_symbol names, or a located error."""
    if key not in attrs:
        raise RewriteError(
            "resolve-symbols", [(op.location, f"no module attribute '{key}' for loom.get_symbol")]
        )
    value = integer_value(attrs[key])
    if value is None:
        raise RewriteError(
            "resolve-symbols", [(op.location, f"module attribute '{key}' is not an integer")]
        )
    return value


@register(
    "helion-promote-single-program-grids",
    "an scf.forall of one program -> its body, keeping every store",
)
def promote_single_program_grids(module: ir.Module) -> None:
    """An scf.forall of one program becomes its body, each parallel_insert_slice an
    insert_slice into the result so far. MLIR's canonicalizer does this too, but pairs the
    i-th insert with the i-th result: a program storing twice into one tensor
    (`dst[:32, t] = ...; dst[32:, t] = ...`) lost the second store (upstream's own
    mlir-opt asserts on it)."""
    with mlir_context():
        for grid in ops_named(module, "scf.forall"):
            if one_program(grid):
                promote_program(grid)


def one_program(grid: ir.Operation) -> bool:
    """Whether an scf.forall runs exactly one program."""
    attrs = grid.attributes
    lower, upper, step = (
        list(ir.DenseI64ArrayAttr(attrs[k]))
        for k in ("staticLowerBound", "staticUpperBound", "staticStep")
    )
    dynamic = iter(grid.operands[: sum(b == DYNAMIC for b in lower + upper + step)])
    if any(b == DYNAMIC for b in lower + step) or any(b not in (1, DYNAMIC) for b in upper):
        return False
    return all(b == 1 or constant_int(next(dynamic)) == 1 for b in upper)


def promote_program(grid: ir.Operation) -> None:
    """The grid of one program as its body, its stores inserts into the result so far."""
    body = grid.regions[0].blocks[0]
    rank = len(ir.DenseI64ArrayAttr(grid.attributes["staticUpperBound"]))
    inits = list(grid.operands[len(grid.operands) - len(grid.results) :])
    with ir.InsertionPoint(grid), grid.location:
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
    for iv in list(body.arguments)[:rank]:
        iv.replace_all_uses_with(zero)
    for shared, init in zip(list(body.arguments)[rank:], inits):
        shared.replace_all_uses_with(init)
    current = list(inits)
    ops = list(body.operations)
    for op in ops[:-1]:
        op.move_before(grid)
    for insert in list(ops[-1].regions[0].blocks[0].operations):
        at = inits.index(insert.operands[1])
        with ir.InsertionPoint(grid), insert.location:
            current[at] = ir.Operation.create(
                "tensor.insert_slice",
                results=[current[at].type],
                operands=[insert.operands[0], current[at], *insert.operands[2:]],
                attributes={
                    name: insert.attributes[name]
                    for name in (
                        "operandSegmentSizes",
                        "static_offsets",
                        "static_sizes",
                        "static_strides",
                    )
                },
            ).result
    for result, value in zip(grid.results, current):
        result.replace_all_uses_with(value)
    grid.erase()
