"""An scf.if whose branches only compute tiles lane by lane is both branches and a select.

`if scale > 0: acc = acc * 2.0` on a scalar argument arrives as an scf.if yielding the
tile. Bufferized, each branch took a buffer of its own per program (a malloc), copied the
output's tile into it first, and the tile was copied out after the if: an elementwise
kernel of two such ifs ran at 0.11x eager (851x2300 f32, 32x32 tiles). Computed in both
branches and chosen by a lane-wise `arith.select` on the condition, the ops fuse with the
load and the store around them into one loop (`helion-fuse-elementwise`).

Only what is safe and cheap to compute when the branch is not taken is moved: lane-wise
`linalg.generic`s of arithmetic and math, fills, empty tensors and constants, on tiles of
at most MAX_LANES lanes. A branch that reads memory (a slice of another tensor, a gather)
could read past it where the condition guards the access, and an integer division could
trap on the divisor the condition excludes: such ifs stay as they are, as do ifs with
loops, stores or reductions in a branch.
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named, parallel_projections
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.safety_checks import INTEGER_DIVISIONS

MAX_LANES = 1 << 16  # a tile's lanes; larger values are whole tensors, not worth computing twice
# Ops a branch may hold, beyond lane-wise generics: what they compute reads no memory.
_TILE_OPS = frozenset({"arith.constant", "tensor.empty", "linalg.fill"})


@register(
    "helion-select-elementwise-ifs",
    "scf.if of lane-wise tile computations -> both branches and an arith.select per lane",
)
def select_elementwise_ifs(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "scf.if"):  # nested ifs first: an outer one may follow
            if _selectable(op):
                _select(op)


def _selectable(op: ir.Operation) -> bool:
    """Both branches hold only ops safe to compute when not taken, and every result is a
    small static tile or a scalar."""
    if len(op.regions[1].blocks) == 0 or not op.results:
        return False
    return all(_small(r.type) for r in op.results) and all(
        _safe(inner) for region in op.regions for inner in _body(region)
    )


def _body(region: ir.Region) -> list[ir.Operation]:
    """A branch's ops without its scf.yield."""
    return [inner.operation for inner in region.blocks[0].operations][:-1]


def _small(type_: ir.Type) -> bool:
    if isinstance(type_, ir.RankedTensorType):
        return type_.has_static_shape and math.prod(type_.shape) <= MAX_LANES
    return isinstance(type_, (ir.IntegerType, ir.IndexType, ir.FloatType))


def _safe(op: ir.Operation) -> bool:
    """An op whose result may be computed where the condition does not hold."""
    if op.name in _TILE_OPS:
        return True
    if op.name == "linalg.generic":
        return _lane_wise(op)
    return _safe_scalar(op)


def _safe_scalar(op: ir.Operation) -> bool:
    """An arith or math op without regions that cannot trap (x86 faults on an integer
    division by zero or of the least integer by -1, which the condition may exclude)."""
    dialect = op.name.split(".")[0]
    return dialect in ("arith", "math") and op.name not in INTEGER_DIVISIONS and not op.regions


def _lane_wise(op: ir.Operation) -> bool:
    """Every iterator parallel, every operand of a static shape and every map a projected
    permutation (a lane reads a lane of each operand, broadcast or transposed: within its
    bounds, whatever the condition), the body scalar ops and the lane's index."""
    static = all(
        not isinstance(v.type, ir.ShapedType) or ir.ShapedType(v.type).has_static_shape
        for v in op.operands
    )
    body = [inner.operation for inner in op.regions[0].blocks[0].operations]
    return (
        parallel_projections(op)
        and static
        and all(_safe_scalar(inner) or inner.name == "linalg.index" for inner in body[:-1])
    )


def _select(op: ir.Operation) -> None:
    """Move both branches' ops before the if; each result is the select of their yields."""
    yields = []
    for region in op.regions:
        block = region.blocks[0]
        for inner in _body(region):
            inner.move_before(op)
        yields.append(list(block.operations[0].operands))
    cond = op.operands[0]
    with ir.InsertionPoint(op), op.location:
        chosen = [
            taken if taken == other else _chosen(cond, taken, other)
            for taken, other in zip(*yields)
        ]
    for result, value in zip(op.results, chosen):
        result.replace_all_uses_with(value)
    op.erase()


def _chosen(cond: ir.Value, taken: ir.Value, other: ir.Value) -> ir.Value:
    """`cond ? taken : other`, lane by lane for tiles (a generic the fusion can merge)."""
    if not isinstance(taken.type, ir.RankedTensorType):
        return arith.select(cond, taken, other)
    tile = ir.RankedTensorType(taken.type)
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(tile.rank))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    empty = tensor.EmptyOp(list(tile.shape), tile.element_type).result
    generic = linalg.GenericOp(
        [tile],
        [taken, other],
        [empty],
        ir.ArrayAttr.get([identity] * 3),
        ir.ArrayAttr.get([parallel] * tile.rank),
    )
    element = tile.element_type
    body = generic.regions[0].blocks.append(element, element, element)
    with ir.InsertionPoint(body):
        linalg.YieldOp([arith.select(cond, body.arguments[0], body.arguments[1])])
    return generic.results[0]
