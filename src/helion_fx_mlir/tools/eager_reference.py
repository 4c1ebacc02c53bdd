"""Helion's ref mode as a reference on a CPU: `helion-mlir run`'s and the fuzzers'.

Ref mode runs a kernel's body as eager PyTorch, and its dots into an accumulator call the
`out_dtype` overloads of mm, bmm, addmm and baddbmm (`aten::mm.dtype`), which torch
implements for CUDA only: on a CPU the reference of every matmul kernel failed. Under
`OutDtypeMatmuls` each runs as its plain overload on operands widened to f64 (or int64),
its result cast to the out dtype: the exact sum, rounded once. A dispatch mode, not a
kernel registered with torch: the user's process and the test workers keep torch's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# overload -> (its plain overload, how many tensors precede `out_dtype`)
PLAIN = {
    aten.mm.dtype: (aten.mm.default, 2),
    aten.bmm.dtype: (aten.bmm.default, 2),
    aten.addmm.dtype: (aten.addmm.default, 3),
    aten.baddbmm.dtype: (aten.baddbmm.default, 3),
}


def _wide(t: torch.Tensor) -> torch.Tensor:
    return t.double() if t.is_floating_point() else t.long()


class OutDtypeMatmuls(TorchDispatchMode):
    """Runs the `out_dtype` matmul overloads as their plain ones, wide, then cast."""

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        if func not in PLAIN:
            return func(*args, **kwargs)
        plain, tensors = PLAIN[func]
        out_dtype = args[tensors]
        wide = [_wide(t) for t in args[:tensors]]
        return plain(*wide, *args[tensors + 1 :], **kwargs).to(out_dtype)


def with_out_dtype_matmuls(reference: Any) -> Callable[..., Any]:
    """`reference` (a ref-mode kernel) called under `OutDtypeMatmuls`; its `fn` kept for
    the error messages that name the kernel's line."""

    def run(*args: Any) -> Any:
        with OutDtypeMatmuls():
            return reference(*args)

    run.fn = reference.fn  # type: ignore[attr-defined]
    return run


def eager_reference(kernel: Any) -> Callable[..., Any]:
    """The kernel run by Helion's ref mode: its body as plain eager PyTorch."""
    import helion

    ref = helion.kernel(kernel.fn, ref_mode=helion.RefMode.EAGER, static_shapes=True)
    return with_out_dtype_matmuls(ref)
