"""Every sample kernel, run through compile_kernel, matches eager PyTorch."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from cases import CASES
from helion_fx_mlir import compile_kernel
from helion_fx_mlir.examples import EXAMPLES


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_matches_eager(name: str, dtype: torch.dtype) -> None:
    """Each kernel's first dtype runs with every memory access checked (an out-of-bounds
    one aborts the worker, which pytest-xdist reports as this test failing)."""
    example = EXAMPLES[name]
    args = example.args(dtype)
    got = compile_kernel(example.kernel.bind(args), bounds_checks=dtype == example.dtypes[0])(*args)
    torch.testing.assert_close(got, example.reference(*args))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_fast_pipeline_matches_eager(name: str) -> None:
    """What users run: the fast pipeline (vectorized, multi-threaded grid) with the
    kernel's default config, on its first dtype; its inputs left as eager leaves them."""
    example = EXAMPLES[name]
    args = example.args()
    eager_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    got = compile_kernel(example.kernel.bind(args))(*args)
    torch.testing.assert_close(got, example.reference(*eager_args))
    for ours, eager in zip(args, eager_args):
        if isinstance(ours, torch.Tensor):
            torch.testing.assert_close(ours, eager, equal_nan=True)


CONFIG_CASES = [
    pytest.param(name, config, id=f"{name}-{i}")
    for name, example in EXAMPLES.items()
    for i, config in enumerate(example.configs)
]


@pytest.mark.parametrize(("name", "config"), CONFIG_CASES)
def test_other_configs_give_the_same_numbers(name: str, config: helion.Config) -> None:
    example = EXAMPLES[name]
    args = example.args()
    got = compile_kernel(example.kernel.bind(args), config=config)(*args)
    torch.testing.assert_close(got, example.reference(*args))


def test_new_argument_shapes_bind_and_compile_again() -> None:
    example = EXAMPLES["add"]
    compiled = compile_kernel(example.bind())
    x, y = torch.randn(5, 77), torch.randn(5, 77)
    torch.testing.assert_close(compiled(x, y), x + y)
    assert len(compiled._hosts) == 2  # one bound kernel per static shape


def test_engines_are_cached_per_signature() -> None:
    example = EXAMPLES["sum_rows"]
    compiled = compile_kernel(example.bind())
    host = compiled.host_for(example.args())
    compiled(*example.args())
    assert compiled.host_for(example.args()) is host


def test_non_contiguous_inputs() -> None:
    example = EXAMPLES["add"]
    x, y = torch.randn(50, 37).t(), torch.randn(37, 50)
    compiled = compile_kernel(example.kernel.bind((x, y)))
    torch.testing.assert_close(compiled(x, y), x + y)


def test_fp8_e4m3fn_loads_convert_every_bit_pattern_exactly() -> None:
    from helion_fx_mlir.examples.elementwise import cast_to_f32

    x = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn)
    got, want = compile_kernel(cast_to_f32.bind((x,)))(x), x.float()
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    finite = ~want.isnan()
    assert torch.equal(torch.signbit(got[finite]), torch.signbit(want[finite]))  # -0.0 stays -0.0


def test_fp8_e4m3fn_stores_round_every_pattern_like_pytorch() -> None:
    """Every f32 whose low 16 bits are zero (all exponents, ties), random bit patterns
    (sticky bits), +-inf and NaN: the fp8 bits match PyTorch's conversion exactly."""
    from helion_fx_mlir.examples.elementwise import quantize_fp8

    torch.manual_seed(0)
    high = torch.arange(1 << 16, dtype=torch.int32) << 16
    bits = torch.cat(
        [high, torch.randint(-(1 << 31), (1 << 31) - 1, (1 << 16,), dtype=torch.int32)]
    )
    x = bits.view(torch.float32).reshape(512, 256)
    got = compile_kernel(quantize_fp8.bind((x, 1.0)))(x, 1.0)
    assert torch.equal(got.view(torch.uint8), x.to(torch.float8_e4m3fn).view(torch.uint8))


