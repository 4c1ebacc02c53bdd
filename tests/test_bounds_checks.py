"""compile_kernel(bounds_checks=True): every memory access of the JIT'd code is verified.

A failed check aborts the process. These tests run in the pytest-xdist worker, as every
sample kernel's checked run in tests/test_execution.py does (its first dtype): xdist
reports an aborted worker as the failure of the test it was running."""

from __future__ import annotations

import helion
import torch

from helion_fx_mlir import compile_kernel
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.examples.control_flow import transpose_add
from helion_fx_mlir.examples.semantics import shift_right
from kernels_guard import tile_sums


def test_device_indices_past_a_host_buffer_touch_nothing() -> None:
    """A per-tile row index past what the host allocated writes nothing (and reads 0)."""
    x = torch.randn(37, 20)
    got = compile_kernel(tile_sums.bind((x, 2)), bounds_checks=True)(x, 2)
    torch.testing.assert_close(got, x[:16].reshape(2, 8, 20).sum(1))


def test_gather_and_scatter_indices_outside_the_tensor_stay_inside_it() -> None:
    """Eager PyTorch raises on a bad index; JIT code would read or write past the buffer.
    As in reference mode, a load reads the nearest element and a store's lane writes
    nothing, so the checked run (which aborts on any access outside a buffer) passes."""
    example = EXAMPLES["gather_gemv"]
    w, idx, x = example.args()
    idx[3] = w.size(0) + 5
    got = compile_kernel(example.kernel.bind((w, idx, x)), bounds_checks=True)(w, idx, x)
    want = example.reference(w, idx.clamp(0, w.size(0) - 1), x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    x = torch.randn(45)
    got = compile_kernel(shift_right.bind((x, 7)), bounds_checks=True)(x, 7)
    torch.testing.assert_close(got, torch.cat([torch.zeros(7), x[:-7]]))


def test_llvm_crashing_on_bf16_code_does_not_end_the_process() -> None:
    """LLVM's X86 backend aborts on this bf16 kernel at -O1 and up ("Cannot select" a bf16
    store): the code generation is probed in a forked child, and the kernel still runs."""
    x, y = torch.randn(4099, 33).bfloat16(), torch.randn(33, 4099).bfloat16()
    config = helion.Config(block_sizes=[32, 1])
    got = compile_kernel(transpose_add.bind((x, y)), config=config)(x, y)
    torch.testing.assert_close(got, x + y.t())
