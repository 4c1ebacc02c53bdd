"""Grids whose programs store inside their loops run in parallel when their programs are
independent (`independent_programs`): results match eager on one thread and several, on
shapes the blocks do not divide; grids whose programs could see each other's stores stay
sequential and keep reference mode's answer."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.attributes import INDEPENDENT_PROGRAMS
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply
from helion_fx_mlir.tools.eager_reference import eager_reference


def _runs_as_reference_mode(
    kernel: object, bound: object, config: helion.Config, args: tuple, tolerance: float = 0.0
) -> None:
    """The compiled kernel, fast and with bounds checks, gives reference mode's result
    (within `tolerance`, else torch's defaults)."""
    expected = eager_reference(kernel)(*args)
    bounds = {"atol": tolerance, "rtol": tolerance} if tolerance else {}
    for checks in (False, True):
        compiled = compile_kernel(bound, config=config, bounds_checks=checks)
        torch.testing.assert_close(compiled(*args), expected, **bounds)


def _after_pass(bound: object, config: helion.Config) -> str:
    upto = LLVM.index("helion-parallelize-independent-grids")
    return str(apply(parse_module(generate_mlir(bound, config=config)), LLVM[: upto + 1]))


CASES = [
    ("layer_norm", (333, 1000), helion.Config(block_sizes=[1], reduction_loops=[256])),
    ("layer_norm", (333, 1000), helion.Config(block_sizes=[4], reduction_loops=[128])),
    ("softmax_two_pass", (101, 300), helion.Config(block_sizes=[8, 64])),
    ("softmax_two_pass", (101, 300), helion.Config(block_sizes=[1, 128])),
    # chunks that divide the row: whole tiles, no pad (test_whole_chunks_lose_their_pad)
    ("layer_norm", (67, 1024), helion.Config(block_sizes=[1], reduction_loops=[256])),
    ("softmax_two_pass", (67, 512), helion.Config(block_sizes=[2, 128])),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("name", "shape", "config"), CASES, ids=lambda c: str(c))
def test_stores_in_loops_run_in_parallel_and_match_eager(
    name: str, shape: tuple[int, int], config: helion.Config, threads: int
) -> None:
    torch.set_num_threads(threads)
    example = EXAMPLES[name]
    torch.manual_seed(0)
    x = torch.randn(*shape)
    args = (x, torch.randn(shape[1]), torch.randn(shape[1])) if name == "layer_norm" else (x,)
    bound = example.kernel.bind(args)
    assert "scf.forall" in _after_pass(bound, config)
    compiled = compile_kernel(bound, config=config)
    torch.testing.assert_close(compiled(*args), example.reference(*args), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(("columns", "padded"), [(1024, False), (1000, True)])
def test_whole_chunks_lose_their_pad(columns: int, padded: bool) -> None:
    """A reduction loop's chunks are whole where the chunk divides the row: their size
    folds to the chunk, and no masked lanes are padded (helion-fuse-elementwise)."""
    args = (torch.randn(8, columns), torch.randn(columns), torch.randn(columns))
    bound = EXAMPLES["layer_norm"].kernel.bind(args)
    config = helion.Config(block_sizes=[1], reduction_loops=[256])
    upto = LLVM.index("helion-fuse-elementwise")
    text = str(apply(parse_module(generate_mlir(bound, config=config)), LLVM[: upto + 1]))
    assert ("tensor.pad" in text) == padded


@helion.kernel(static_shapes=True)
def last_tile_column_sums(x: torch.Tensor) -> torch.Tensor:
    """Every program writes the same `out[tn]`: in reference mode the last one wins."""
    m, n = x.size()
    out = torch.empty([n], dtype=x.dtype, device=x.device)
    for tm in hl.tile(m):
        for tn in hl.tile(n):
            out[tn] = x[tm, tn].sum(0)
    return out


@helion.kernel(static_shapes=True)
def plus_the_first_row(x: torch.Tensor) -> torch.Tensor:
    """Reads the first row of what it stores: the first program's rows, which later
    programs may see only in order (reference mode adds x[0] to every tile after the
    first)."""
    m, n = x.size()
    out = torch.zeros_like(x)
    for tm in hl.tile(m):
        for tn in hl.tile(n):
            out[tm, tn] = x[tm, tn] + out[0, tn][None, :]
    return out


@helion.kernel(static_shapes=True)
def shared_block_size(x: torch.Tensor) -> torch.Tensor:
    """The inner loop reuses the grid's block size, hence its block id: its tiles, and the
    stores by them, are the loop's, the same for every program, so the programs are not
    independent."""
    (n,) = x.size()
    out = torch.zeros([n], dtype=x.dtype, device=x.device)
    block = hl.register_block_size(n)
    for tm in hl.tile(n, block_size=block):
        out[tm] = x[tm] * 2.0
        for tk in hl.tile(n, block_size=block):
            out[tk] = out[tk] + 1.0
    return out


def test_programs_that_share_stores_or_read_them_stay_sequential() -> None:
    config = helion.Config(block_sizes=[16, 32])
    x = torch.randn(70, 90)
    shared = last_tile_column_sums.bind((x,))
    assert INDEPENDENT_PROGRAMS not in generate_mlir(shared, config=config)
    torch.testing.assert_close(compile_kernel(shared, config=config)(x), x[64:].sum(0))
    inner = shared_block_size.bind((x[0],))
    assert INDEPENDENT_PROGRAMS not in generate_mlir(inner, config=helion.Config(block_sizes=[16]))
    # program p doubles its tile, then adds 1 everywhere: tile p is incremented by p..5
    increments = 6 - torch.arange(90).div(16, rounding_mode="floor")
    result = compile_kernel(inner, config=helion.Config(block_sizes=[16]))(x[0])
    torch.testing.assert_close(result, x[0] * 2.0 + increments)
    reread = plus_the_first_row.bind((x,))
    assert INDEPENDENT_PROGRAMS not in generate_mlir(reread, config=config)
    expected = x.clone()
    expected[16:] += x[0]
    torch.testing.assert_close(compile_kernel(reread, config=config)(x), expected)


@helion.kernel(static_shapes=True)
def gained_rows(x: torch.Tensor, gains: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for i in hl.grid(x.size(0)):
        gain = gains[i]
        for tile_n in hl.tile(x.size(1)):
            out[i, tile_n] = torch.relu(x[i, tile_n]) * gain
    return out


@helion.kernel(static_shapes=True)
def every_other_row(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for i in hl.grid(0, x.size(0), 2):
        for tile_n in hl.tile(x.size(1)):
            out[i, tile_n] = x[i, tile_n] + 1.0
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("kernel", "args"),
    [
        (gained_rows, (torch.randn(77, 130), torch.randn(77))),
        (every_other_row, (torch.randn(77, 130),)),
    ],
    ids=["gained_rows", "every_other_row"],
)
def test_rows_of_a_grid_index_run_in_parallel(kernel: object, args: tuple, threads: int) -> None:
    """`out[i, tile_n]` in `for i in hl.grid(...)`: each program writes its own row (the
    grid index, Helion's GridOrigin, is an axis of the store like a tile), so the grid's
    programs run in parallel (they ran one after another); as reference mode computes,
    and in bounds."""
    torch.set_num_threads(threads)
    config = helion.Config(block_sizes=[32])
    bound = kernel.bind(args)  # type: ignore[attr-defined]
    assert "scf.forall" in _after_pass(bound, config)
    _runs_as_reference_mode(kernel, bound, config, args)


@helion.kernel(static_shapes=True)
def doubled_through_the_output(x: torch.Tensor) -> torch.Tensor:
    """Reads back only its own tile of what it stored: programs stay independent."""
    m, n = x.size()
    out = torch.empty_like(x)
    for tm in hl.tile(m):
        for tn in hl.tile(n):
            out[tm, tn] = x[tm, tn]
        for tn in hl.tile(n):
            out[tm, tn] = out[tm, tn] * 2.0
    return out


@helion.kernel(static_shapes=True)
def chunked_row_sums(x: torch.Tensor) -> torch.Tensor:
    """Each (row tile, column chunk) program adds its partial sums into the row tile's
    outputs: programs of one row tile share them, row tiles do not."""
    m, n = x.size()
    out = torch.zeros([m], dtype=torch.float32, device=x.device)
    for tm, tk in hl.tile([m, n]):
        hl.atomic_add(out, [tm], x[tm, tk].to(torch.float32).sum(1))
    return out


@helion.kernel(static_shapes=True)
def plus_transpose(x: torch.Tensor) -> torch.Tensor:
    """out = x + x.T by two atomics per program, the second at the transposed tile:
    programs of different tiles add into the same elements, so none runs beside another
    (our atomics are read-modify-writes)."""
    n = x.size(0)
    out = torch.zeros_like(x)
    for ta, tb in hl.tile([n, n]):
        tile = x[ta, tb]
        hl.atomic_add(out, [ta, tb], tile)
        hl.atomic_add(out, [tb, ta], tile.permute(1, 0))
    return out


# Shapes, not tensors: inputs drawn at collection would depend on what the worker
# collected first.
PARTIAL_CASES = [
    (doubled_through_the_output, [(70, 90)], helion.Config(block_sizes=[16, 32, 32])),
    (chunked_row_sums, [(77, 301)], helion.Config(block_sizes=[16, 64])),
    (chunked_row_sums, [(77, 301)], helion.Config(block_sizes=[8, 32], loop_orders=[[1, 0]])),
    (
        EXAMPLES["split_k_tunable_atomic"].kernel,
        [(67, 150), (150, 45)],
        helion.Config(block_sizes=[16, 16, 32], split_k=4),
    ),
    (
        EXAMPLES["split_k_tunable_atomic"].kernel,
        [(67, 150), (150, 45)],
        helion.Config(block_sizes=[32, 8, 16], loop_orders=[[2, 0, 1]], split_k=2),
    ),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("kernel", "shapes", "config"), PARTIAL_CASES, ids=lambda c: getattr(c, "__name__", None)
)
def test_programs_apart_along_some_axes_run_in_parallel_along_them(
    kernel: object, shapes: list[tuple[int, int]], config: helion.Config, threads: int
) -> None:
    """Where every access of a stored tensor (atomics and reads back included) takes a
    tile of an axis at the same dims, the programs of different tiles along it run in
    parallel (sequential before: atomics read what they store), those sharing its tile
    in order; as reference mode computes, and in bounds."""
    torch.set_num_threads(threads)
    args = tuple(torch.randn(*shape) for shape in shapes)
    bound = kernel.bind(args)  # type: ignore[attr-defined]
    assert "scf.forall" in _after_pass(bound, config)
    # sums of 150-301 products or elements, in other orders than reference mode's tiles
    _runs_as_reference_mode(kernel, bound, config, args, tolerance=1e-4)


def test_atomics_into_other_programs_tiles_stay_sequential() -> None:
    torch.set_num_threads(2)
    x = torch.randn(70, 70)
    config = helion.Config(block_sizes=[16, 32])
    bound = plus_transpose.bind((x,))
    assert INDEPENDENT_PROGRAMS not in generate_mlir(bound, config=config)
    torch.testing.assert_close(compile_kernel(bound, config=config)(x), x + x.T)
