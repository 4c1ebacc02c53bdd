"""Sample kernels with inputs and eager references: shared by tests, lit, demo and bench.

Shapes deliberately do not divide the default block sizes (16/32), so every run
exercises the exact-size boundary tiles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from . import kernels

Args = tuple[Any, ...]


@dataclass(frozen=True)
class Example:
    """A kernel, how to make its inputs for a dtype, and what eager PyTorch computes."""

    name: str
    kernel: Any
    make_args: Callable[[torch.dtype], Args]
    reference: Callable[..., Any]
    dtypes: tuple[torch.dtype, ...] = (torch.float32,)

    def args(self, dtype: torch.dtype = torch.float32, seed: int = 0) -> Args:
        torch.manual_seed(seed)
        return self.make_args(dtype)

    def bind(self, dtype: torch.dtype = torch.float32) -> Any:
        return self.kernel.bind(self.args(dtype))


def _randn(*shape: int) -> Callable[[torch.dtype], torch.Tensor]:
    return lambda dtype: torch.randn(*shape, dtype=dtype)


def _tensors(*makers: Callable[[torch.dtype], Any]) -> Callable[[torch.dtype], Args]:
    return lambda dtype: tuple(make(dtype) for make in makers)


def _in_f32(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """Reference computed in f32 and cast back, as the kernels accumulate in f32."""
    def run(*args: Any) -> torch.Tensor:
        dtype = args[0].dtype
        floats = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
        return fn(*floats).to(dtype)
    return run


def _rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in [
        Example("add", kernels.add, _tensors(_randn(37, 50), _randn(37, 50)), torch.add,
                (torch.float32, torch.float16, torch.bfloat16)),
        Example("matmul", kernels.matmul, _tensors(_randn(100, 130), _randn(130, 70)), _in_f32(torch.matmul),
                (torch.float32, torch.float16, torch.bfloat16)),
        Example("softmax", kernels.softmax, _tensors(_randn(37, 100)), _in_f32(lambda x: torch.softmax(x, -1)),
                (torch.float32, torch.float16, torch.bfloat16)),
        Example("softmax_two_pass", kernels.softmax_two_pass, _tensors(_randn(37, 100)),
                lambda x: torch.softmax(x, -1)),
        Example("layer_norm", kernels.layer_norm, _tensors(_randn(37, 100), _randn(100), _randn(100)),
                _in_f32(lambda x, w, b: F.layer_norm(x, [x.shape[-1]], w, b, 1e-5)),
                (torch.float32, torch.bfloat16)),
        Example("rms_norm", kernels.rms_norm, _tensors(_randn(37, 100), _randn(100)), _in_f32(_rms_norm),
                (torch.float32, torch.float16)),
        Example("sum_rows", kernels.sum_rows, _tensors(_randn(37, 100)), lambda x: x.sum(-1)),
    ]
}
