"""A loop over chunks whose last chunk is partial: the whole chunks as a loop of their own,
then the last chunk.

A rolled reduction (`reduction_loops`; Helion rolls rows longer than 4096 lanes by default)
walks the row in chunks of its block, and a device loop (`hl.tile` in a program: a column
sum's row tiles, a matmul's K) walks its extent in tiles; each chunk is sized
`min(block, n - i * block)` and padded up to the block. Where the block does not divide
the extent (a vocabulary of 32000, 1000 rows in tiles of 32), every chunk takes the
dynamically sized path: a masked copy of the chunk into a padded buffer, then the ops on
the buffer. Here such a loop (`scf.for` or `affine.for`) becomes a loop over the whole
chunks, in which the sizes are the block, and its last iteration, in which they are the last
chunk's: constants in both, so the whole chunks need no pad and the last one's pad is
static and trimmed (`trim_padded_tiles.py`). Sizes are evaluated on every iteration
(`grid_values.py`), never assumed; a loop whose sizes are not all known stays as it is. On
linalg on tensors, before `helion-trim-padded-tiles`. Default configs, 2 threads, AMD Zen
4, one process, ms: softmax 256x32000 5.24 -> 2.80 (eager 2.7), col_sum 1000x3000 0.77
-> 0.14 (eager 0.11).
"""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.grid_values import GridValues, Spread
from helion_fx_mlir.mlir.walk import constant_bounds, index_constant, ops_named, within
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import apply_script, patterns_script

SIZES = ("affine.min", "affine.max")  # how a chunk's size is computed from the loop's index
MAX_TRIPS = 1 << 14  # loops evaluated iteration by iteration up to this many


@register(
    "helion-peel-partial-chunks",
    "loops over chunks whose last is partial -> a loop over the whole chunks, then the last",
)
def peel_partial_chunks(module: ir.Module) -> None:
    with mlir_context():
        peeled = [_peel(loop, module) for loop in ops_named(module, "scf.for", "affine.for")]
        if any(peeled):
            apply_script(module, patterns_script("canonicalization"))


def _peel(loop: ir.Operation, module: ir.Module) -> bool:
    """The loop as a loop over all its iterations but the last, whose chunk sizes are then
    constants, and the loop over the last one, its index a constant (canonicalization
    inlines a one-trip scf.for, not an affine.for); False where no size changes only there."""
    bounds = _bounds(loop)
    if bounds is None or not 2 <= len(bounds) <= MAX_TRIPS:
        return False
    sizes = _sizes(loop, module, bounds)
    if not any(_whole_but_last(sizes[op]) for op in sizes):
        return False
    with ir.InsertionPoint(loop), loop.location:
        whole = loop.clone()
        _set_bound(whole, "upper", bounds[-1])
    for op, spread in _sizes(whole, module, bounds[:-1]).items():
        if spread is not None and len(set(spread.items)) == 1:
            with ir.InsertionPoint(op), op.location:
                op.results[0].replace_all_uses_with(index_constant(spread.items[0]))
    with ir.InsertionPoint(loop), loop.location:
        _set_bound(loop, "lower", bounds[-1])
        loop.regions[0].blocks[0].arguments[0].replace_all_uses_with(index_constant(bounds[-1]))
    inits = len(loop.operands) - len(whole.results)
    for i, result in enumerate(whole.results):
        loop.operands[inits + i] = result
    return True


def _bounds(loop: ir.Operation) -> range | None:
    """The iterations of an scf.for or affine.for of constant bounds and step."""
    if loop.name == "scf.for":
        return constant_bounds(loop)
    maps = [ir.AffineMapAttr(loop.attributes[f"{end}BoundMap"]).value for end in ("lower", "upper")]
    if any(m.n_inputs or len(m.results) != 1 for m in maps):
        return None
    low, high = (m.results[0] for m in maps)
    if not isinstance(low, ir.AffineConstantExpr) or not isinstance(high, ir.AffineConstantExpr):
        return None
    step = ir.IntegerAttr(loop.attributes["step"]).value
    return range(ir.AffineConstantExpr(low).value, ir.AffineConstantExpr(high).value, step)


def _set_bound(loop: ir.Operation, end: str, value: int) -> None:
    """The loop's lower or upper bound set to a constant, at the insertion point."""
    if loop.name == "scf.for":
        loop.operands[0 if end == "lower" else 1] = index_constant(value)
    else:
        loop.attributes[f"{end}BoundMap"] = ir.AffineMapAttr.get(ir.AffineMap.get_constant(value))


def _sizes(
    loop: ir.Operation, module: ir.Module, iterations: range
) -> dict[ir.Operation, Spread | None]:
    """Each affine.min/max in the loop on its index's values over `iterations` (None where
    a size depends on anything else)."""
    index = loop.regions[0].blocks[0].arguments[0]
    values = GridValues([index], [iterations])
    return {
        op: values.of(op.results[0])
        for op in ops_named(module, *SIZES)
        if within(op, loop) and op.operation != loop.operation
    }


def _whole_but_last(spread: Spread | None) -> bool:
    """The same value on every iteration but the last, another there."""
    if spread is None or spread.dims != (0,):
        return False
    *whole, last = spread.items
    return len(set(whole)) == 1 and last != whole[0]
