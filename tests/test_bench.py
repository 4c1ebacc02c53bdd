"""The roofline bench: the machine's limits measured by small kernels of ours, each case's
fraction of them, and the table's columns (default and tuned)."""

from __future__ import annotations

import dataclasses
import math
import pathlib
import statistics
from typing import Any

import helion
import pytest
import torch
from helion.runtime.kernel import BoundKernel

from helion_fx_mlir import host_cpu
from helion_fx_mlir.runtime import kernel_cache
from helion_fx_mlir.runtime.autotune import mlir_copy
from helion_fx_mlir.tools import bench, roofline


def _positive(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0


def test_fma_peaks_are_positive_and_finite() -> None:
    assert _positive(roofline.fma_peak(roofline.F32, seconds=0.005, repeats=2))
    bf16 = roofline.fma_peak(roofline.BF16, seconds=0.005, repeats=2)
    assert _positive(bf16) if "avx512_bf16" in roofline.cpu_flags() else bf16 is None


def test_peak_kernel_does_every_fma() -> None:
    """Each of the chains (started at its index) adds x * x per step into every lane, and
    all of them reach the stored sum: no chain is dead code LLVM could drop."""
    out = torch.zeros(torch.get_num_threads())
    roofline.kernel_entry(roofline._peak_engine(roofline.F32), "peak")(out, 1000, 0.5)
    expected = roofline.LANES * sum(i + 1000 * 0.25 for i in range(roofline.fma_chains()))
    assert out.tolist() == [expected] * out.numel()


def test_bandwidths_on_small_buffers_are_positive_and_finite() -> None:
    assert _positive(roofline.read_gbs(64 * 1024, repeats=2))
    assert _positive(roofline.copy_gbs(1 << 20, fresh=False, repeats=2))
    assert _positive(roofline.copy_gbs(1 << 20, fresh=True, repeats=2))
    movement = roofline.Movement.of([torch.ones(1000), torch.ones(10)], [torch.ones(1000)])
    assert _positive(movement.best_ms(repeats=2))


@pytest.mark.parametrize("threads", [1, 2])
def test_read_kernel_reads_every_word(threads: int) -> None:
    """The rate is honest only if the kernel reads all the words it is given, `reps` times,
    on every thread; they are the tensor's own bytes, all its whole steps."""
    torch.set_num_threads(threads)
    tensor = torch.randint(0, 8, (5000,), generator=torch.Generator().manual_seed(0))
    reader = roofline.Reader.of(tensor.to(torch.int32))
    step = roofline.LANES * roofline.READ_STREAMS * threads
    assert reader.words.numel() == 5000 // step * step
    assert reader.words.data_ptr() == reader.tensor.data_ptr()
    out = torch.zeros(threads, dtype=torch.int32)
    roofline.kernel_entry(roofline._read_engine(), "read")(out, reader.words, reader.reps)
    assert out.sum().item() == reader.words.sum().item() * reader.reps


@pytest.mark.parametrize("threads", [1, 2])
def test_copy_kernel_copies_every_word(threads: int) -> None:
    """The copy bound is honest only if the kernel writes every word it is timed on."""
    torch.set_num_threads(threads)
    source = torch.arange(3 << 20, dtype=torch.float32)
    copier = roofline.Copier.of([torch.ones(10), source], 2 << 20)
    assert copier is not None
    assert copier.words.numel() * 4 == 2 << 20 and copier.words.data_ptr() == source.data_ptr()
    out, dst = torch.zeros(threads, dtype=torch.int32), torch.empty_like(copier.words)
    roofline.kernel_entry(roofline._copy_engine(), "copy")(out, copier.words, dst)
    assert torch.equal(dst, copier.words)
    assert _positive(copier.seconds(repeats=2))


def test_a_row_kernel_is_held_to_a_copy_and_a_row_sum_to_reading() -> None:
    """Reading 4 MB and writing 4 MB: a copy of those bytes is timed; writing 4 KB: too few
    bytes in common to time a copy of."""
    rows = roofline.Movement.of([torch.ones(1024, 1024)], [torch.ones(1024, 1024)])
    assert rows.copy is not None and rows.copy.words.numel() == 1024 * 1024
    assert _positive(rows.best_ms(repeats=2))
    assert roofline.Movement.of([torch.ones(1024, 1024)], [torch.ones(1024)]).copy is None


def test_the_read_kernel_times_a_tensor_as_torch_sum_does() -> None:
    """Both read 4 MB; the kernel's time per pass, scaled to the tensor, is of the same
    order as torch.sum's (a busy machine skews either, not by 4x at the best of 5)."""
    reader = roofline.Reader.of(torch.ones(1 << 20))
    ratio = reader.kernel_seconds(5) / roofline._best_seconds(reader.tensor.sum, 5)
    assert 0.25 < ratio < 4


def test_a_tensor_smaller_than_a_step_is_read_as_one() -> None:
    reader = roofline.Reader.of(torch.ones(3, dtype=torch.bfloat16))
    assert reader.words.numel() == roofline.LANES * roofline.READ_STREAMS
    assert 0 < reader.seconds(repeats=2) < 1e-3


def test_measured_limits_print_as_a_header() -> None:
    limits = roofline.measure(**roofline.QUICK_MEASURE)
    header = limits.header()
    assert all(
        _positive(v) for v in (limits.f32_gflops, limits.read_gbs, limits.copy_gbs)
    ) and _positive(limits.fresh_copy_gbs)
    assert f"FMA peak f32 {limits.f32_gflops:.1f} GFLOP/s" in header
    assert "GB/s preallocated" in header and "GB/s fresh" in header


def _fractions(table: str) -> list[float]:
    """Every x/limit cell of the table."""
    lines = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("|")]
    headers = [h.strip() for h in lines[0]]
    columns = [i for i, h in enumerate(headers) if h.endswith("/limit")]
    return [float(row[i].strip()) for row in lines[2:] for i in columns if row[i].strip()]


