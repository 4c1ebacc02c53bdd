"""The search's CPU seeds (`runtime/seeds.py`): which kernels get them, that Helion's
search takes every one of them, and that each runs right, in bounds, on shapes its blocks
do not divide."""

from __future__ import annotations

from typing import Any

import helion
import helion.language as hl
import pytest
import torch
from helion.autotuner.config_generation import ConfigGeneration

import helion_fx_mlir  # noqa: F401 - registers the backend
from helion_fx_mlir.runtime.jit import compile_kernel
from helion_fx_mlir.runtime.seeds import LOOP_STEPS, MAX_STRIP, STRIP_ROWS, TILE, TILE_STEPS


def column_means(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([n], dtype=x.dtype, device=x.device)
    for tile_n in hl.tile(n):
        total = hl.zeros([tile_n], dtype=torch.float32)
        for tile_m in hl.tile(m):
            total += x[tile_m, tile_n].sum(0)
        out[tile_n] = total / m
    return out


def row_totals(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        total = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n):
            total += x[tile_m, tile_n].sum(1)
        out[tile_m] = total
    return out


def column_peaks(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([n], dtype=x.dtype, device=x.device)
    for j in hl.grid(n):
        peak = hl.full([], float("-inf"), dtype=torch.float32)
        for tile_m in hl.tile(m):
            peak = torch.maximum(peak, x[tile_m, j].amax())
        out[j] = peak
    return out


def scores_times_values(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    m = q.size(0)
    out = torch.empty([m, v.size(1)], dtype=q.dtype, device=q.device)
    for tile_m in hl.tile(m):
        acc = hl.zeros([tile_m, v.size(1)], dtype=torch.float32)
        for tile_n in hl.tile(k.size(0)):
            scores = torch.sigmoid(q[tile_m, :] @ k[tile_n, :].T)
            acc = torch.addmm(acc, scores, v[tile_n, :])
        out[tile_m, :] = acc
    return out


def batched_scores(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty([a.size(0), a.size(1), b.size(2)], dtype=a.dtype, device=a.device)
    for tile_b, tile_m, tile_n in hl.tile([a.size(0), a.size(1), b.size(2)]):
        acc = hl.zeros([tile_b, tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(a.size(2)):
            acc = torch.baddbmm(acc, a[tile_b, tile_m, tile_k], b[tile_b, tile_k, tile_n])
        out[tile_b, tile_m, tile_n] = acc
    return out


def biased_relu_matmul(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    n = w.size(1)
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], w[tile_k, tile_n], acc=acc)
        out[tile_m, tile_n] = torch.relu(acc + bias[tile_n]).to(x.dtype)
    return out


def scaled(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = x[tile] * 3.0
    return out


def _inputs(name: str) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    if name == "scores_times_values":
        return torch.randn(45, 24), torch.randn(300, 24), torch.randn(300, 16)
    return (torch.randn(203, 5000),)


def _eager(name: str, *args: torch.Tensor) -> torch.Tensor:
    x = args[0]
    if name == "column_means":
        return x.mean(0)
    if name == "row_totals":
        return x.sum(1)
    if name == "scaled":
        return x * 3.0
    return torch.sigmoid(x @ args[1].T) @ args[2]


KERNELS = {
    f.__name__: f for f in (column_means, row_totals, column_peaks, scores_times_values, scaled)
}


def _bound(name: str) -> Any:
    kernel = helion.kernel(KERNELS[name], backend="mlir", static_shapes=True)
    return kernel.bind(_inputs(name))


def _seeds(bound: Any) -> list[dict[str, Any]]:
    return [dict(c.config) for c in bound.env.config_spec.compiler_seed_configs]


def test_column_sums_get_one_strip_per_thread_a_few_rows_a_step() -> None:
    width = min(MAX_STRIP, 1 << (5000 // torch.get_num_threads()).bit_length() - 1)
    assert _seeds(_bound("column_means")) == [{"block_sizes": [width, rows]} for rows in STRIP_ROWS]


def test_a_loop_around_dot_products_gets_wide_tiles_and_long_steps_within_its_dim() -> None:
    """45 rows, 300 keys: 32-row tiles (a power of two within each dim, TILE at most) in
    steps of 64 and 128 keys, then the default rows in steps of 128 and 256; no repeats."""
    bound = _bound("scores_times_values")
    rows = bound.config_spec.default_config().config["block_sizes"][0]
    tiles = [[min(TILE, 32), step] for step in TILE_STEPS]
    steps = [[rows, step] for step in LOOP_STEPS]
    expected = list(dict.fromkeys(tuple(blocks) for blocks in tiles + steps))
    assert [tuple(seed["block_sizes"]) for seed in _seeds(bound)] == expected


def test_a_batched_contraction_keeps_its_batch_block() -> None:
    """A bmm's grid over (batch, rows, columns): 64x64 tiles, one batch per program."""
    kernel = helion.kernel(batched_scores, backend="mlir", static_shapes=True)
    bound = kernel.bind((torch.randn(3, 100, 200), torch.randn(3, 200, 90)))
    assert _seeds(bound)[:2] == [{"block_sizes": [1, TILE, TILE, step]} for step in TILE_STEPS]
    args = (torch.randn(3, 100, 200), torch.randn(3, 200, 90))
    for config in bound.env.config_spec.compiler_seed_configs:
        out = compile_kernel(bound, config=config, bounds_checks=True)(*args)
        torch.testing.assert_close(out, torch.bmm(*args), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["row_totals", "column_peaks", "scaled"])
def test_kernels_that_stream_their_rows_already_get_no_seeds(name: str) -> None:
    """row_totals loops along the contiguous dim (a strip there would read a column);
    column_peaks' grid is `hl.grid`, one column per program (no block size to set)."""
    assert _seeds(_bound(name)) == []


@pytest.mark.parametrize("name", ["column_means", "scores_times_values"])
def test_the_search_takes_every_seed_and_each_runs_right_in_bounds(name: str) -> None:
    bound = _bound(name)
    seeds = bound.env.config_spec.compiler_seed_configs
    assert len(ConfigGeneration(bound.config_spec).seed_flat_config_pairs()) == len(seeds) > 0
    args = _inputs(name)
    for config in seeds:
        out = compile_kernel(bound, config=config, bounds_checks=True)(*args)
        torch.testing.assert_close(out, _eager(name, *args), rtol=1e-4, atol=1e-4)


def _matmul_inputs() -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return torch.randn(150, 200), torch.randn(200, 90), torch.randn(90)


def test_without_a_search_a_contraction_runs_its_first_tile_seed_and_matches_eager() -> None:
    """The promoted default: 64x64 tiles in K steps of 64, through Helion's own call path
    (`autotune_effort="none"`) and checked in bounds, on shapes 64 does not divide; the
    same function on the Triton backend keeps Helion's default."""
    kernel = helion.kernel(biased_relu_matmul, backend="mlir", autotune_effort="none")
    args = _matmul_inputs()
    bound = kernel.bind(args)
    assert bound.config_spec.default_config().config["block_sizes"] == [TILE, TILE, TILE_STEPS[0]]
    assert _seeds(bound)[0]["block_sizes"] == [TILE, TILE, TILE_STEPS[0]]
    want = torch.relu(args[0] @ args[1] + args[2])
    torch.testing.assert_close(kernel(*args), want, rtol=1e-4, atol=1e-4)
    checked = compile_kernel(bound, bounds_checks=True)(*args)
    torch.testing.assert_close(checked, want, rtol=1e-4, atol=1e-4)
    triton = helion.kernel(biased_relu_matmul, static_shapes=True).bind(args)
    assert triton.config_spec.default_config().config["block_sizes"] == [16, 16, 16]


def test_column_strips_stay_seeds_and_the_default_stays_helions() -> None:
    """Their width depends on the thread count: a default config's MLIR would differ
    between machines."""
    bound = _bound("column_means")
    assert _seeds(bound)
    assert bound.config_spec.default_config() == bound.config_spec.autotune_reference_config()
