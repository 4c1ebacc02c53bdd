"""NaN by PyTorch's rules (`rules/aten.py`): clamp and its forms, maximum and minimum let a NaN
through from either side, and argmax, argmin, max.dim and min.dim point at a row's first
NaN; `x == x` is false on NaN (torch-mlir folds it to true) and `1 / 0` is inf (torch-mlir's
reciprocal asserts, aborting the process); a float out of int8's range converts as PyTorch's
does (through int32, 300.0 -> 44), not saturated. torch-mlir's lowerings took the bound or
skipped the NaN: wrong numbers without a word. Rows with NaN and infinities at every
position, on shapes the blocks do not divide, under two configs, in f32, f16 and bf16,
against eager (NaN where eager has NaN)."""

from __future__ import annotations

from collections.abc import Callable

import helion
import helion.language as hl
import pytest
import torch
import torch.nn.functional as F

from helion_fx_mlir import compile_kernel


@helion.kernel(static_shapes=True)
def bounds(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Every form of bound on row blocks, in f32."""
    outs = [torch.empty(x.shape, dtype=torch.float32) for _ in range(9)]
    for tile_m in hl.tile(x.size(0)):
        a, b = x[tile_m, :].float(), y[tile_m, :].float()
        outs[0][tile_m, :] = torch.clamp(a, -1.5, 2.0)
        outs[1][tile_m, :] = a.clamp(min=0.25)
        outs[2][tile_m, :] = a.clamp_max(1.0)
        outs[3][tile_m, :] = torch.clamp(a, 1.0, -1.0)
        outs[4][tile_m, :] = torch.clamp(a, b - 1.0, b + 1.0)
        outs[5][tile_m, :] = torch.maximum(a, b)
        outs[6][tile_m, :] = torch.minimum(b, a)
        outs[7][tile_m, :] = F.hardtanh(a, -0.5, 0.5)
        outs[8][tile_m, :] = F.relu6(a * 4.0)
    return tuple(outs)


def bounds_eager(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    a, b = x.float(), y.float()
    return (
        torch.clamp(a, -1.5, 2.0),
        a.clamp(min=0.25),
        a.clamp_max(1.0),
        torch.clamp(a, 1.0, -1.0),
        torch.clamp(a, b - 1.0, b + 1.0),
        torch.maximum(a, b),
        torch.minimum(b, a),
        F.hardtanh(a, -0.5, 0.5),
        F.relu6(a * 4.0),
    )


@helion.kernel(static_shapes=True)
def row_indices(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """argmax, argmin, and max.dim / min.dim (their indices and values) of each row."""
    m = x.size(0)
    arg_max, arg_min = torch.empty([m], dtype=torch.int64), torch.empty([m], dtype=torch.int64)
    max_at, min_at = torch.empty([m], dtype=torch.int64), torch.empty([m], dtype=torch.int64)
    maxima, minima = torch.empty([m], dtype=x.dtype), torch.empty([m], dtype=x.dtype)
    for tile_m in hl.tile(m):
        row = x[tile_m, :]
        arg_max[tile_m] = row.argmax(-1)
        arg_min[tile_m] = torch.argmin(row, dim=1)
        top = row.max(-1)
        bottom = torch.min(row, dim=-1)
        max_at[tile_m], maxima[tile_m] = top.indices, top.values
        min_at[tile_m], minima[tile_m] = bottom.indices, bottom.values
    return arg_max, arg_min, max_at, min_at, maxima, minima


def row_indices_eager(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    top, bottom = x.max(-1), x.min(-1)
    return x.argmax(-1), x.argmin(-1), top.indices, bottom.indices, top.values, bottom.values


@helion.kernel(static_shapes=True)
def value_checks(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Self-comparison and the tests built on it (isfinite, isclose), and reciprocals of
    rows with zeros."""
    outs = [torch.empty(x.shape, dtype=torch.float32) for _ in range(6)]
    for tile_m in hl.tile(x.size(0)):
        a, b = x[tile_m, :], y[tile_m, :]
        outs[0][tile_m, :] = (a == a).float()  # noqa: PLR0124
        outs[1][tile_m, :] = torch.isfinite(a).float()
        outs[2][tile_m, :] = torch.isclose(a, a + b * 1e-9).float()
        outs[3][tile_m, :] = (a == b).float()
        outs[4][tile_m, :] = (1.0 / a).float()
        outs[5][tile_m, :] = torch.reciprocal(b).float() * 2.0
    return tuple(outs)


def value_checks_eager(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (
        (x == x).float(),  # noqa: PLR0124
        torch.isfinite(x).float(),
        torch.isclose(x, x + y * 1e-9).float(),
        (x == y).float(),
        (1.0 / x).float(),
        torch.reciprocal(y).float() * 2.0,
    )


def _inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """37 rows of 23: NaN in a different column of most rows (two in some), infinities of
    both signs, the rest random; y with NaN in other places."""
    torch.manual_seed(0)
    x, y = torch.randn(37, 23) * 3, torch.randn(37, 23)
    for row in range(0, 37, 2):
        x[row, row % 23] = float("nan")
    x[5, 20] = x[7, 0] = float("nan")
    x[::3, 4] = float("inf")
    x[1::3, 9] = -float("inf")
    y[::4, 6] = float("nan")
    return x.to(dtype), y.to(dtype)


DTYPES = [torch.float32, torch.float16, torch.bfloat16]
CONFIGS = [helion.Config(block_sizes=[8]), helion.Config(block_sizes=[1])]


def _check(
    kernel: helion.Kernel, eager: Callable[..., tuple[torch.Tensor, ...]], *args: torch.Tensor
) -> None:
    bound = kernel.bind(args)
    expected = eager(*args)
    for config in CONFIGS:
        got = compile_kernel(bound, config=config)(*args)
        for out, want in zip(got, expected, strict=True):
            torch.testing.assert_close(out, want, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_bounds_let_nan_through(dtype: torch.dtype) -> None:
    _check(bounds, bounds_eager, *_inputs(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_reductions_point_at_the_first_nan(dtype: torch.dtype) -> None:
    _check(row_indices, row_indices_eager, _inputs(dtype)[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_self_comparisons_and_reciprocals_of_zero(dtype: torch.dtype) -> None:
    x, y = _inputs(dtype)
    x[2, :5] = y[3, 7:] = 0.0
    y[4, 3], y[4, 4] = x[4, 3], -0.0
    _check(value_checks, value_checks_eager, x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_floats_out_of_range_convert_to_narrow_ints_as_pytorch(dtype: torch.dtype) -> None:
    def narrow(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        signed = torch.empty(x.shape, dtype=torch.int8)
        unsigned = torch.empty(x.shape, dtype=torch.uint8)
        short = torch.empty(x.shape, dtype=torch.int16)
        for tile_m in hl.tile(x.size(0)):
            v = x[tile_m, :] * 100.0
            signed[tile_m, :] = v.to(torch.int8) * 3
            unsigned[tile_m, :] = v.to(torch.uint8)
            short[tile_m, :] = (v * 300.0).to(torch.int16)
        return signed, unsigned, short

    x = (torch.randn(37, 23, generator=torch.Generator().manual_seed(0)) * 3).to(dtype)
    v = x * 100.0
    expected = (v.to(torch.int8) * 3, v.to(torch.uint8), (v * 300.0).to(torch.int16))
    _check(helion.kernel(narrow, static_shapes=True), lambda _: expected, x)


@helion.kernel(static_shapes=True)
def floor_quotients(x: torch.Tensor, y: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """`//` by a number, a tile and a row's divisor, and square roots as powers."""
    by_two, by_y, by_row, roots = (torch.empty_like(x) for _ in range(4))
    for tile_m in hl.tile(x.size(0)):
        v, w = x[tile_m, :], y[tile_m, :]
        by_two[tile_m, :] = v // 2.0
        by_y[tile_m, :] = torch.floor_divide(v, w)
        by_row[tile_m, :] = v // r[tile_m, None]
        roots[tile_m, :] = v**0.5 + torch.abs(w) ** -0.5
    return by_two, by_y, by_row, roots


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_floor_division_and_roots_at_infinities_as_eager(dtype: torch.dtype) -> None:
    """inf // 2 is nan and -7.5 // inf is -1 (Python's rule, which eager follows: floor(a /
    b) gave inf and nan); x ** 0.5 of -inf is nan (eager's sqrt; C's pow gives inf)."""
    x, y = (t.float() for t in _inputs(torch.float32))
    specials = torch.tensor([0.0, -0.0, 1e30, -1e30, 3.0, -3.0, 7.5, -7.5, float("inf")])
    x[3, :9], y[5, :9], y[6, :9] = specials, specials, -specials
    r = torch.randn(37, generator=torch.Generator().manual_seed(1))
    r[2], r[3], r[4] = 0.0, float("inf"), -2.0
    x, y, r = x.to(dtype), y.to(dtype), r.to(dtype)
    _check(
        floor_quotients,
        lambda x, y, r: (
            x // 2.0,
            torch.floor_divide(x, y),
            x // r[:, None],
            x**0.5 + y.abs() ** -0.5,
        ),
        x,
        y,
        r,
    )


@helion.kernel(static_shapes=True)
def remainders(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """fmod by a tile, by numbers (one not exact in bf16, one infinite), and remainder."""
    by_y, by_tenth, by_inf, rem = (torch.empty_like(x) for _ in range(4))
    for tile_m in hl.tile(x.size(0)):
        v, w = x[tile_m, :], y[tile_m, :]
        by_y[tile_m, :] = torch.fmod(v, w)
        by_tenth[tile_m, :] = torch.fmod(v, 0.1)
        by_inf[tile_m, :] = torch.fmod(v, float("inf"))
        rem[tile_m, :] = torch.remainder(v, w)
    return by_y, by_tenth, by_inf, rem


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fmod_is_exact_as_eager(dtype: torch.dtype) -> None:
    """fmod is C's (exact, a's sign): torch-mlir's `a - b * trunc(a / b)` gave nan for an
    infinite b (eager: a), 0 for 16777217 fmod 0.1 (eager: 0.05) and +0 for -1e30 fmod 3;
    the sign of each zero is checked too. A number divisor is rounded to the tensor's dtype
    first, as eager's (0.1 in bf16 is 0.10009765625)."""
    x, y = _inputs(torch.float32)
    specials = torch.tensor([0.0, -0.0, 1e30, -1e30, 16777217.0, -5.5, 7.0, 3.0, 2.0])
    divisors = torch.tensor([3.0, 3.0, 3.0, 3.0, 0.1, 2.0, float("inf"), -float("inf"), 0.0])
    x[3, :9], y[3, :9] = specials, divisors
    x, y = x.to(dtype), y.to(dtype)
    expected = (
        torch.fmod(x, y),
        torch.fmod(x, 0.1),
        torch.fmod(x, float("inf")),
        torch.remainder(x, y),
    )
    _check(remainders, lambda x, y: expected, x, y)
    got = compile_kernel(remainders.bind((x, y)), config=CONFIGS[0])(x, y)
    for out, want in zip(got, expected, strict=True):
        numbers = ~torch.isnan(want)
        assert torch.equal(torch.signbit(out[numbers]), torch.signbit(want[numbers]))


def test_integer_clamps_and_maxima_are_unchanged() -> None:
    def ints(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for tile_m in hl.tile(x.size(0)):
            out[tile_m, :] = torch.maximum(torch.clamp(x[tile_m, :], -3, 40), y[tile_m, :])
        return out

    x = torch.randint(-100, 100, (19, 13), dtype=torch.int32)
    y = torch.randint(-5, 5, (19, 13), dtype=torch.int32)
    kernel = helion.kernel(ints, static_shapes=True)
    got = compile_kernel(kernel.bind((x, y)), config=helion.Config(block_sizes=[4]))(x, y)
    torch.testing.assert_close(got, torch.maximum(torch.clamp(x, -3, 40), y))


def test_argmax_without_a_dim_points_at_the_first_nan() -> None:
    """No dim: the index into the whole (here 1-D) tensor."""

    def flat(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty([1], dtype=torch.int64)
        for _ in hl.grid(1):
            out[0] = torch.argmax(x[:])
        return out

    x = torch.randn(45)
    x[31] = x[40] = float("nan")
    got = compile_kernel(helion.kernel(flat, static_shapes=True).bind((x,)))(x)
    assert got.item() == torch.argmax(x).item() == 31


@helion.kernel(static_shapes=True)
def row_extremes(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    top = torch.empty([x.size(0)], dtype=x.dtype, device=x.device)
    bottom = torch.empty([x.size(0)], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(x.size(0)):
        top[tile_m] = torch.amax(x[tile_m, :], -1)
        bottom[tile_m] = torch.amin(x[tile_m, :], -1)
    return top, bottom


@pytest.mark.parametrize("width", [100, 300])
def test_wide_row_maxima_keep_a_nan_from_any_chunk(width: int) -> None:
    """Rows of several 64-lane chunks and a partial one, a NaN in a different place in each
    (the loop's chunks carry it in the accumulator to the end), one row without."""
    x = torch.randn(width // 7 + 2, width)
    for row, at in enumerate(range(0, width, 7)):
        x[row, at] = float("nan")
    for config in CONFIGS:
        got = compile_kernel(row_extremes.bind((x,)), config=config)(x)
        for out, want in zip(got, (x.amax(-1), x.amin(-1)), strict=True):
            torch.testing.assert_close(out, want, equal_nan=True)
