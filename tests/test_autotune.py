"""Autotuning on the CPU through the `mlir` backend: Helion's search times our compiled
code over a config space without Triton's knobs, the chosen config runs right, and the
best config is kept on disk for this CPU, where a new kernel object finds it."""

from __future__ import annotations

import pathlib
import time
from typing import Any

import helion
import helion.language as hl
import pytest
import torch
from helion.autotuner.base_search import BaseSearch
from helion.autotuner.benchmarking import interleaved_bench_generic

import helion_fx_mlir  # noqa: F401 - registers the backend
from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.runtime import jit
from helion_fx_mlir.runtime.autotune import IGNORED_CONFIG_KEYS, tune
from helion_fx_mlir.runtime.backend import MLIRBackend


def scaled_bias(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn] = torch.tanh(x[tm, tn] * w[tn]) + b[tm, None]
    return out


def inputs() -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return torch.randn(173, 95), torch.randn(95), torch.randn(173)


def expected(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * w) + b[:, None]


def tuned_kernel() -> Any:
    """A small budget: Helion's quick effort, one generation."""
    return helion.kernel(
        scaled_bias,
        backend="mlir",
        static_shapes=True,
        autotune_effort="quick",
        autotune_max_generations=1,
    )


@pytest.fixture
def cache(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    monkeypatch.setenv("HELION_FX_MLIR_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_a_first_call_autotunes_and_a_new_kernel_reuses_the_best_config(
    cache: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = inputs()
    kernel = tuned_kernel()
    torch.testing.assert_close(kernel(*args), expected(*args))
    bound = kernel.bind(args)
    assert set(bound.config_spec.default_config().config).isdisjoint(IGNORED_CONFIG_KEYS)
    assert len(list((cache / "configs").glob("*.best_config"))) == 1

    def no_search(self: BaseSearch) -> Any:
        raise AssertionError("searched again although the best config was cached")

    monkeypatch.setattr(BaseSearch, "_autotune", no_search)
    again = tuned_kernel()
    torch.testing.assert_close(again(*args), expected(*args))
    assert again.bind(args)._config == bound._config
    assert tune(helion.kernel(scaled_bias, static_shapes=True), args, "quick") == bound._config


def fixed_point(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for t in hl.tile(x.size(0)):
        out[t] = hl.inline_asm_elementwise(
            "mov.u32 $0, $1;", "=r,r", [x[t]], dtype=x.dtype, is_pure=True, pack=1
        )
    return out


def test_a_kernel_no_config_of_which_lowers_raises_our_error(cache: pathlib.Path) -> None:
    """Not Helion's "reference config failed": our error, naming node, target and line."""
    kernel = helion.kernel(fixed_point, backend="mlir", autotune_effort="quick")
    with pytest.raises(LoweringError, match=r"inline_asm_elementwise.*no lowering rule"):
        kernel(torch.randn(10))


def test_a_config_that_fails_to_lower_is_skipped_with_one_line(
    cache: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Helion's search over `configs=`: the one our compile rejects is skipped, with one
    line naming it, and the other runs."""
    compile_ = jit._compile

    def reject_wide(bound: Any, config: Any, bounds_checks: bool) -> tuple[jit.Engine, Any]:
        if config.config["block_sizes"][1] == 64:
            raise LoweringError("this config cannot be lowered (rejected on purpose)")
        return compile_(bound, config, bounds_checks)

    monkeypatch.setattr(jit, "_compile", reject_wide)
    good, bad = helion.Config(block_sizes=[16, 32]), helion.Config(block_sizes=[16, 64])
    kernel = helion.kernel(
        scaled_bias,
        backend="mlir",
        static_shapes=True,
        configs=[bad, good],
        autotune_effort="quick",
    )
    args = inputs()
    torch.testing.assert_close(kernel(*args), expected(*args))
    assert kernel.bind(args)._config == good
    err = capfd.readouterr().err
    skipped = [line for line in err.splitlines() if "Skipping config" in line]
    assert len(skipped) == 1 and "block_sizes=[16, 64]" in skipped[0], err
    assert "Traceback" not in err


def test_the_finalists_are_timed_in_their_steady_state() -> None:
    """A config whose first call after another config's is slow (its cache left cold) but
    whose calls in a row are fast is timed at the speed of its calls in a row, as a model's
    loop calls it; Helion's generic timer, one call between others', timed the cold call."""
    state = {"cold": True}

    def other() -> None:
        state["cold"] = True

    def warms_up() -> None:
        time.sleep(0.02 if state["cold"] else 0.001)
        state["cold"] = False

    backend = MLIRBackend()
    other_ms, warm_ms = backend.get_interleaved_bench()([other, warms_up], repeat=3)
    assert warm_ms < 5 and other_ms < 1
    cold_ms = interleaved_bench_generic([other, warms_up], repeat=3)[1]
    assert cold_ms > 15
