"""Arithmetic with a number operand as eager computes it (`number_operand` in
`rules/aten.py`): an f16/bf16 tensor multiplied or divided by a number in f32 with the
number unrounded, then rounded once (`x * 1e6` in f16 was nan at 0 and inf at 1e-3, where
eager gives 0 and 1000.5), added to or subtracted from the number rounded to its dtype, and
a number before the tensor (`s - x`, `s / x`) from a kernel argument or a literal, and tiles
filled with a number argument (`torch.full_like(t, s)`, `hl.full`). Bit for
bit against eager, on a length the blocks do not divide, under two configs."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel

CONFIGS = [helion.Config(block_sizes=[64]), helion.Config(block_sizes=[8])]


@helion.kernel(static_shapes=True)
def with_number(x: torch.Tensor, s: float) -> tuple[torch.Tensor, ...]:
    """Each side of each operator, the number a kernel argument."""
    outs = [torch.empty_like(x) for _ in range(8)]
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        outs[0][tile] = v * s
        outs[1][tile] = s * v
        outs[2][tile] = v / s
        outs[3][tile] = s / v
        outs[4][tile] = v + s
        outs[5][tile] = s + v
        outs[6][tile] = v - s
        outs[7][tile] = s - v
    return tuple(outs)


def with_number_eager(x: torch.Tensor, s: float) -> tuple[torch.Tensor, ...]:
    return (x * s, s * x, x / s, s / x, x + s, s + x, x - s, s - x)


@helion.kernel(static_shapes=True)
def with_literals(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Literal numbers: one out of f16's range, one not exact in either half type."""
    big, third, tenth = (torch.empty_like(x) for _ in range(3))
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        big[tile] = v * 1e6
        third[tile] = v / 3.0 + 1.0 / 3.0
        tenth[tile] = 0.1 - v * 0.1
    return big, third, tenth