def test_every_fraction_of_a_tiny_case_is_within_the_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Small inputs: ours, eager, memory-bound and contraction, all at most the machine's
    limit; above it is a measurement bug."""
    table = bench.main(["add", "attention"], rounds=1, threads=1, size="small")
    fractions = _fractions(table)
    assert len(fractions) == 4
    assert all(0 < f <= 1 for f in fractions), table


LIMITS = roofline.Limits(
    cpu="test cpu",
    threads=2,
    f32_gflops=100.0,
    bf16_gflops=None,
    bf16_unit="unavailable (no avx512_bf16)",
    copy_bytes=256 * roofline.MB,
    read_gbs=40.0,
    copy_gbs=30.0,
    fresh_copy_gbs=6.0,
)


def _timed(ms: float, seconds: float = 0.5) -> bench.Timed:
    return bench.Timed(bench.Compiled(helion.Config(block_sizes=[16]), print, seconds), ms)


def _row(
    kernel: str,
    ms: float,
    tuned_ms: float | None = None,
    probe: float = math.inf,
    rounds: tuple[bench.Round, ...] | None = None,
    **work: Any,
) -> bench.Row:
    """A row of one round (ours `ms`, eager 2 ms, the probes `probe`) unless `rounds`."""
    ours = (ms,) if tuned_ms is None else (ms, tuned_ms)
    return bench.Row(
        kernel=kernel,
        default=_timed(ms),
        eager_ms=2.0,
        throughput="1.0 GB/s",
        flops=work.get("flops"),
        dtype=work.get("dtype", torch.float32),
        rounds=rounds or (bench.Round(ours, 2.0, probe),),
        tuned=_timed(tuned_ms, 30.0) if tuned_ms is not None else None,
    )


def test_table_has_limit_columns_and_names_a_limit_set_by_a_run() -> None:
    """A run faster than the probes (copy: ours 0.45-0.5 ms, the probes 1.0) is the limit
    in their place in its round, and the table names its row."""
    copy_rounds = tuple(bench.Round((ms,), 2.0, 1.0) for ms in (0.5, 0.45, 0.5))
    rows = [_row("mm", 4.0, flops=2e8), _row("copy", 0.5, rounds=copy_rounds)]
    table = bench.render(rows, LIMITS, "title")
    lines = table.splitlines()
    assert lines[0] == LIMITS.header() and lines[1] == "title"
    assert "bf16 unavailable (no avx512_bf16)" in lines[0]
    headers = [h.strip() for h in lines[3].split("|")[1:-1]]
    assert headers == [
        "kernel",
        "compile s",
        "ours ms",
        "eager ms",
        "eager/ours",
        "throughput",
        "ours/limit",
        "eager/limit",
    ]
    # mm: 2e8 flops at 100 GFLOP/s is 2 ms: 0.5 of ours (4 ms), 1.0 of eager (2 ms);
    # copy: ours the limit in every round (faster than the probes); eager 2 ms against
    # 0.5, 0.45 and 0.5
    assert _fractions(table) == [0.5, 1.0, 1.0, 0.25]
    configs = lines.index("default configs:")
    assert lines[configs - 1] == "limit set by a run faster than the probes: copy"
    assert lines[configs + 1 :] == [
        f"  {row.kernel}: {row.default.compiled.config}" for row in rows
    ]


def test_each_round_is_held_to_its_own_limit() -> None:
    """A shared host whose memory runs at half speed in some rounds slows the probes and
    the kernel alike: each round's fraction is of its own probes (0.9 in every round here),
    where the best probe round over the median time would say 0.6."""
    rounds = tuple(bench.Round((ms,), 4 * ms, ms * 0.9) for ms in (1.0, 2.0, 2.0, 1.0, 2.0))
    row = _row("add", 2.0, rounds=rounds)
    assert row.fraction(LIMITS, lambda at: at.ours[0]) == pytest.approx(0.9)
    assert row.fraction(LIMITS, lambda at: at.eager) == pytest.approx(0.225)
    assert not row.set_by_runs(LIMITS)


def test_tuned_columns_and_their_geometric_mean() -> None:
    rows = [
        _row("a", 4.0, tuned_ms=1.0, probe=0.5),
        _row("b", 1.0, tuned_ms=1.0, probe=0.5),
    ]
    cells = bench.table_rows(rows, LIMITS)
    assert list(cells[0])[-4:] == ["tune s", "tuned ms", "eager/tuned", "tuned/limit"]
    assert cells[0]["tuned/limit"] == "0.500" and cells[0]["tune s"] == 30.0
    mean = cells[-1]
    assert mean["kernel"] == "geometric mean"
    assert mean["eager/ours"] == pytest.approx(math.sqrt(0.5 * 2.0))
    assert mean["eager/tuned"] == pytest.approx(2.0)
    assert "tuned configs:" in bench.render(rows, LIMITS, "title")


def test_bf16_contractions_are_held_to_the_bf16_peak() -> None:
    with_bf16 = dataclasses.replace(LIMITS, bf16_gflops=400.0)
    row = _row("mm", 1.0, flops=4e8, dtype=torch.bfloat16)
    assert row.probe_ms(LIMITS, row.rounds[0]) == pytest.approx(4.0)  # no bf16 peak: the f32 one
    assert row.probe_ms(with_bf16, row.rounds[0]) == pytest.approx(1.0)


def test_each_round_holds_a_contraction_to_the_peak_of_its_dtype(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bf16 cases against AMX tiles where the process has them, else vdpbf16ps where the
    CPU has it, else the f32 FMAs. The peaks' ratio is the CPU's: AMX multiplies several
    times the FMAs' flops; the dot product's two products per f32 lane make it up to twice
    them (about 2x on Zen 4), but Sapphire Rapids issues it at a quarter of the FMA's rate
    (0.5x measured): only bounds hold everywhere. Each ratio is of two peaks measured back
    to back, which see the same neighbours (the other test worker shares the machine)."""
    ratios = [
        roofline.peak_gflops(torch.bfloat16, repeats=1)
        / roofline.peak_gflops(torch.float32, repeats=1)
        for _ in range(5)
    ]
    amx, dots = host_cpu.amx_usable(), "avx512_bf16" in roofline.cpu_flags()
    low, high = (2.0, 64.0) if amx else (0.25, 2.2) if dots else (0.7, 1.3)
    assert low < statistics.median(ratios) < high
    units: list[str] = []
    with monkeypatch.context() as patched:
        # as the real one: a peak only where the process has AMX tiles
        patched.setattr(
            roofline, "amx_peak", lambda *_: (units.append("AMX") or 1.0) if amx else None
        )
        patched.setattr(roofline, "fma_peak", lambda kind, *_: units.append(kind.step) or 1.0)
        roofline.peak_gflops(torch.bfloat16)
    assert units[0] == ("AMX" if amx else roofline.BF16.step if dots else roofline.F32.step)
    f32 = roofline.peak_gflops(torch.float32, repeats=5)
    case = bench.CASES["matmul"]
    args = case.args("small")
    least_ms = bench._limit_probe(case, args, None)()
    expected = case.flops(args) / f32 / 1e6
    assert expected / 3 < least_ms < expected * 3


