"""Programs of a grid that loop over tiles run in interleaved groups along the grid's last
dimension (`group_grid_programs`) when each reads narrow strips; the kernel still matches
eager, on one thread and on several. Programs that read contiguous runs stay alone.
Matmul programs that copy the same B block group along the dimension the copy does not
depend on, and share the copy."""

from __future__ import annotations

import re

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.grid_groups import target_threads
from helion_fx_mlir.passes.pipelines import LLVM, apply

# Tiles that divide the shape: a padded or masked tile needs a buffer of its own per program,
# and grids whose programs allocate are not grouped.
SHAPE = (64, 2048)
# The kernel adds its row tiles in order, eager `x.sum(0)` in its own: sums of a few hundred
# randn rows differ by rounding, about 1e-5 apart (default f32 tolerances allow 1.3e-6).
COLUMN_SUM_TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}
CONFIGS = [
    helion.Config(block_sizes=[32, 32]),
    helion.Config(block_sizes=[16, 8]),
    helion.Config(block_sizes=[64, 16]),
]


def _grid_after_grouping(bound: object, config: helion.Config) -> str:
    """The grid's sizes after grouping for torch's threads, as the JIT groups it."""
    upto = LLVM.index("helion-group-grid-programs")
    module = parse_module(generate_mlir(bound, config=config))
    target_threads(module, torch.get_num_threads())
    module = apply(module, LLVM[: upto + 1])
    return re.search(r"scf\.forall \([%\w, ]+\) in \(([\d, ]+)\)", str(module)).group(1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("config", CONFIGS, ids=["32x32", "16x8", "64x16"])
def test_grouped_column_sums_match_eager(config: helion.Config, threads: int) -> None:
    torch.set_num_threads(threads)
    example = EXAMPLES["col_sum"]
    x = torch.randn(*SHAPE)
    bound = example.kernel.bind((x,))
    programs = -(-SHAPE[1] // config.block_sizes[0])
    assert int(_grid_after_grouping(bound, config)) < programs  # grouped
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(x), example.reference(x), **COLUMN_SUM_TOLERANCE
    )


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("rows", [64, 200])
def test_column_sums_step_through_row_tiles_in_8_rows(rows: int, threads: int) -> None:
    """32-row tiles summed 8 rows at a time into the accumulator: one loop over the steps,
    each reading and writing the accumulator (the row tile and step from its index); 200
    rows leave a masked last tile, whose grid is not grouped."""
    torch.set_num_threads(threads)
    example = EXAMPLES["col_sum"]
    x = torch.randn(rows, 2048)
    bound = example.kernel.bind((x,))
    config = helion.Config(block_sizes=[32, 32])
    upto = LLVM.index("helion-group-grid-programs")
    grouped = str(apply(parse_module(generate_mlir(bound, config=config)), LLVM[: upto + 1]))
    assert ("arith.remui" in grouped) == (rows % 32 == 0)
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(x), example.reference(x), **COLUMN_SUM_TOLERANCE
    )


@pytest.mark.parametrize(("threads", "grid"), [(1, "1"), (2, "2"), (3, "8"), (4, "4")])
def test_groups_leave_each_thread_its_share(threads: int, grid: str) -> None:
    """64 column strips in groups as large as the threads allow: one on one thread, one
    per thread on 2 or 4; on 3 threads, 2 or 4 groups would leave one thread twice the
    strips of the others, 8 groups of 8 at most 24 strips where the programs alone give
    22."""
    torch.set_num_threads(threads)
    example = EXAMPLES["col_sum"]
    x = torch.randn(64, 2048)
    bound = example.kernel.bind((x,))
    config = helion.Config(block_sizes=[32, 32])
    assert _grid_after_grouping(bound, config) == grid
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(x), example.reference(x), **COLUMN_SUM_TOLERANCE
    )


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("config", "grid"), [([16, 32], "4, 1"), ([8, 16], "8, 1")])
def test_a_2d_grid_of_strips_groups_its_last_dimension(
    config: list[int], grid: str, threads: int
) -> None:
    """An elementwise add in 16x32 tiles: each program walks its rows 32 wide; a group of
    the 64 programs along a row of tiles reads each row whole (4 groups, 2 per thread on
    2 threads); in 8x16 tiles, 128 programs do."""
    torch.set_num_threads(threads)
    _check_add(config, grid)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_prime_count_of_strips_groups_unevenly(threads: int) -> None:
    """131 column strips of an add in 8x16 tiles, a prime beyond the largest group: two
    groups, of 66 and 65 strips, the last group's loop stopping at the grid's end."""
    torch.set_num_threads(threads)
    _check_add([8, 16], "2, 2", shape=(16, 131 * 16))


