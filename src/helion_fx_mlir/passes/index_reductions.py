"""Index reductions (argmax, argmin, max/min along a dim) a vector of lanes at a time.

torch-mlir's argmax of an integer row (a float row's order key, rules/index_reductions.py)
is a linalg reduction yielding `max(x, best)` and `x > best ? i : best_i`: a combination
the vectorizer knows no identity for, so the row was scanned one element per step (argmax
of 851x2300 f32: 0.25-0.4x eager). Rewritten as LANES scans side by side, lane j over
elements j, j + LANES, ...: a loop over the row's chunks of a lane-wise generic (the same
body, each lane its own best and index, which vectorizes), then one reduction of the LANES
lanes to the best value and, among lanes equal to it, the least index. A scan that moves on
a strictly better element only ends at the first index of the row's best, and so do these.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, scf, tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import DYNAMIC, index_constant, ops_named, remap
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import loop_extents

LANES = 16  # scans side by side: one AVX-512 register of 32-bit keys
# The combiner of the best value, and the strict comparison that moves the index with it
# (arith.cmpi predicates: slt 2, sgt 4, ult 6, ugt 8).
STRICT = {"arith.maxsi": 4, "arith.minsi": 2, "arith.maxui": 8, "arith.minui": 6}
EQ, SLT = 0, 2


@dataclass(frozen=True)
class IndexScan:
    """A reduction over its innermost loop of `extent` static elements into a best value
    (combined by `combiner`) and the index that moved with it."""

    op: ir.Operation
    extent: int
    combiner: str


@register(
    "helion-lane-parallel-index-reductions",
    "argmax/argmin reductions of integer rows -> LANES lane-wise scans and their combination",
)
def lane_parallel_index_reductions(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "linalg.generic"):
            scan = _index_scan(op)
            if scan is not None:
                _split(scan)


def _index_scan(op: ir.Operation) -> IndexScan | None:
    """The op as an index scan, if it is one whose row splits into whole chunks."""
    generic = op.opview
    kinds = [str(kind) for kind in generic.iterator_types]
    extents = loop_extents(op)
    if (
        len(op.results) != 2
        or not kinds[-1].endswith("reduction>")
        or any(kind.endswith("reduction>") for kind in kinds[:-1])
        or extents is None
        or DYNAMIC in extents
        or extents[-1] % LANES
        or extents[-1] < 2 * LANES
        or not all(
            ir.AffineMapAttr(m).value.is_projected_permutation for m in generic.indexing_maps
        )
        or not all(ir.ShapedType(v.type).has_static_shape for v in op.operands)
    ):
        return None
    combiner = _combiner(op, len(kinds) - 1)
    return None if combiner is None else IndexScan(op, extents[-1], combiner)


def _combiner(op: ir.Operation, loop: int) -> str | None:
    """The best value's combiner, where the body yields `combine(x, best)` and
    `strict(x, best) ? index(loop) : best_index` and reads the outputs nowhere else."""
    block = op.regions[0].blocks[0]
    best, best_index = list(block.arguments)[-2:]
    value, index = list(block.operations)[-1].operands
    combine, select = _producer(value), _producer(index)
    if combine is None or combine.name not in STRICT or select is None:
        return None
    candidates = [v for v in combine.operands if v != best]
    if len(candidates) != 1 or select.name != "arith.select":
        return None
    compare, moved, kept = select.operands
    strict = _producer(compare)
    if (
        kept != best_index
        or strict is None
        or strict.name != "arith.cmpi"
        or ir.IntegerAttr(strict.attributes["predicate"]).value != STRICT[combine.name]
        or list(strict.operands) != [candidates[0], best]
        or not _is_index_of(moved, loop)
    ):
        return None
    readers = [use.owner.operation for use in best.uses]
    index_readers = [use.owner.operation for use in best_index.uses]
    only = len(readers) == 2 and combine in readers and strict in readers
    return combine.name if only and index_readers == [select] else None


def _producer(value: ir.Value) -> ir.Operation | None:
    """The op defining the value (None for a block argument)."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _is_index_of(value: ir.Value, loop: int) -> bool:
    """`index_cast(linalg.index loop)`."""
    cast = _producer(value)
    if cast is None or cast.name != "arith.index_cast":
        return False
    index = _producer(cast.operands[0])
    return index is not None and index.name == "linalg.index" and _dim(index) == loop


