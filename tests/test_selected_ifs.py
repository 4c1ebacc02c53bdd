"""Ifs on scalars inside tiles (`helion-select-elementwise-ifs`): branches that compute the
tile lane by lane run both and select per lane, fused with the load and store around them;
a branch that reads memory, divides integers or reduces keeps its if. Each kernel runs
against Helion's reference mode with the condition each way, at shapes the blocks do not
divide, under two configs, and bounds-checked."""

from __future__ import annotations

from typing import Any

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply
from helion_fx_mlir.tools.eager_reference import eager_reference


@helion.kernel(static_shapes=True)
def gated_affine(x: torch.Tensor, scale: int, shift: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n]
        if scale > 0:
            v = v * 3.0
            if shift > 0:
                v = torch.sigmoid(v) + 1.0
        else:
            v = -v
        out[tile_m, tile_n] = v
    return out


@helion.kernel(static_shapes=True)
def gated_bias(x: torch.Tensor, bias: torch.Tensor, use_bias: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        v = x[tile_m, tile_n]
        if use_bias != 0:
            v = v + bias[tile_n][None, :]
        out[tile_m, tile_n] = v
    return out


@helion.kernel(static_shapes=True)
def guarded_remainder(x: torch.Tensor, divisor: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        if divisor != 0:
            v = v % divisor + v // divisor
        out[tile] = v
    return out


@helion.kernel(static_shapes=True)
def gated_centering(x: torch.Tensor, center: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m in hl.tile(x.size(0)):
        v = x[tile_m, :]
        if center > 0:
            v = v - torch.mean(v, dim=-1, keepdim=True)
        out[tile_m, :] = v
    return out


def _x(*shape: int) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(*shape)


def _case(kernel: Any, args: tuple[Any, ...], blocks: list[int]) -> Any:
    scalars = "-".join(str(a) for a in args if not isinstance(a, torch.Tensor))
    name = f"{kernel.fn.__name__}-{scalars}-{'x'.join(map(str, blocks))}"
    return pytest.param(kernel, args, helion.Config(block_sizes=blocks), id=name)


CASES = [
    *(
        _case(gated_affine, (_x(77, 130), scale, shift), blocks)
        for scale, shift in [(1, 1), (1, 0), (0, 1)]
        for blocks in ([32, 32], [8, 64])
    ),
    *(_case(gated_bias, (_x(77, 130), _x(130), use), [16, 32]) for use in (0, 1)),
    *(
        _case(guarded_remainder, (torch.arange(-50, 51, dtype=torch.int32), d), blocks)
        for d in (0, 3, -7)
        for blocks in ([16], [64])
    ),
    *(_case(gated_centering, (_x(37, 100), center), [8]) for center in (0, 1)),
]


@pytest.mark.parametrize("bounds_checks", [False, True])
@pytest.mark.parametrize(("kernel", "args", "config"), CASES)
def test_matches_reference_mode(
    kernel: Any, args: tuple[Any, ...], config: helion.Config, bounds_checks: bool
) -> None:
    compiled = compile_kernel(kernel.bind(args), config=config, bounds_checks=bounds_checks)
    torch.testing.assert_close(compiled(*args), eager_reference(kernel)(*args))


def _after_pass(kernel: Any, args: tuple[Any, ...], config: helion.Config) -> str:
    text = generate_mlir(kernel.bind(args), config=config)
    return str(apply(parse_module(text), LLVM[: LLVM.index("helion-select-elementwise-ifs") + 1]))


def test_lane_wise_branches_become_selects() -> None:
    """Both ifs (the nested one first) go; the tile's ops are one generic after fusion."""
    args = (_x(64, 64), 1, 1)
    after = _after_pass(gated_affine, args, helion.Config(block_sizes=[32, 32]))
    assert "scf.if" not in after and after.count("arith.select") == 2


@pytest.mark.parametrize(
    ("kernel", "args"),
    [
        (gated_bias, (_x(64, 64), _x(64), 1)),
        (guarded_remainder, (torch.arange(64, dtype=torch.int32), 0)),
        (gated_centering, (_x(8, 64), 1)),
    ],
    ids=["reads-bias", "integer-division", "reduction"],
)
def test_branches_that_read_divide_or_reduce_keep_their_if(
    kernel: Any, args: tuple[Any, ...]
) -> None:
    blocks = [8] if kernel is gated_centering else [16] * args[0].dim()
    assert "scf.if" in _after_pass(kernel, args, helion.Config(block_sizes=blocks))
