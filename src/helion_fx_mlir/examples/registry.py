"""The Example type and input helpers used by every family module of sample kernels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

Args = tuple[Any, ...]
FLOATS = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class Example:
    """A kernel, how to make its inputs for a dtype, and what eager PyTorch computes.

    Shapes should not divide the default block sizes (16/32), so that every run
    exercises the exact-size boundary tiles."""

    name: str
    kernel: Any
    make_args: Callable[[torch.dtype], Args]
    reference: Callable[..., Any]
    dtypes: tuple[torch.dtype, ...] = (torch.float32,)
    configs: tuple[Any, ...] = ()  # extra helion.Configs the tests also run
    # Helion's reference mode computes what compiled Helion does (the fuzzer's oracle); not
    # for implicit broadcasts by tile, which reference mode leaves to torch's trailing rule.
    reference_mode: bool = True
    # A kernel of the same meaning that reference mode runs in this one's place (the
    # masked `hl.tile` twin of an `hl.jagged_tile` loop, which reference mode lacks).
    oracle: Any = None
    # Sizes the kernel indexes by a constant (`hl.arange(5)` into a dim of 7): a smaller
    # input puts that index past the tensor, the user's bug, so the fuzzer keeps them.
    fixed_shapes: bool = False

    def args(self, dtype: torch.dtype | None = None, seed: int = 0) -> Args:
        """Inputs for `dtype` (default: the example's first dtype), seeded."""
        torch.manual_seed(seed)
        return self.make_args(dtype or self.dtypes[0])

    def bind(self, dtype: torch.dtype | None = None) -> Any:
        return self.kernel.bind(self.args(dtype))


def randn(*shape: int) -> Callable[[torch.dtype], torch.Tensor]:
    """A maker of a normal random tensor in the example's dtype."""
    return lambda dtype: torch.randn(*shape, dtype=dtype)


def tensors(*makers: Callable[[torch.dtype], Any]) -> Callable[[torch.dtype], Args]:
    """Args from makers; a non-callable is passed through as a constant (e.g. eps)."""
    return lambda dtype: tuple(make(dtype) if callable(make) else make for make in makers)


def in_f32(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """Reference computed in f32 and cast back, as the kernels accumulate in f32."""

    def run(*args: Any) -> torch.Tensor:
        dtype = args[0].dtype
        floats = [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        return fn(*floats).to(dtype)

    return run