def test_signbit_reads_the_bit_of_zeros_infinities_and_nans() -> None:
    from helion_fx_mlir.examples.coverage_ops import sign_ops

    y = torch.tensor(
        [-0.0, 0.0, float("inf"), float("-inf"), float("nan"), -float("nan"), -1e-40, 1e-40]
    )
    x = torch.full_like(y, 2.0)
    got = compile_kernel(sign_ops.bind((x, y)))(x, y)
    want = torch.copysign(x, y) + torch.signbit(y).to(x.dtype) + torch.copysign(x, -1.0)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_topk_ties_and_extremes_follow_a_stable_sort() -> None:
    """Eager topk orders ties unspecified; ours takes the lower index first, as a stable
    sort does, also when the data holds the fill value (-inf, the int type's max)."""
    from helion_fx_mlir.examples.coverage_ops import column_bottomk, router_topk

    logits = torch.tensor(
        [[1.0, 3.0, 3.0, float("-inf"), 3.0, float("-inf")]] * 3 + [[float("-inf")] * 5 + [0.0]]
    )
    weights, experts = compile_kernel(router_topk.bind((logits, 4)))(logits, 4)
    order = torch.sort(logits, dim=-1, descending=True, stable=True)
    torch.testing.assert_close(experts, order.indices[:, :4])
    torch.testing.assert_close(weights, torch.softmax(order.values[:, :4], dim=-1))

    x = torch.randint(-3, 3, (37, 5), dtype=torch.int32)
    x[:, 0] = torch.iinfo(torch.int32).max
    values, rows = compile_kernel(column_bottomk.bind((x,)))(x)
    low = torch.sort(x, dim=0, stable=True)
    torch.testing.assert_close((values, rows), (low.values[:3], low.indices[:3]))


@helion.kernel(static_shapes=True)
def _rotated_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = x.size(0)
    for tile in hl.tile(n):
        out[tile] = x[(tile.index + 1) % n]
    return out


def test_a_result_is_written_into_the_callers_tensor_only_when_no_input_shares_it() -> None:
    """One program: the result is a fresh tile, not the `out` argument. It goes straight
    into the caller's tensor, unless that tensor is also an input (here x itself)."""
    x = torch.arange(16.0)
    config = helion.Config(block_sizes=[16])
    out = torch.empty(16)
    compiled = compile_kernel(_rotated_into.bind((x, out)), config=config)
    torch.testing.assert_close(compiled(x, out), x.roll(-1))
    torch.testing.assert_close(out, x.roll(-1))
    aliased = torch.arange(16.0)
    compiled(aliased, aliased)  # out is x: the result goes to a fresh buffer, then into x
    torch.testing.assert_close(aliased, torch.arange(16.0).roll(-1))


@helion.kernel(static_shapes=True, config=helion.Config(block_sizes=[8, 16]))
def noisy_gate(x: torch.Tensor) -> torch.Tensor:
    """Keeps x where a uniform draw is below 0.5: the seeds come from torch's generator."""
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        keep = torch.rand_like(x[tm, tn]) < 0.5
        out[tm, tn] = torch.where(keep, x[tm, tn], 0.0)
    return out


def test_random_ops_draw_their_seeds_like_reference_mode() -> None:
    """The host draws the seed buffer from torch's generator at each launch, as Helion's
    host code and reference mode do: the same manual seed gives reference mode's draws."""
    from helion_fx_mlir.tools.fuzz.differential import reference_kernel

    x = torch.randn(37, 53)
    compiled = compile_kernel(noisy_gate.bind((x,)))
    torch.manual_seed(7)
    ours = compiled(x)
    torch.manual_seed(7)
    want = reference_kernel(noisy_gate, helion.Config(block_sizes=[8, 16]))(x)
    torch.testing.assert_close(ours, want)
    assert 0.3 < (ours != 0).float().mean() < 0.7
    assert not torch.equal(compiled(x), ours)  # the next call draws new seeds


def test_static_slices_past_a_short_dim_are_empty() -> None:
    """`out[t, 3:]` over a dim of 1 to 4 columns selects what Python's slice does (nothing
    at first): it was a negative size, which MLIR refused to parse."""
    from helion_fx_mlir.examples.semantics import _overwrite_ref, overwrite_last_column

    for n in (1, 2, 3, 4):
        x = torch.randn(5, n)
        got = compile_kernel(overwrite_last_column.bind((x,)), bounds_checks=True)(x)
        torch.testing.assert_close(got, _overwrite_ref(x))
