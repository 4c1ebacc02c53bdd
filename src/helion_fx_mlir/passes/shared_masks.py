"""A lane-wise mask read by several lane-wise generics: a copy of it for each reader.

Upstream elementwise fusion merges a producer into a consumer only where that consumer is
its one use. A tile of i1 flags read by two selects (the combine of an argmax written as a
tuple `hl.reduce` picks both the value and the index by one flag) stayed a generic of its
own, and a tile of i1 is not vectorized (a vector of i1 does not store as bytes): the flags
and the selects reading them ran as scalar loops (that argmax at 0.2x eager). Copied for
each reader, each copy fuses into it, and the flags are computed again in registers.
"""

from __future__ import annotations

import functools

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named, parallel_projections
from helion_fx_mlir.passes.registry import register


@register(
    "helion-copy-shared-masks",
    "a lane-wise generic of i1 lanes read by several lane-wise generics -> a copy per reader",
)
def copy_shared_masks(module: ir.Module) -> None:
    with mlir_context():
        # Readers before the masks they read: a copied mask's own inputs gain readers.
        for op in reversed(ops_named(module, "linalg.generic")):
            readers = _lane_wise_readers(op)
            if _is_mask(op) and readers is not None and len(readers) > 1:
                _copy_for(op, readers)


def _is_mask(op: ir.Operation) -> bool:
    """A lane-wise generic of one i1 result, of a static shape."""
    if len(op.results) != 1 or not parallel_projections(op):
        return False
    tile = ir.RankedTensorType(op.results[0].type)
    element = tile.element_type
    return tile.has_static_shape and isinstance(element, ir.IntegerType) and element.width == 1


def _lane_wise_readers(op: ir.Operation) -> list[tuple[ir.Operation, int]] | None:
    """Each use of the op's result as (reader, operand number), where every one is an input
    of a lane-wise generic beside the op; else None."""
    uses = [(use.owner.operation, use.operand_number) for use in op.results[0].uses]
    for reader, number in uses:
        if (
            reader.name != "linalg.generic"
            or reader.block != op.block
            or number >= len(reader.opview.inputs)
            or not parallel_projections(reader)
        ):
            return None
    return sorted(uses, key=functools.cmp_to_key(_in_block_order))


def _in_block_order(a: tuple[ir.Operation, int], b: tuple[ir.Operation, int]) -> int:
    return -1 if a[0].is_before_in_block(b[0]) else int(a[0] != b[0])


def _copy_for(op: ir.Operation, readers: list[tuple[ir.Operation, int]]) -> None:
    """Every reader after the first reads a copy of op placed just before it."""
    for reader, number in readers[1:]:
        with ir.InsertionPoint(reader):
            copy = op.clone()
        reader.operands[number] = copy.results[0]