@pytest.mark.parametrize(("config", "grid"), [([1, 2048], "64"), ([4, 2048], "16")])
def test_programs_reading_whole_rows_are_left_alone(config: list[int], grid: str) -> None:
    """A loop over a row's vectors moves the innermost index: interleaving such programs
    would turn one contiguous stream into sixteen."""
    _check_add(config, grid)


def _check_add(block_sizes: list[int], grid: str, shape: tuple[int, int] = SHAPE) -> None:
    """The add's grid after grouping, and its result against eager."""
    example = EXAMPLES["add"]
    x, y = torch.randn(*shape), torch.randn(*shape)
    bound = example.kernel.bind((x, y))
    config = helion.Config(block_sizes=block_sizes)
    assert _grid_after_grouping(bound, config) == grid
    torch.testing.assert_close(compile_kernel(bound, config=config)(x, y), example.reference(x, y))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("example", "shapes", "block_sizes", "grid"),
    [
        ("matmul", [(64, 96), (96, 80)], [16, 16, 16], "1, 5"),  # the whole K block packed
        ("matmul", [(64, 96), (96, 80)], [16, 16, 32], "1, 5"),  # K in packed chunks
        ("matmul", [(128, 256), (256, 64)], [32, 16, 64], "1, 4"),
        ("bmm", [(2, 64, 48), (2, 48, 32)], [1, 16, 16, 16], "2, 1, 2"),  # not along the batch
        # 248 rows: 15 whole tiles (their own grid, `grid_edges.py`), grouped by 15
        ("matmul", [(248, 64), (64, 80)], [16, 16, 16], "1, 5"),
        # 23 rows of tiles divide by nothing up to 16: groups of 12 and 11
        ("matmul", [(368, 64), (64, 48)], [16, 16, 16], "2, 3"),
        # 64-wide blocks: 6-row register tiles, each block's last rows (4, 2) peeled after
        # the loop over them, which the group's programs run one after another
        ("matmul", [(512, 128), (128, 128)], [64, 64, 64], "1, 2"),
        ("matmul", [(256, 64), (64, 128)], [32, 64, 32], "1, 2"),
    ],
    ids=[
        "matmul-16",
        "matmul-k-chunks",
        "matmul-32x16",
        "bmm",
        "matmul-15-whole-rows",
        "matmul-23-rows-uneven",
        "matmul-64-peeled-rows",
        "matmul-32x64-peeled-rows",
    ],
)
def test_matmul_programs_share_their_packed_operand(
    example: str, shapes: list[tuple[int, ...]], block_sizes: list[int], grid: str, threads: int
) -> None:
    """Grouped along the rows of output tiles (the B block is the same for all of them);
    the result matches eager whatever the group's programs ran before."""
    torch.set_num_threads(threads)
    kernel = EXAMPLES[example]
    args = tuple(torch.randn(*shape) for shape in shapes)
    bound = kernel.kernel.bind(args)
    config = helion.Config(block_sizes=block_sizes)
    assert _grid_after_grouping(bound, config) == grid
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), kernel.reference(*args), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(("threads", "grid"), [(1, "1, 3"), (2, "2, 3")])
def test_programs_sharing_a_copy_make_the_fewest_even_groups(threads: int, grid: str) -> None:
    """Three columns of 15 programs, each column copying one B block: one group per column
    on one thread; on two, groups of 8 and 7 (groups of 5 would leave one thread 25
    programs and the other 20)."""
    torch.set_num_threads(threads)
    kernel = EXAMPLES["matmul"]
    args = (torch.randn(240, 64), torch.randn(64, 48))
    bound = kernel.kernel.bind(args)
    config = helion.Config(block_sizes=[16, 16, 16])
    assert _grid_after_grouping(bound, config) == grid
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), kernel.reference(*args), rtol=1e-4, atol=1e-4
    )


def test_matmul_tiles_the_shape_does_not_divide_are_left_alone() -> None:
    """Masked last tiles: the whole tiles run as a grid of their own (7 x 5 programs ->
    6 x 4 and the edges', `grid_edges.py`), whose K tail (130 in 16-row blocks) gives each
    program buffers of its own: not grouped here (`shared_strips.py` groups them)."""
    kernel = EXAMPLES["matmul"]
    args = (torch.randn(100, 130), torch.randn(130, 70))
    bound = kernel.kernel.bind(args)
    config = helion.Config(block_sizes=[16, 16, 16])
    assert _grid_after_grouping(bound, config) == "6, 4"
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), kernel.reference(*args), rtol=1e-4, atol=1e-4
    )
