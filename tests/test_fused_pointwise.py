"""addcmul, addcdiv and torch.lerp as eager computes them (rules `addcmul` and `addcdiv`
in `rules/aten.py`): eager's kernels compute `fma(value * t1, t2, self)` and
`(value * t1) / t2 + self` in f32 for f16/bf16, rounded once; torch.lerp with a tensor
weight traces to addcmul of its two-sided form (`traced_lerp`). Bit for bit against
eager, on a 2-D shape the blocks do not divide, under two configs."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel

CONFIGS = [helion.Config(block_sizes=[16, 32]), helion.Config(block_sizes=[4, 8])]


@helion.kernel(static_shapes=True)
def combined(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = [torch.empty_like(x) for _ in range(4)]
    for tm, tn in hl.tile(x.size()):
        a, b, c = x[tm, tn], y[tm, tn], w[tm, tn]
        outs[0][tm, tn] = torch.addcmul(a, b, c)
        outs[1][tm, tn] = torch.addcmul(a, b, c, value=0.3)
        outs[2][tm, tn] = torch.addcdiv(a, b, c, value=-1.5)
        outs[3][tm, tn] = torch.lerp(a, b, c)
    return tuple(outs)


def combined_eager(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (
        torch.addcmul(x, y, w),
        torch.addcmul(x, y, w, value=0.3),
        torch.addcdiv(x, y, w, value=-1.5),
        torch.lerp(x, y, w) if x.dtype == torch.float32 else traced_lerp(x, y, w),
    )


def traced_lerp(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """torch.lerp as Helion traces it: its difference `y - x` is an op of the dtype, so
    rounded to f16/bf16 where eager's lerp keeps it in f32."""
    large = w.abs() >= 0.5
    return torch.addcmul(torch.where(large, y, x), torch.where(large, w - 1, w), y - x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
def test_fused_pointwise_ops_as_eager(dtype: torch.dtype) -> None:
    """torch-mlir's `self + value * (t1 * t2)` in the dtype differed in 20-30% of lanes."""
    gen = torch.Generator().manual_seed(0)
    x, y = (torch.randn(37, 45, generator=gen).mul(3).to(dtype) for _ in range(2))
    w = (torch.rand(37, 45, generator=gen) * 1.5 - 0.25).to(dtype)
    bound = combined.bind((x, y, w))
    want = combined_eager(x, y, w)
    for config in CONFIGS:
        got = compile_kernel(bound, config=config)(x, y, w)
        for i, (out, expected) in enumerate(zip(got, want, strict=True)):
            assert torch.equal(out, expected), f"output {i}: {(out != expected).sum()} differ"


@helion.kernel(static_shapes=True)
def integer_addcmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = torch.addcmul(x[tile], y[tile], y[tile], value=3)
    return out


def test_integer_addcmul_as_eager() -> None:
    x = torch.arange(-50, 51, dtype=torch.int32)
    y = torch.arange(101, dtype=torch.int32) % 7 - 3
    got = compile_kernel(integer_addcmul.bind((x, y)), config=helion.Config(block_sizes=[16]))(x, y)
    torch.testing.assert_close(got, torch.addcmul(x, y, y, value=3), rtol=0, atol=0)
