"""The roofline bench: the machine's limits measured by small kernels of ours."""

from __future__ import annotations

import math

import torch

from helion_fx_mlir.tools import roofline


def _positive(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0


def test_fma_peaks_are_positive_and_finite() -> None:
    assert _positive(roofline.fma_peak(roofline.F32, seconds=0.005, repeats=2))
    bf16 = roofline.fma_peak(roofline.BF16, seconds=0.005, repeats=2)
    assert _positive(bf16) if "avx512_bf16" in roofline.cpu_flags() else bf16 is None


def test_peak_kernel_does_every_fma() -> None:
    """Each of the 12 chains (started at its index) adds x * x per step into every lane, and
    all of them reach the stored sum: no chain is dead code LLVM could drop."""
    out = torch.zeros(torch.get_num_threads())
    args = [roofline._pointer(a) for a in (out, 1000, 0.5)]
    roofline._peak_engine(roofline.F32).invoke("peak", *args)
    expected = roofline.LANES * sum(i + 1000 * 0.25 for i in range(roofline.FMA_CHAINS))
    assert out.tolist() == [expected] * out.numel()


def test_bandwidths_on_small_buffers_are_positive_and_finite() -> None:
    assert _positive(roofline.read_gbs(64 * 1024, repeats=2))
    assert _positive(roofline.copy_gbs(1 << 20, fresh=False, repeats=2))
    assert _positive(roofline.copy_gbs(1 << 20, fresh=True, repeats=2))
    movement = roofline.Movement.of([torch.ones(1000), torch.ones(10)], [torch.ones(1000)])
    assert _positive(movement.best_ms(repeats=2))


def test_read_kernel_reads_every_element() -> None:
    """The rate is honest only if the kernel reads the whole buffer, `reps` times."""
    reader = roofline.Reader.like(5000 * 4)
    engine = roofline._read_engine()
    out = torch.zeros(torch.get_num_threads())
    args = [roofline._pointer(a) for a in (out, reader.buffer, reader.reps)]
    engine.invoke("read", *args)
    assert out.sum().item() == reader.buffer.numel() * reader.reps


def test_measured_limits_print_as_a_header() -> None:
    limits = roofline.measure(**roofline.QUICK_MEASURE)
    header = limits.header()
    assert all(
        _positive(v) for v in (limits.f32_gflops, limits.read_gbs, limits.copy_gbs)
    ) and _positive(limits.fresh_copy_gbs)
    assert f"FMA peak f32 {limits.f32_gflops:.1f} GFLOP/s" in header
    assert "GB/s preallocated" in header and "GB/s fresh" in header
