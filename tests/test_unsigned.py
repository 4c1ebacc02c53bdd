"""uint8 operands of ATen ops are read unsigned, as eager reads them (`IRVisitor.
_unsigned_widened`: extended to int32 first). torch-mlir extends ui8 with extsi/sitofp and
divides, compares and takes abs signed: a uint8 row of values >= 128 summed negative,
`u8 * f32` read 200 as -56, `u8 % 3` and `abs(u8)` were wrong in half the lanes."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel

CONFIGS = [helion.Config(block_sizes=[8]), helion.Config(block_sizes=[16])]


@helion.kernel(static_shapes=True)
def unsigned_ops(
    x: torch.Tensor, y: torch.Tensor, z: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = x.size()
    sums = torch.empty([m], dtype=torch.int64, device=x.device)
    floats = torch.empty([m, n], dtype=torch.float32, device=x.device)
    ints = torch.empty([m, n], dtype=torch.int32, device=x.device)
    bytes_ = torch.empty([m, n], dtype=torch.uint8, device=x.device)
    for tile in hl.tile(m):
        a, b, c = x[tile, :], y[tile, :], z[tile, :]
        sums[tile] = a.sum(-1) + (a % 3 + 1).prod(-1)
        floats[tile, :] = a * c + a / b
        ints[tile, :] = torch.where(a < b, torch.floor_divide(a, b), b) + torch.abs(a)
        bytes_[tile, :] = (a >> 1) + torch.maximum(a, a.amax(-1, keepdim=True) // 2) - a * a
    return sums, floats, ints, bytes_


def eager(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (
        x.sum(-1) + (x % 3 + 1).prod(-1),
        x * z + x / y,
        torch.where(x < y, torch.floor_divide(x, y), y) + torch.abs(x),
        (x >> 1) + torch.maximum(x, x.amax(-1, keepdim=True) // 2) - x * x,
    )


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_uint8_values_read_unsigned_as_eager(config: helion.Config) -> None:
    generator = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (37, 45), generator=generator).to(torch.uint8)
    y = torch.randint(1, 300, (37, 45), generator=generator).to(torch.int32)
    z = torch.randn(37, 45, generator=generator)
    got = compile_kernel(unsigned_ops.bind((x, y, z)), config=config)(x, y, z)
    for k, (out, want) in enumerate(zip(got, eager(x, y, z), strict=True)):
        assert out.dtype == want.dtype, (k, out.dtype, want.dtype)
        torch.testing.assert_close(out, want, rtol=1e-6, atol=0, msg=f"output {k}")
