"""Shifted tiles (`x[tile.index + k]`, k an int or a host scalar): a store, or a load with
an extra_mask, is a slice of the tile's lanes moved by k and cut to the tensor (lanes off
it touch nothing, a masked load reads 0 there), not an element-by-element gather or
scatter; the grid of a shifted store runs in parallel. Proven against reference mode, or
by hand where reference mode clamps an off-tensor store onto the last element; on shapes
no block divides, shifts that push tiles off either end, several configs, and with
bounds checks."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.tools.eager_reference import eager_reference


@helion.kernel(static_shapes=True)
def doubled_at_offset(x: torch.Tensor, k: int) -> torch.Tensor:
    out = torch.zeros_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile.index + k] = x[tile] * 2.0
    return out


@helion.kernel(static_shapes=True)
def plus_neighbour(x: torch.Tensor, k: int) -> torch.Tensor:
    """x + x shifted by k, the lanes whose neighbour lies off x masked (they add 0)."""
    (n,) = x.size()
    out = torch.empty_like(x)
    for tile in hl.tile(n):
        idx = tile.index + k
        near = hl.load(x, [idx], extra_mask=(idx >= 0) & (idx < n))
        out[tile] = x[tile] + near
    return out


@helion.kernel(static_shapes=True)
def joined_columns(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """cat([x, y], dim=1) over the output's columns, y's read at `tile.index - n1`."""
    m, n1 = x.size()
    out = torch.empty([m, n1 + y.size(1)], dtype=x.dtype, device=x.device)
    for tm, tn in hl.tile([m, out.size(1)]):
        left = (tn.index < n1)[None, :]
        a = hl.load(x, [tm, tn], extra_mask=left)
        b = hl.load(y, [tm, tn.index - n1], extra_mask=~left)
        out[tm, tn] = torch.where(left, a, b)
    return out


@helion.kernel(static_shapes=True)
def running_from_left(x: torch.Tensor) -> torch.Tensor:
    """out[i + 1] = out[i] + x[i] program by program: each program reads the lane its
    left neighbour wrote, so the programs run in order."""
    (n,) = x.size()
    out = torch.zeros_like(x)
    for tile in hl.tile(n - 1):
        out[tile.index + 1] = out[tile] + x[tile]
    return out


def _matches(
    bound: object, args: tuple, expected: torch.Tensor, runs: list[tuple[helion.Config, bool]]
) -> None:
    """The kernel compiled under each (config, bounds_checks) gives `expected`."""
    for config, checks in runs:
        got = compile_kernel(bound, config=config, bounds_checks=checks)(*args)
        torch.testing.assert_close(got, expected)


def _both_pipelines(config: helion.Config) -> list[tuple[helion.Config, bool]]:
    return [(config, False), (config, True)]


def _shifted_by_hand(x: torch.Tensor, k: int) -> torch.Tensor:
    out = torch.zeros_like(x)
    dst = torch.arange(x.numel()) + k
    keep = (dst >= 0) & (dst < x.numel())
    out[dst[keep]] = x[keep] * 2.0
    return out


CONFIGS = [helion.Config(block_sizes=[32]), helion.Config(block_sizes=[128])]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k", [0, 5, -7, 300, 999, 1000, -1000, 2000])
def test_a_shifted_store_writes_only_its_lanes_inside_the_tensor(k: int, threads: int) -> None:
    torch.set_num_threads(threads)
    x = torch.randn(1000)
    bound = doubled_at_offset.bind((x, k))
    runs = [(CONFIGS[0], False), (CONFIGS[1], False), (CONFIGS[0], True)]
    _matches(bound, (x, k), _shifted_by_hand(x, k), runs)


def test_a_shifted_store_is_a_parallel_slice_not_a_scatter() -> None:
    text = generate_mlir(doubled_at_offset.bind((torch.randn(1000), 3)), config=CONFIGS[0])
    assert "scf.forall" in text
    assert "tensor.parallel_insert_slice" in text
    assert "tensor.insert %" not in text  # no element-by-element scatter


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k", [1, -1, 33, -200, 1500])
def test_a_masked_shifted_load_reads_its_lanes_and_0_off_the_tensor(k: int, threads: int) -> None:
    torch.set_num_threads(threads)
    x = torch.randn(1001)
    bound = plus_neighbour.bind((x, k))
    text = generate_mlir(bound, config=CONFIGS[0])
    assert "torch.aten.index.Tensor" not in text  # a slice, no gather
    expected = eager_reference(plus_neighbour)(x, k)
    _matches(
        bound, (x, k), expected, [(CONFIGS[0], False), (CONFIGS[1], False), (CONFIGS[1], True)]
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize(
    "config",
    [helion.Config(block_sizes=[16, 32]), helion.Config(block_sizes=[8, 128])],
    ids=["16x32", "8x128"],
)
def test_columns_of_a_second_input_read_at_a_shift(
    config: helion.Config, dtype: torch.dtype
) -> None:
    torch.set_num_threads(2)
    x, y = torch.randn(77, 101, dtype=dtype), torch.randn(77, 45, dtype=dtype)
    bound = joined_columns.bind((x, y))
    _matches(bound, (x, y), torch.cat([x, y], dim=1), _both_pipelines(config))


def test_an_unmasked_shifted_load_still_reads_the_nearest_element() -> None:
    """Without an extra_mask a lane off the tensor reads the nearest element, as reference
    mode's load does: a program whose lanes all lie inside reads the slice, the last one
    (its lanes 96..99 read 97..100) the gather."""

    @helion.kernel(static_shapes=True)
    def next_value(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for tile in hl.tile(x.size(0)):
            out[tile] = x[tile.index + 1]
        return out

    x = torch.randn(100)
    bound = next_value.bind((x,))
    config = helion.Config(block_sizes=[32])
    text = generate_mlir(bound, config=config)
    assert "%load = scf.if %inside" in text and "torch.aten.index.Tensor" in text
    expected = eager_reference(next_value)(x)
    _matches(bound, (x,), expected, _both_pipelines(config))


@pytest.mark.parametrize("threads", [1, 2])
def test_programs_reading_a_neighbours_shifted_store_run_in_order(threads: int) -> None:
    """Racy on a GPU, where the programs run in any order; here in the grid's order,
    each program reading the lane its left neighbour wrote (reference mode's programs do
    not see their neighbours' stores so, hence the loop by hand)."""
    torch.set_num_threads(threads)
    x = torch.randn(301)
    config = helion.Config(block_sizes=[32])
    bound = running_from_left.bind((x,))
    assert "scf.forall" not in generate_mlir(bound, config=config)
    expected = torch.zeros_like(x)
    for begin in range(0, 300, 32):
        lanes = torch.arange(begin, min(begin + 32, 300))
        expected[lanes + 1] = expected[lanes] + x[lanes]
    _matches(bound, (x,), expected, [(config, threads == 1)])


@helion.kernel(static_shapes=True)
def scaled_segments(x: torch.Tensor, offsets: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Each segment's rows, between data-dependent offsets, times the segment's weight:
    stored at `tile.index + start` (a shift loaded per program), read there under a mask."""
    out = torch.zeros_like(x)
    for seg in hl.grid(offsets.size(0) - 1):
        start = offsets[seg]
        rows = offsets[seg + 1] - start
        for tile_t in hl.tile(rows):
            for tile_d in hl.tile(x.size(1)):
                inside = (tile_t.index < rows)[:, None]
                v = hl.load(x, [tile_t.index + start, tile_d], extra_mask=inside)
                out[tile_t.index + start, tile_d] = v * w[seg]
    return out


@helion.kernel(static_shapes=True)
def shifted_segments(x: torch.Tensor, offsets: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """scaled_segments with the rows read unmasked (`x[tile_t.index + start, tile_d]`)."""
    out = torch.zeros_like(x)
    for seg in hl.grid(offsets.size(0) - 1):
        start = offsets[seg]
        for tile_t in hl.tile(offsets[seg + 1] - start):
            for tile_d in hl.tile(x.size(1)):
                out[tile_t.index + start, tile_d] = x[tile_t.index + start, tile_d] * w[seg]
    return out


@pytest.mark.parametrize("kernel", [scaled_segments, shifted_segments], ids=lambda k: k.name)
@pytest.mark.parametrize(
    "config",
    [helion.Config(block_sizes=[16, 32]), helion.Config(block_sizes=[64, 16])],
    ids=["16x32", "64x16"],
)
def test_a_shift_loaded_per_program_is_a_slice_in_order(
    config: helion.Config, kernel: object
) -> None:
    """A data-dependent shift: slices all the same, but two programs' lanes may meet (the
    offsets are data), so the grid keeps its order."""
    torch.set_num_threads(2)
    x, w = torch.randn(203, 70), torch.randn(4)
    offsets = torch.tensor([0, 50, 50, 131, 203], dtype=torch.int32)
    bound = kernel.bind((x, offsets, w))  # type: ignore[attr-defined]
    text = generate_mlir(bound, config=config)
    assert "scf.forall" not in text and "tensor.insert %" not in text
    expected = eager_reference(kernel)(x, offsets, w)
    _matches(bound, (x, offsets, w), expected, _both_pipelines(config))


@helion.kernel(static_shapes=True)
def next_in_row(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's sum of x[i, j + 1] over its first lengths[i] columns (a jagged tile)."""
    b = x.size(0)
    out = torch.zeros([b], dtype=torch.float32, device=x.device)
    for tile_b in hl.tile(b):
        acc = hl.zeros([tile_b], dtype=torch.float32)
        row_lengths = lengths[tile_b]
        for tile_k in hl.jagged_tile(row_lengths):
            acc = acc + x[tile_b, tile_k.index + 1].sum(dim=1)
        out[tile_b] = acc
    return out


def test_a_shifted_load_in_a_jagged_tile_reads_0_past_each_rows_end() -> None:
    torch.set_num_threads(2)
    x = torch.randn(37, 70)
    lengths = torch.randint(0, 69, (37,), generator=torch.Generator().manual_seed(3))
    expected = torch.stack([x[i, 1 : int(n) + 1].sum() for i, n in enumerate(lengths)])
    bound = next_in_row.bind((x, lengths))
    for config in (helion.Config(block_sizes=[8, 16]), helion.Config(block_sizes=[16, 64])):
        _matches(bound, (x, lengths), expected, _both_pipelines(config))
