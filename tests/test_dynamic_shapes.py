"""Kernels with `static_shapes=False`: one bound kernel serves every size Helion does not
specialize on, so code compiled at one call's sizes runs at another's. A dim reduced whole
(a row of `x[tile, :]`) is as long as the call's own: Helion's config sizes it at bind time
(a bind at 100 columns gave 128 lanes, and rows of 203 lost 75 elements, silently).

Each sample kernel with dynamic shapes is compiled at its own inputs and called at other
shapes (longer and shorter than the first one's power of two, odd, blocks that do not
divide them), under each of its configs, on the fast pipeline and with every access
checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, lower_to_llvm
from helion_fx_mlir.examples import EXAMPLES


def _matrices(*shapes: tuple[int, ...]) -> Callable[[torch.Generator], tuple[Any, ...]]:
    return lambda generator: tuple(torch.randn(*shape, generator=generator) for shape in shapes)


def _attention(batch: int, heads: int, m: int, n: int) -> Callable[[torch.Generator], Any]:
    """Head dim 64: Helion cannot trace attention_dynamic at another (TorchOpTracingError,
    "expand: attempting to expand a dimension of length s3 -> u2")."""
    return _matrices((batch, heads, m, 64), (batch, heads, n, 64), (batch, heads, n, 64))


# Per kernel, inputs at other shapes: their rows 203, 300, 33 (bound at 100: 128 lanes).
OTHER_SHAPES = {
    "dynamic_row_rms": [_matrices((21, 203)), _matrices((50, 300)), _matrices((9, 33))],
    "dynamic_column_peaks": [_matrices((203, 21)), _matrices((300, 50)), _matrices((33, 9))],
    "dynamic_centered_softmax": [_matrices((21, 203), (203,)), _matrices((9, 33), (33,))],
    "row_moments": [_matrices((21, 300)), _matrices((9, 60))],
    "attention_dynamic": [_attention(2, 2, 20, 70), _attention(3, 2, 9, 13)],
    "halves_difference": [_matrices((60, 33)), _matrices((7, 5))],  # x[:half], half = m // 2
    # a gain of one column broadcasts; whole rows of gain (or shift) bind kernels of their own
    "dynamic_row_gain": [
        _matrices((203, 70), (203, 1), (1, 70)),
        _matrices((9, 5), (9, 5), (1, 5)),
        _matrices((9, 5), (9, 1), (9, 5)),
        _matrices((1, 33), (1, 1), (1, 33)),
    ],
    # rows of 203, 1, 2 and 5 columns: `::3`, `4:6` and `-2:` clamp to each call's row
    "dynamic_row_marks": [
        _matrices((21, 203)),
        _matrices((9, 1)),
        _matrices((5, 2)),
        _matrices((3, 5)),
    ],
    # rows of one column: unit dims beside dynamic ones in every slice (sliced_unit_dims.py)
    "dynamic_row_offsets": [
        _matrices((2, 5, 1), (2, 5)),
        _matrices((2, 1, 1), (2, 1)),
        _matrices((1, 1, 7), (1, 1)),
        _matrices((3, 7, 33), (3, 7)),
    ],
    # rows of 9, 5, 3 and 1 columns: `n - 5` and `n - 7` below 0 count from the end
    "dynamic_row_tail": [
        _matrices((21, 9)),
        _matrices((9, 5)),
        _matrices((5, 3)),
        _matrices((3, 1)),
    ],
}
CASES = [
    pytest.param(name, config, checked, id=f"{name}-{i}-{'checked' if checked else 'fast'}")
    for name in OTHER_SHAPES
    for i, config in enumerate([None, *EXAMPLES[name].configs])
    for checked in (False, True)
]


def test_every_sample_kernel_with_dynamic_shapes_is_here() -> None:
    dynamic = {n for n, e in EXAMPLES.items() if not e.kernel.settings.static_shapes}
    assert dynamic - {"specialize_rows"} == set(OTHER_SHAPES)  # hl.specialize: a bind per size


@pytest.mark.parametrize(("name", "config", "bounds_checks"), CASES)
def test_code_compiled_at_one_shape_runs_at_others(
    name: str, config: Any, bounds_checks: bool
) -> None:
    example = EXAMPLES[name]
    bound = example.kernel.bind(example.args())
    compiled = compile_kernel(bound, config=config, bounds_checks=bounds_checks)
    generator = torch.Generator().manual_seed(0)
    for make in OTHER_SHAPES[name]:
        args = make(generator)
        shapes = [tuple(a.shape) for a in args]
        torch.testing.assert_close(
            compiled(*args), example.reference(*args), msg=lambda m, s=shapes: f"{s}: {m}"
        )


@pytest.mark.parametrize("name", ["dynamic_row_rms", "dynamic_centered_softmax"])
def test_rows_of_run_time_length_are_vectorized(name: str) -> None:
    """Elementwise ops and row reductions over sizes known at run time run in 64-lane
    chunks, the partial last chunk masked (they were scalar loops: dynamic_row_rms on
    4096x1024 took 3.4 ms, 2.0 vectorized, the static rms_norm 1.0)."""
    example = EXAMPLES[name]
    bound = example.kernel.bind(example.args())
    assert "vector<64xf32>" in lower_to_llvm(generate_mlir(bound, config=example.configs[0]))


@helion.kernel(static_shapes=False)
def row_span(x: torch.Tensor) -> torch.Tensor:
    m = x.size(0)
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tm in hl.tile(m):
        out[tm] = torch.amax(x[tm, :], dim=-1) - torch.amin(x[tm, :], dim=-1)
    return out


@pytest.mark.parametrize("block", [[1], [4]])
def test_masked_lanes_of_a_run_time_row_leave_max_and_min_alone(block: list[int]) -> None:
    """The last chunk's lanes past the row hold no value: on rows all below 0 (or all
    above) a max (or min) that read them as 0 would return 0."""
    generator = torch.Generator().manual_seed(0)
    compiled = compile_kernel(
        row_span.bind((torch.randn(7, 100),)), config=helion.Config(block_sizes=block)
    )
    for shape in [(7, 100), (5, 1000), (3, 63), (9, 65), (2, 3)]:
        magnitude = torch.rand(*shape, generator=generator) + 1.0
        for x in (-magnitude, magnitude):
            torch.testing.assert_close(compiled(x), x.amax(-1) - x.amin(-1))
