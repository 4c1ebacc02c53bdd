"""A loop over a row's chunks around a loop over an accumulator's rows, interchanged.

A hand-written accumulator `acc = hl.zeros([tile_m, block_n])` summed over `for tile_n in
hl.tile(n)` vectorizes into a chunk loop whose body is a loop over the tile's rows, each
step adding one row's chunk into that row of the accumulator: every chunk step reads 32
rows a row apart (32 streams at once), and the accumulator goes through memory (row sums
of 259x7000 f32 at 0.43x eager). Each step touches its own row of the accumulator only,
so the loops interchange: a loop over the rows, each streaming its row's chunks into an
accumulator row the hoisting then keeps in registers.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import scf

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import (
    INDEX_ARITHMETIC,
    constant_int,
    defined_in,
    index_constant,
    ops_named,
    remap,
)
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import apply_script

CHUNK_LOOPS = ("affine.for", "scf.for")
# What a chunk step may compute before its row loop, which each row's step then computes
# again: index arithmetic, and the chunk's column indices (`tile_n.index`).
CHUNK_SETUP = INDEX_ARITHMETIC | {"tensor.generate"}
# Ops a row step may hold besides reads and writes of its accumulator row: pure ones.
PURE_DIALECTS = ("arith", "math", "vector", "affine")
HOIST = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %loops = transform.structured.match ops{["scf.for"]} attributes {helion.rows_inner} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {
    ^bb0(%loop: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %loop : !transform.any_op
    }
    transform.yield
  }
}"""


@register(
    "helion-interchange-row-loops",
    "a chunk loop around a loop over an accumulator's rows -> the row loop outside",
)
def interchange_row_loops(module: ir.Module) -> None:
    with mlir_context():
        found = False
        for chunks in ops_named(module, *CHUNK_LOOPS):
            rows = _row_loop(chunks)
            if rows is not None:
                _interchange(chunks, rows)
                found = True
        if found:
            apply_script(module, HOIST)
            for loop in ops_named(module, "scf.for"):
                if "helion.rows_inner" in loop.attributes:
                    del loop.attributes["helion.rows_inner"]


def _row_loop(chunks: ir.Operation) -> ir.Operation | None:
    """The loop over rows that is the chunk loop's body, if the two interchange: the chunk
    loop's bounds are constants, it carries one tensor, which the row loop alone updates;
    the row loop's bounds do not depend on the chunk; its steps touch their own row."""
    body = list(chunks.regions[0].blocks[0].operations)
    if len(chunks.results) != 1 or not _constant_bounds(chunks) or len(body) < 2:
        return None
    rows, end = body[-2].operation, body[-1].operation
    carried = chunks.regions[0].blocks[0].arguments[1]
    if (
        rows.name != "scf.for"
        or len(rows.results) != 1
        or list(end.operands) != [rows.results[0]]
        or rows.operands[3] != carried
        or not all(op.name in CHUNK_SETUP for op in body[:-2])
        or any(defined_in(v, chunks) for v in list(rows.operands)[:3])
        or constant_int(rows.operands[2]) != 1
    ):
        return None
    return rows if _row_wise(rows) and not _reads(rows, carried) else None


def _constant_bounds(loop: ir.Operation) -> bool:
    """An scf.for (its bounds are defined outside it), or an affine.for between constants."""
    if loop.name == "scf.for":
        return True
    maps = [ir.AffineMapAttr(loop.attributes[k]).value for k in ("lowerBoundMap", "upperBoundMap")]
    return len(list(loop.operands)) == 1 and all(
        len(m.results) == 1 and isinstance(m.results[0], ir.AffineConstantExpr) for m in maps
    )


def _reads(loop: ir.Operation, value: ir.Value) -> bool:
    """Whether an op in the loop's body uses the value itself (not through its iter arg)."""
    return any(value in op.operands for op in loop.regions[0].blocks[0].operations)


def _row_wise(rows: ir.Operation) -> bool:
    """Every step reads and writes the carried tensor at its own row only (one-row
    vectors at [row, ...]), and does nothing else with side effects."""
    block = rows.regions[0].blocks[0]
    row, carried = block.arguments[0], block.arguments[1]
    chain = {carried}
    for op in list(block.operations)[:-1]:
        if op.name == "vector.transfer_write" and op.operands[1] in chain:
            if not _at_row(op, row, op.operands[0].type):
                return False
            chain.add(op.results[0])
        elif any(v in chain for v in op.operands):
            if op.name != "vector.transfer_read" or not _at_row(op, row, op.results[0].type):
                return False
        elif op.name.split(".")[0] not in PURE_DIALECTS or op.regions:
            return False
    return list(block.operations)[-1].operands[0] in chain


def _at_row(access: ir.Operation, row: ir.Value, vector: ir.Type) -> bool:
    """A transfer at [row, 0, ...] of a vector one row high, of the tensor's rank."""
    start = 2 if access.name == "vector.transfer_write" else 1  # after (vector,) tensor
    rank = ir.ShapedType(access.operands[start - 1].type).rank
    indices = list(access.operands)[start : start + rank]
    shape = ir.VectorType(vector).shape
    return (
        bool(indices)
        and indices[0] == row
        and all(constant_int(v) == 0 for v in indices[1:])
        and len(shape) == rank
        and shape[0] == 1
    )


def _interchange(chunks: ir.Operation, rows: ir.Operation) -> None:
    """scf.for row { scf.for chunk { the chunk's index ops; the row's step } }."""
    lower, upper, step = list(rows.operands)[:3]
    init = chunks.operands[-1] if chunks.name == "affine.for" else chunks.operands[3]
    with ir.InsertionPoint(chunks), chunks.location:
        outer = scf.ForOp(lower, upper, step, [init])
        with ir.InsertionPoint(outer.body):
            inner = scf.ForOp(*_bounds(chunks), [outer.inner_iter_args[0]])
            inner.attributes["helion.rows_inner"] = ir.UnitAttr.get()
            with ir.InsertionPoint(inner.body):
                mapping = {
                    chunks.regions[0].blocks[0].arguments[0]: inner.induction_variable,
                    rows.regions[0].blocks[0].arguments[0]: outer.induction_variable,
                    rows.regions[0].blocks[0].arguments[1]: inner.inner_iter_args[0],
                }
                for op in list(chunks.regions[0].blocks[0].operations)[:-2]:
                    remap(op.clone(), mapping, op)
                for op in rows.regions[0].blocks[0].operations:
                    remap(op.clone(), mapping, op)
            scf.YieldOp([inner.results[0]])
    chunks.results[0].replace_all_uses_with(outer.results[0])
    chunks.erase()


def _bounds(chunks: ir.Operation) -> list[ir.Value]:
    """The chunk loop's lower bound, upper bound and step, as index values here."""
    if chunks.name == "scf.for":
        return list(chunks.operands)[:3]
    bounds = [
        ir.AffineConstantExpr(ir.AffineMapAttr(chunks.attributes[k]).value.results[0]).value
        for k in ("lowerBoundMap", "upperBoundMap")
    ]
    return [index_constant(v) for v in (*bounds, ir.IntegerAttr(chunks.attributes["step"]).value)]