def test_the_tuned_kernel_keeps_the_sample_kernels_settings() -> None:
    example = bench.EXAMPLES["matmul"].kernel
    tuned = mlir_copy(example, "quick")
    assert tuned.settings.backend == "mlir" and tuned.settings.autotune_effort == "quick"
    assert tuned.settings.static_shapes == example.settings.static_shapes
    assert tuned.fn is example.fn and example.settings.backend != "mlir"


def test_autotuned_compiles_what_the_search_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tuned column runs the config `bound.autotune(args, force=True)` returns."""
    found = helion.Config(block_sizes=[32, 16, 16])
    calls: list[dict[str, Any]] = []

    def search(self: Any, args: Any, **options: Any) -> helion.Config:
        calls.append(options)
        return found

    monkeypatch.setattr(BoundKernel, "autotune", search)
    case = bench.CASES["matmul"]
    args = case.args("small")
    tuned = bench.autotuned(case, args, "quick")
    assert calls == [{"force": True}]
    assert tuned.config["block_sizes"] == [32, 16, 16]
    torch.testing.assert_close(tuned.host(*args), args[0] @ args[1], rtol=1e-4, atol=1e-4)


def test_compile_time_is_never_a_disk_cache_hit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    """`compile s` times generate + lower + JIT: no compiled kernel from an earlier run,
    even with the disk cache on (the tests turn it off)."""

    def load(key: str) -> None:
        raise AssertionError("the bench read the disk cache")

    monkeypatch.setenv("HELION_FX_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(kernel_cache.DISABLE_ENV, "1")
    monkeypatch.setattr(kernel_cache, "load", load)
    example = bench.EXAMPLES["add"]
    compiled = bench._compile(example.kernel.bind(example.args()), None)
    assert compiled.seconds > 0