def _split(scan: IndexScan) -> None:
    """The scan as a loop of lane-wise steps over the row's chunks, then the lanes'
    combination into the scan's own outputs."""
    op = scan.op
    generic = op.opview
    loop_dim = len(generic.iterator_types) - 1
    maps = [ir.AffineMapAttr(m).value for m in generic.indexing_maps]
    inputs, inits = list(generic.inputs), list(generic.outputs)
    with ir.InsertionPoint(op), op.location:
        spread = [_spread(init) for init in inits]
        chunks = scf.ForOp(
            index_constant(0), index_constant(scan.extent // LANES), index_constant(1), spread
        )
        with ir.InsertionPoint(chunks.body):
            start = arith.muli(chunks.induction_variable, index_constant(LANES))
            parts = [_chunk(v, m, loop_dim, start) for v, m in zip(inputs, maps)]
            step = _step(op, start, parts, list(chunks.inner_iter_args))
            scf.YieldOp(list(step.results))
        combined = _combine(scan, list(chunks.results), inits, maps[len(inputs) :])
    for old, new in zip(op.results, combined.results):
        old.replace_all_uses_with(new)
    op.erase()


def _with_lanes(amap: ir.AffineMap) -> ir.AffineMap:
    """An output's map with the innermost (reduced) loop appended: a result per lane."""
    lanes = ir.AffineDimExpr.get(amap.n_dims - 1)
    return ir.AffineMap.get(amap.n_dims, 0, [*amap.results, lanes])


def _spread(init: ir.Value) -> ir.Value:
    """The init's value in each of LANES lanes: [*init's shape, LANES]."""
    shape = ir.RankedTensorType(init.type)
    element = shape.element_type
    empty = tensor.EmptyOp([*shape.shape, LANES], element).result
    rank = len(shape.shape) + 1
    identity = ir.AffineMap.get_identity(rank)
    kept = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank - 1)])
    spread = linalg.GenericOp(
        [empty.type],
        [init],
        [empty],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(kept), ir.AffineMapAttr.get(identity)]),
        ir.ArrayAttr.get([_iterator("parallel")] * rank),
    )
    body = spread.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(body):
        linalg.YieldOp([body.arguments[0]])
    return spread.results[0]


def _chunk(value: ir.Value, amap: ir.AffineMap, loop: int, start: ir.Value) -> ir.Value:
    """An input's LANES elements along the reduced loop from `start` (all of an input the
    loop does not index)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    dims = [ir.AffineDimExpr(e).position for e in amap.results]
    if loop not in dims:
        return value
    at = dims.index(loop)
    sizes = [LANES if d == at else s for d, s in enumerate(shape)]
    offsets = [DYNAMIC if d == at else 0 for d in range(len(shape))]
    element = ir.RankedTensorType(value.type).element_type
    return tensor.ExtractSliceOp(
        ir.RankedTensorType.get(sizes, element),
        value,
        [start],
        [],
        [],
        offsets,
        sizes,
        [1] * len(shape),
    ).result


def _step(
    op: ir.Operation, start: ir.Value, chunks: list[ir.Value], carried: list[ir.Value]
) -> ir.OpView:
    """The scan's body over one chunk, every loop parallel: lane j updates its own best and
    index (`carried`), the index counted from the chunk's `start`."""
    generic = op.opview
    rank = len(generic.iterator_types)
    n_in = len(chunks)
    maps = [ir.AffineMapAttr(m).value for m in generic.indexing_maps]
    step = linalg.GenericOp(
        [v.type for v in carried],
        chunks,
        carried,
        ir.ArrayAttr.get(
            [ir.AffineMapAttr.get(m) for m in [*maps[:n_in], *map(_with_lanes, maps[n_in:])]]
        ),
        ir.ArrayAttr.get([_iterator("parallel")] * rank),
    )
    old = op.regions[0].blocks[0]
    new = step.regions[0].blocks.append(*[arg.type for arg in old.arguments])
    mapping = dict(zip(old.arguments, new.arguments))
    with ir.InsertionPoint(new):
        for inner in old.operations:
            copy = inner.clone()
            remap(copy, mapping, inner)
            if inner.name == "linalg.index" and _dim(inner) == rank - 1:
                mapping[inner.results[0]] = arith.addi(start, copy.results[0])
    return step


def _dim(index: ir.Operation) -> int:
    return ir.IntegerAttr(index.attributes["dim"]).value


def _iterator(kind: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#linalg.iterator_type<{kind}>")


def _combine(
    scan: IndexScan, lanes: list[ir.Value], inits: list[ir.Value], maps: list[ir.AffineMap]
) -> ir.OpView:
    """The lanes' bests reduced into the scan's outputs: a lane replaces the best so far
    where its value is strictly better, or equal at a lesser index."""
    op = scan.op
    kinds = list(op.opview.iterator_types)
    combined = linalg.GenericOp(
        [v.type for v in inits],
        lanes,
        inits,
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [*map(_with_lanes, maps), *maps]]),
        ir.ArrayAttr.get(kinds),
    )
    value, index = (ir.RankedTensorType(v.type).element_type for v in lanes)
    body = combined.regions[0].blocks.append(value, index, value, index)
    lane, lane_index, best, best_index = body.arguments
    with ir.InsertionPoint(body):
        strict = arith.cmpi(STRICT[scan.combiner], lane, best)
        equal = arith.cmpi(EQ, lane, best)
        earlier = arith.cmpi(SLT, lane_index, best_index)
        better = arith.ori(strict, arith.andi(equal, earlier))
        linalg.YieldOp(
            [arith.select(better, lane, best), arith.select(better, lane_index, best_index)]
        )
    return combined
