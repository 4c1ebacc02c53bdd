"""Which reductions a rolled reduction loop combines across chunks: the lowering rules
use it to carry accumulators, the LoweringContext to make such a loop persistent."""

from __future__ import annotations

import operator
from typing import Any

import torch
from helion.language import _tracing_ops, reduce_ops
from torch import fx

# Reductions whose rolled form yields extra buffers of chunk partials (accumulated with add).
ROLLED_EXTRA_TARGETS = frozenset({torch.ops.aten.mean.dim, torch.ops.aten.var.correction})


# Reductions a rolled loop accumulates across chunks: combine op and identity.
ROLLED_COMBINES: dict[Any, tuple[Any, float]] = {
    torch.ops.aten.sum.dim_IntList: (torch.ops.aten.add.Tensor, 0.0),
    torch.ops.aten.amax.default: (torch.ops.aten.maximum.default, float("-inf")),
    torch.ops.aten.amin.default: (torch.ops.aten.minimum.default, float("inf")),
}


# Reductions that are no plain op target's lowering class (Helion's own, multi-result ATen).
OTHER_REDUCTIONS = {
    reduce_ops._reduce,
    torch.ops.aten.topk.default,
    torch.ops.aten.max.dim,
    torch.ops.aten.min.dim,
}


def uncombinable_outputs(info: Any) -> list[fx.Node]:
    """Outputs of a rolled reduction loop that reduce over the chunk but whose chunk
    partials this lowering cannot combine (argmax, max.dim, topk, custom combines)."""
    outputs = info.graph.output_node().args[0] or []
    return [
        out
        for out in outputs
        if isinstance(out, fx.Node)
        and _is_reduction(out)
        and rolled_target(out) not in ROLLED_COMBINES
    ]


def uncombined_results_used(loop: fx.Node, info: Any) -> bool:
    """Whether code after a rolled loop reads a result that is no combinable partial (a
    chunk of loaded values, for a cat after the loop): only the last chunk would be there."""
    outputs = info.graph.output_node().args[0] or []
    return any(
        user.target is operator.getitem
        and user.users
        and rolled_target(outputs[user.args[1]]) not in ROLLED_COMBINES
        for user in loop.users
    )


def _is_reduction(node: fx.Node) -> bool:
    return (
        node.target in OTHER_REDUCTIONS
        or type(node.meta.get("lowering")).__name__ == "ReductionLowering"
    )


def rolled_target(partial: fx.Node) -> Any:
    """The reduction a chunk partial is: its target, or sum for a mean's or var's extra buffer."""
    if partial.target is _tracing_ops._inductor_lowering_extra:
        orig = partial.meta.get("orig_node")
        return (
            torch.ops.aten.sum.dim_IntList
            if orig is not None and orig.target in ROLLED_EXTRA_TARGETS
            else None
        )
    return partial.target
