"""Sample kernels with inputs and eager references: shared by tests, lit, demo and bench.

Each family module defines its kernels and an `EXAMPLES` list; this collects them.
"""

from __future__ import annotations

from . import (
    attention,
    closures,
    concat,
    control_flow,
    coverage_ops,
    elementwise,
    jagged_moe,
    jagged_tiles,
    kernels,
    manual_loops,
    matmuls,
    norm_backward,
    positional,
    quantized,
    reductions,
    routing,
    scalars,
    semantics,
    split_k,
)
from .registry import Example

FAMILIES = (kernels, elementwise, reductions, matmuls, attention, jagged_moe, control_flow, coverage_ops,
            manual_loops, jagged_tiles, norm_backward, split_k, positional, concat, quantized, routing, closures,
            scalars, semantics)
EXAMPLES: dict[str, Example] = {e.name: e for module in FAMILIES for e in module.EXAMPLES}

__all__ = ["EXAMPLES", "Example"]
