"""A kernel body Helion rejects while tracing (tests/test_cli.py): torch's fake tensors fail
the shape check of `@` and log it before Helion raises."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def mismatched_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for t in hl.tile(x.size(0)):
        out[t, :] = x[t, :] @ y[t, :]
    return out
