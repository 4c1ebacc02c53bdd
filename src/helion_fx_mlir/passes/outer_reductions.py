"""Multi-reductions over outer dims become lane-wise combines of their rows.

A column sum's tile step reads a few rows of a chunk and combines them into the chunk's
accumulator (`vector.multi_reduction <add>, %rows, %acc [0] : vector<4x64xf32>`). MLIR's
multi-reduction lowering takes one strategy for a whole function, and ours keeps row
reductions lane-parallel (`inner-reduction`): it would transpose these rows into lanes and
reduce each column across them, hundreds of shuffles a step. Combining the rows lane by
lane is what the outer-dim reduction means: four vector adds.

Only reductions whose reduced dims come before every parallel dim longer than 1 (they
reshape to rows x lanes); the innermost dim is never reduced here, and a masked reduction
(inside `vector.mask`, whose region holds that one op) stays.
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import vector

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named, reshaped
from helion_fx_mlir.passes.registry import register

# vector.kind -> the arith op combining two lanes (float, integer).
COMBINERS = {
    "add": ("arith.addf", "arith.addi"),
    "mul": ("arith.mulf", "arith.muli"),
    "maxnumf": ("arith.maxnumf", None),
    "minnumf": ("arith.minnumf", None),
    "maximumf": ("arith.maximumf", None),
    "minimumf": ("arith.minimumf", None),
    "maxsi": (None, "arith.maxsi"),
    "minsi": (None, "arith.minsi"),
    "maxui": (None, "arith.maxui"),
    "minui": (None, "arith.minui"),
    "and": (None, "arith.andi"),
    "or": (None, "arith.ori"),
    "xor": (None, "arith.xori"),
}


@register(
    "helion-combine-outer-reductions",
    "multi-reductions over outer dims as lane-wise combines of their rows",
)
def combine_outer_reductions(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "vector.multi_reduction"):
            if op.parent.name == "vector.mask":
                continue
            if (combiner := _combiner(op)) is not None and (table := _table(op)) is not None:
                _combine(op, combiner, table)


def _combiner(op: ir.Operation) -> str | None:
    kind = str(op.attributes["kind"]).removeprefix("#vector.kind<").removesuffix(">")
    element = ir.VectorType(op.operands[0].type).element_type
    float_op, integer_op = COMBINERS.get(kind, (None, None))
    return float_op if isinstance(element, ir.FloatType) else integer_op


def _table(op: ir.Operation) -> list[int] | None:
    """The source as rows x lanes (the reduced dims' rows, the dims after them), where it
    reshapes so: no parallel dim longer than 1 before the last reduced dim, and the
    innermost dim not reduced."""
    shape = list(ir.VectorType(op.operands[0].type).shape)
    reduced = {int(d) for d in ir.DenseI64ArrayAttr(op.attributes["reduction_dims"])}
    if not reduced or len(shape) - 1 in reduced:
        return None
    last = max(reduced)
    if any(shape[d] != 1 for d in range(last) if d not in reduced):
        return None
    return [math.prod(shape[d] for d in reduced), *shape[last + 1 :]]


def _combine(op: ir.Operation, combiner: str, table_shape: list[int]) -> None:
    """The accumulator combined with each row in turn, in the accumulator's shape."""
    source, acc = op.operands[0], op.operands[1]
    element = ir.VectorType(source.type).element_type
    rows, *lanes = table_shape
    with ir.InsertionPoint(op), op.location:
        row_type = ir.VectorType.get(lanes, element)
        table = reshaped(ir.VectorType.get(table_shape, element), source)
        total = reshaped(row_type, acc)
        for row in range(rows):
            value = vector.extract(table, [], [row])
            total = ir.Operation.create(combiner, [row_type], [total, value]).result
        result = reshaped(op.results[0].type, total)
    op.results[0].replace_all_uses_with(result)
    op.erase()
