"""A slice that drops unit dims beside a dynamic one keeps them, then collapses them.

`tensor.extract_slice %x[i, j] [1, %n] : tensor<?x?xf16> to tensor<?xf16>` (a row block of
1 with its unit dim folded away, `fold_unit_dim_reshapes`) bufferizes to a rank-reducing
`memref.subview`. Where a call's size makes `%n` a constant 1 (a dynamic-shape kernel
called on one column: Helion specializes sizes of 1), canonicalization folds the subview
to sizes [1, 1] and gives it the type `memref<1xf16, strided<[1]>>`, which the verifier
rejects, not knowing which unit dim was dropped: the kernel failed to compile. Here such a
slice keeps every dim and a `tensor.collapse_shape` drops the unit ones, which bufferizes
to a subview and a collapse of unit dims: both unambiguous. Slices of static sizes only
bufferize to the type the verifier expects and are left as they are.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import tensor

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import DYNAMIC, ops_named
from helion_fx_mlir.passes.registry import register


@register(
    "helion-keep-sliced-unit-dims",
    "a rank-reducing slice of dynamic size -> a slice keeping its unit dims, then a collapse",
)
def keep_sliced_unit_dims(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_named(module, "tensor.extract_slice"):
            groups = _dropped_into_groups(op)
            if groups is not None:
                _keep_unit_dims(op, groups)


def _dropped_into_groups(op: ir.Operation) -> list[list[int]] | None:
    """The result's dims as groups of the slice's (each kept dim with the dropped unit
    dims before it; trailing ones join the last group), or None where the slice reduces
    no rank or has only static sizes."""
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    if len(shape) == len(sizes) or DYNAMIC not in shape:
        return None
    groups: list[list[int]] = []
    pending: list[int] = []
    for dim, size in enumerate(sizes):
        kept = len(groups) < len(shape) and size == shape[len(groups)]
        if kept:
            groups.append([*pending, dim])
            pending = []
        elif size == 1:
            pending.append(dim)
        else:
            return None
    if groups and pending:
        groups[-1].extend(pending)
    return groups if len(groups) == len(shape) else None


def _keep_unit_dims(op: ir.Operation, groups: list[list[int]]) -> None:
    result = op.results[0]
    element = ir.RankedTensorType(result.type).element_type
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    reassociation = ir.ArrayAttr.get(
        [ir.ArrayAttr.get([_i64(d) for d in group]) for group in groups]
    )
    with ir.InsertionPoint(op), op.location:
        whole = op.clone()
        whole.results[0].set_type(ir.RankedTensorType.get(sizes, element))
        collapsed = tensor.CollapseShapeOp(result.type, whole.results[0], reassociation)
    result.replace_all_uses_with(collapsed.result)
    op.erase()


def _i64(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