def with_literals_eager(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (x * 1e6, x / 3.0 + 1.0 / 3.0, 0.1 - x * 0.1)


def _inputs(dtype: torch.dtype) -> torch.Tensor:
    x = torch.randn(1001, generator=torch.Generator().manual_seed(0)) * 3
    x[:4] = torch.tensor([0.0, -0.0, 1e-3, 1e-5])
    return x.to(dtype)


def _check_bits(got: tuple[torch.Tensor, ...], want: tuple[torch.Tensor, ...]) -> None:
    for i, (out, expected) in enumerate(zip(got, want, strict=True)):
        assert torch.equal(out, expected), f"output {i}: {(out != expected).sum()} lanes differ"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("s", [0.1, 1e6, 1 / 3])
def test_a_number_argument_as_eager(dtype: torch.dtype, s: float) -> None:
    x = _inputs(dtype)
    bound = with_number.bind((x, s))
    for config in CONFIGS:
        _check_bits(compile_kernel(bound, config=config)(x, s), with_number_eager(x, s))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
def test_literal_numbers_as_eager(dtype: torch.dtype) -> None:
    x = _inputs(dtype)
    bound = with_literals.bind((x,))
    for config in CONFIGS:
        _check_bits(compile_kernel(bound, config=config)(x), with_literals_eager(x))


@helion.kernel(static_shapes=True)
def filled_with(x: torch.Tensor, s: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Tiles filled with a number argument: `torch.full_like` and `hl.full`."""
    floor, shifted = torch.empty_like(x), torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        floor[tile] = torch.maximum(v, torch.full_like(v, s))
        shifted[tile] = v + hl.full([tile], s, dtype=x.dtype)
    return floor, shifted


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_a_fill_of_a_number_argument_as_eager(dtype: torch.dtype) -> None:
    """A fill value known only at run time (it raised an internal error): rounded to the
    tile's dtype as eager fills."""
    x, s = _inputs(dtype), 1 / 3
    expected = (torch.maximum(x, torch.full_like(x, s)), x + torch.full_like(x, s))
    bound = filled_with.bind((x, s))
    for config in CONFIGS:
        _check_bits(compile_kernel(bound, config=config)(x, s), expected)


@helion.kernel(static_shapes=True)
def compared_with(x: torch.Tensor, s: float) -> tuple[torch.Tensor, ...]:
    """Each comparison with a number argument, and with a literal."""
    outs = [torch.empty_like(x, dtype=torch.bool) for _ in range(8)]
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        outs[0][tile] = v < s
        outs[1][tile] = v <= s
        outs[2][tile] = v > s
        outs[3][tile] = v >= s
        outs[4][tile] = v == s
        outs[5][tile] = v != s
        outs[6][tile] = v == 0.1
        outs[7][tile] = s > v
    return tuple(outs)


def compared_with_eager(x: torch.Tensor, s: float) -> tuple[torch.Tensor, ...]:
    return (x < s, x <= s, x > s, x >= s, x == s, x != s, x == 0.1, s > x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("s", [0.1, 1 / 3, 1e30])
def test_a_comparison_with_a_number_as_eager(dtype: torch.dtype, s: float) -> None:
    """Eager compares in the tensor's dtype, the number rounded to it: `x == 0.1` holds
    where x is 0.1 rounded (it was false, in f32 too), and `x == 1e30` at f16's inf."""
    x = _inputs(dtype)
    x[4:7] = torch.tensor([s, 0.1, float("nan")]).to(dtype)
    bound = compared_with.bind((x, s))
    for config in CONFIGS:
        _check_bits(compile_kernel(bound, config=config)(x, s), compared_with_eager(x, s))


@helion.kernel(static_shapes=True)
def compared_with_ints(x: torch.Tensor, n: int) -> tuple[torch.Tensor, ...]:
    """Integer and bool tiles compared with numbers outside their range and with floats."""
    outs = [torch.empty_like(x, dtype=torch.bool) for _ in range(6)]
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        outs[0][tile] = v <= 300
        outs[1][tile] = v > -1
        outs[2][tile] = v == n
        outs[3][tile] = v >= n
        outs[4][tile] = v < 2.5
        outs[5][tile] = v != 3000000000
    return tuple(outs)


def compared_with_ints_eager(x: torch.Tensor, n: int) -> tuple[torch.Tensor, ...]:
    return (x <= 300, x > -1, x == n, x >= n, x < 2.5, x != 3000000000)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int32, torch.bool], ids=str)
@pytest.mark.parametrize("n", [-1, 300])
def test_an_integer_comparison_with_a_number_as_eager(dtype: torch.dtype, n: int) -> None:
    """Eager compares in the common dtype with the number converted to it: a bool tile
    with an int in int64 (`b > -1` was false), an int tile with an int out of its range
    wrapped (`int8 <= 300` is `<= 44`; ours compared unwrapped)."""
    x = torch.randint(-128, 128, (1001,), generator=torch.Generator().manual_seed(0))
    x = (x % 2 if dtype == torch.bool else x % 256 if dtype == torch.uint8 else x).to(dtype)
    bound = compared_with_ints.bind((x, n))
    for config in CONFIGS:
        _check_bits(compile_kernel(bound, config=config)(x, n), compared_with_ints_eager(x, n))


@helion.kernel(static_shapes=True)
def divided_by_ints(x: torch.Tensor, n: int) -> tuple[torch.Tensor, ...]:
    """Integer tiles floor-divided by an int argument, negated, and it by them."""
    outs = [torch.empty_like(x) for _ in range(4)]
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        outs[0][tile] = v // n
        outs[1][tile] = v // (-n)
        outs[2][tile] = n // (v.abs() + 1)
        outs[3][tile] = v % n - n
    return tuple(outs)


def divided_by_ints_eager(x: torch.Tensor, n: int) -> tuple[torch.Tensor, ...]:
    return (x // n, x // (-n), n // (x.abs() + 1), x % n - n)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("n", [-7, 3])
def test_an_integer_division_by_an_int_argument_as_eager(dtype: torch.dtype, n: int) -> None:
    """`v // n` of an int32/int64 tile raised an MLIR error (the int reached
    `div.Tensor_mode` as a scalar where it takes two tensors), and `-n` had no rule."""
    x = torch.randint(-100, 100, (1001,), generator=torch.Generator().manual_seed(0)).to(dtype)
    bound = divided_by_ints.bind((x, n))
    for config in CONFIGS:
        _check_bits(compile_kernel(bound, config=config)(x, n), divided_by_ints_eager(x, n))
