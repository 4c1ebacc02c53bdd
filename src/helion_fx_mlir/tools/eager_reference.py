"""Helion's ref mode as `helion-mlir run`'s reference, on a CPU.

Ref mode runs a kernel's body as eager PyTorch, and its dots into an accumulator call the
`out_dtype` overloads of mm, bmm, addmm and baddbmm (`aten::mm.dtype`), which torch
implements for CUDA only: on a CPU the reference of every matmul kernel failed. Under
`OutDtypeMatmuls` each runs as its plain overload on operands cast to the out dtype
first: the same products (a bf16 or f16 product is exact in f32), summed in the out dtype.
"""

from __future__ import annotations

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


class OutDtypeMatmuls(TorchDispatchMode):
    """Runs the `out_dtype` matmul overloads as their plain ones, on cast operands."""

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        if func not in PLAIN:
            return func(*args, **kwargs)
        plain, tensors = PLAIN[func]
        out_dtype = args[tensors]
        cast = [t.to(out_dtype) for t in args[:tensors]]
        return plain(*cast, *args[tensors + 1 :], **kwargs)


def eager_reference(kernel: Any) -> Any:
    """The kernel run by Helion's ref mode: its body as plain eager PyTorch."""
    import helion

    ref = helion.kernel(kernel.fn, ref_mode=helion.RefMode.EAGER, static_shapes=True)

    def run(*args: Any) -> Any:
        with OutDtypeMatmuls():
            return ref(*args)

    run.fn = kernel.fn  # type: ignore[attr-defined]
    return run
