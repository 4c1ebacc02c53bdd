"""Grids run on torch's own OpenMP threads (libgomp, through `passes.abi`): every program
exactly once, on any thread count, from any Python thread."""

from __future__ import annotations

import pathlib
import threading

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel
from helion_fx_mlir.examples import EXAMPLES

# add in 16x16 tiles: 1, 3 and 7 programs, fewer and more than the threads.
GRIDS = [(16, 16), (16, 40), (20, 60), (37, 50)]


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("shape", GRIDS, ids=[f"{m}x{n}" for m, n in GRIDS])
def test_every_program_runs_once_on_any_thread_count(threads: int, shape: tuple[int, int]) -> None:
    torch.set_num_threads(threads)
    example = EXAMPLES["add"]
    x, y = torch.randn(*shape), torch.randn(*shape)
    compiled = compile_kernel(
        example.kernel.bind((x, y)), config=helion.Config(block_sizes=[16, 16])
    )
    torch.testing.assert_close(compiled(x, y), x + y, rtol=0, atol=0)


@pytest.mark.parametrize(
    "name", ["matmul", "softmax", "attention", "sum_rows", "layer_norm", "bmm"]
)
def test_sample_kernels_match_eager_on_two_threads(name: str) -> None:
    torch.set_num_threads(2)
    example = EXAMPLES[name]
    for config in (None, *example.configs):
        args = example.args()
        got = compile_kernel(example.kernel.bind(args), config=config)(*args)
        torch.testing.assert_close(got, example.reference(*args))


def test_launches_from_another_python_thread_use_its_thread_count() -> None:
    example = EXAMPLES["softmax"]
    args = example.args()
    compiled = compile_kernel(example.kernel.bind(args))
    results: list[torch.Tensor] = []

    def launch() -> None:
        torch.set_num_threads(2)
        results.append(compiled(*args))

    worker = threading.Thread(target=launch)
    worker.start()
    worker.join()
    torch.testing.assert_close(results[0], example.reference(*args))


def test_no_second_openmp_runtime_is_loaded() -> None:
    """Kernels and eager operators share torch's libgomp: no libiomp5 or libomp beside it."""
    torch.set_num_threads(2)
    example = EXAMPLES["add"]
    args = example.args()
    compile_kernel(example.kernel.bind(args))(*args)
    maps = pathlib.Path("/proc/self/maps").read_text()
    assert "libgomp" in maps
    assert "libiomp5" not in maps and "libomp.so" not in maps
