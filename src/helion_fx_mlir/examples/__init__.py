"""Sample kernels with inputs and eager references: shared by tests, lit, demo and bench.

Each family module defines its kernels and an `EXAMPLES` list; this collects them.
"""

from __future__ import annotations

from . import attention, control_flow, coverage_ops, elementwise, jagged_moe, kernels, matmuls, reductions
from .registry import Example

FAMILIES = (kernels, elementwise, reductions, matmuls, attention, jagged_moe, control_flow, coverage_ops)
EXAMPLES: dict[str, Example] = {e.name: e for module in FAMILIES for e in module.EXAMPLES}

__all__ = ["EXAMPLES", "Example"]
