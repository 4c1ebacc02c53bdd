"""The disk cache of compiled kernels and launchers: hits skip compiling (and, through the
backend, binding), corrupt or stale entries are rebuilt with one warning, processes
racing to write one entry both succeed, and kernels whose meaning leaves their file are
not cached."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import helion
import helion.language as hl
import pytest
import torch
from helion.runtime.kernel import Kernel

import helion_fx_mlir  # noqa: F401 - registers the backend
from helion_fx_mlir.frontend.lowering_context import resolve_config
from helion_fx_mlir.runtime import jit, kernel_cache, launchers


@pytest.fixture
def cache(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The cache on, in a directory of the test's own."""
    monkeypatch.setenv("HELION_FX_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(kernel_cache.DISABLE_ENV, "1")
    return tmp_path / "cache"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the kernels compiled from here on (a cache hit compiles none)."""
    names: list[str] = []
    compile_ = jit._compile

    def counted(bound: Any, config: Any, bounds_checks: bool) -> jit.Engine:
        names.append(bound.kernel.name)
        return compile_(bound, config, bounds_checks)

    monkeypatch.setattr(jit, "_compile", counted)
    return names


def gated_sum(x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    rows = torch.empty([x.size(0)], dtype=x.dtype, device=x.device)
    for tm in hl.tile(x.size(0)):
        acc = hl.zeros([tm], dtype=torch.float32)
        for tn in hl.tile(x.size(1)):
            acc = acc + (x[tm, tn] * torch.sigmoid(gate[tm, tn])).sum(dim=1)
        rows[tm] = acc
    return rows


def gated_kernel(**settings: Any) -> Kernel:
    """A fresh kernel object over the same function: a new process's view of it."""
    return helion.kernel(
        gated_sum,
        backend="mlir",
        static_shapes=True,
        config=helion.Config(block_sizes=[8, 16]),
        **settings,
    )


def gated_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(37, 53), torch.randn(37, 53)


def expected(x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    return (x * torch.sigmoid(gate)).sum(dim=1)


def run_compiled(kernel: Kernel) -> None:
    x, gate = gated_inputs()
    compiled = jit.compile_kernel(kernel.bind((x, gate)))
    torch.testing.assert_close(compiled(x, gate), expected(x, gate))


def entries(cache: pathlib.Path, kind: str) -> list[pathlib.Path]:
    return sorted((cache / kind).iterdir()) if (cache / kind).is_dir() else []


def test_a_compiled_kernel_is_loaded_from_disk(cache: pathlib.Path, compiles: list[str]) -> None:
    run_compiled(gated_kernel())
    (entry,) = entries(cache, kernel_cache.KIND)
    assert {p.name for p in entry.iterdir()} == {kernel_cache.LIBRARY, kernel_cache.META}
    run_compiled(gated_kernel())
    assert compiles == ["gated_sum"]


def scaled_rows(x: torch.Tensor, scale: float) -> torch.Tensor:
    rows = torch.empty([x.size(0)], dtype=x.dtype, device=x.device)
    for tm in hl.tile(x.size(0)):
        rows[tm] = x[tm, :].sum(dim=1) * scale
    return rows


def test_a_kernel_taking_a_float_is_cached_and_takes_its_value_at_run_time(
    cache: pathlib.Path, compiles: list[str]
) -> None:
    """Helion traces a float argument as a symbol: the cached code serves every value."""
    x = torch.randn(37, 53)
    for scale in (0.5, 3.0):
        kernel = helion.kernel(scaled_rows, static_shapes=True)
        compiled = jit.compile_kernel(kernel.bind((x, scale)))
        torch.testing.assert_close(compiled(x, scale), x.sum(dim=1) * scale)
    assert compiles == ["scaled_rows"]


def row_gain(x: torch.Tensor, gain: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn] = x[tm, tn] * gain[tm, tn]
    return out


@pytest.mark.parametrize("first", ["column", "rows"])
def test_a_cached_kernel_of_dynamic_shapes_keeps_the_guards_its_code_was_generated_under(
    cache: pathlib.Path, compiles: list[str], first: str
) -> None:
    """Generating `row_gain` at a gain of one column broadcasts that column, under Helion's
    guard `size == 1`, which keys its bound kernels: a gain of whole rows binds its own.
    The guard is not in the file, so a later process (a fresh kernel object) must neither
    load the broadcast code for whole rows (the key holds each size as 0, 1 or more) nor,
    having loaded it for one column, run it for whole rows (its frontend runs again to
    guard its bound kernel)."""
    x = torch.randn(37, 45)
    gains = {"column": torch.randn(37, 1), "rows": torch.randn(37, 45)}
    order = [gains[first], *(g for name, g in gains.items() if name != first)]
    config = helion.Config(block_sizes=[8, 16])
    for _ in range(2):
        kernel = helion.kernel(row_gain, static_shapes=False, config=config)
        compiled = jit.compile_kernel(kernel.bind((x, order[0])))
        for gain in order:
            torch.testing.assert_close(compiled(x, gain), x * gain)
    assert compiles == ["row_gain", "row_gain"]


@pytest.mark.parametrize("damage", ["library", "metadata", "format"])
def test_a_corrupt_or_stale_entry_is_rebuilt_with_one_warning(
    cache: pathlib.Path, compiles: list[str], damage: str
) -> None:
    run_compiled(gated_kernel())
    (entry,) = entries(cache, kernel_cache.KIND)
    if damage == "library":
        (entry / kernel_cache.LIBRARY).write_bytes(b"\x7fELF not really")
    elif damage == "metadata":
        (entry / kernel_cache.META).write_text("{ truncated")
    else:
        meta = json.loads((entry / kernel_cache.META).read_text())
        (entry / kernel_cache.META).write_text(json.dumps({**meta, "format": 0}))
    with pytest.warns(UserWarning, match="is unusable") as warned:
        run_compiled(gated_kernel())
    # Ours only: a warning torch or Helion gives once per process may fall in this block,
    # depending on which tests this worker ran first.
    ours = [str(w.message) for w in warned if str(w.message).startswith("helion-fx-mlir:")]
    assert len(ours) == 1, [f"{w.category.__name__}: {w.message}" for w in warned]
    run_compiled(gated_kernel())
    assert compiles == ["gated_sum", "gated_sum"]


def test_a_cached_call_through_the_backend_skips_binding(
    cache: pathlib.Path, compiles: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    x, gate = gated_inputs()
    torch.testing.assert_close(gated_kernel()(x, gate), expected(x, gate))
    assert len(entries(cache, launchers.KIND)) == 1

    def no_bind(*args: Any) -> Any:
        raise AssertionError("a cached call bound the kernel")

    monkeypatch.setattr(Kernel, "bind", no_bind)
    kernel = gated_kernel()
    torch.testing.assert_close(kernel(x, gate), expected(x, gate))
    torch.testing.assert_close(kernel(x + 1, gate), expected(x + 1, gate))
    assert compiles == ["gated_sum"]


def test_a_corrupt_launcher_is_recorded_again(cache: pathlib.Path, compiles: list[str]) -> None:
    x, gate = gated_inputs()
    gated_kernel()(x, gate)
    (entry,) = entries(cache, launchers.KIND)
    (entry / launchers.FILE).write_text('{"format": 1, "eng')
    with pytest.warns(UserWarning, match="is unusable"):
        torch.testing.assert_close(gated_kernel()(x, gate), expected(x, gate))
    assert json.loads((entry / launchers.FILE).read_text())["host"]["name"] == "gated_sum"
    assert compiles == ["gated_sum"]  # the compiled kernel itself was still good


def test_settings_and_configs_key_the_launcher(cache: pathlib.Path, compiles: list[str]) -> None:
    x, gate = gated_inputs()
    gated_kernel()(x, gate)
    other = helion.kernel(
        gated_sum, backend="mlir", static_shapes=True, config=helion.Config(block_sizes=[4, 32])
    )
    torch.testing.assert_close(other(x, gate), expected(x, gate))
    assert len(entries(cache, launchers.KIND)) == 2
    assert compiles == ["gated_sum", "gated_sum"]


def test_a_call_with_tensors_recording_gradients_takes_helions_path(cache: pathlib.Path) -> None:
    """Autograd and tensor subclasses are Helion's to route: no launcher is recorded."""
    x, gate = gated_inputs()
    with torch.no_grad():
        got = gated_kernel()(x.requires_grad_(), gate)
    torch.testing.assert_close(got, expected(x.detach(), gate))
    assert entries(cache, launchers.KIND) == []


def offset_rows(x: torch.Tensor, offset: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    out = torch.empty_like(x)
    for t in hl.tile(x.size(0)):
        out[t] = offset(x[t])
    return out


def test_a_kernel_taking_a_callable_is_not_cached(cache: pathlib.Path) -> None:
    """A callable's captured values may be compiled in, and nothing on disk names them."""
    kernel = helion.kernel(offset_rows, backend="mlir", config=helion.Config(block_sizes=[16]))
    x = torch.randn(40)
    for shift in (1.0, 2.0):
        torch.testing.assert_close(kernel(x, lambda v, s=shift: v + s), x + shift)
    assert not cache.exists()


SCRIPT = textwrap.dedent("""
    import sys

    import helion
    import helion.language as hl
    import torch

    import helion_fx_mlir
    from helion.runtime.kernel import Kernel
    from helion_fx_mlir.runtime import jit


    @helion.kernel(backend="mlir", static_shapes=True, config=helion.Config(block_sizes=[16, 8]))
    def shifted_softplus(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for tm, tn in hl.tile(x.size()):
            out[tm, tn] = torch.nn.functional.softplus(x[tm, tn]) - shift[tm, None]
        return out


    def refuse(*args, **kwargs):
        raise AssertionError("the cached process compiled or bound the kernel")


    if sys.argv[1] == "cached":
        jit._compile = refuse
        Kernel.bind = refuse
    x, shift = torch.randn(41, 29), torch.randn(41)
    got = shifted_softplus(x, shift)
    torch.testing.assert_close(got, torch.nn.functional.softplus(x) - shift[:, None])
    print("ok")
""")


def processes(tmp_path: pathlib.Path, cache: pathlib.Path, *modes: str) -> list[Any]:
    """Run the script in one new process per mode, all at once."""
    script = tmp_path / "shifted.py"
    script.write_text(SCRIPT)
    running = [
        subprocess.Popen(
            [sys.executable, str(script), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for mode in modes
    ]
    return [(p, *p.communicate(timeout=300)) for p in running]


def test_two_processes_writing_one_entry_both_succeed_and_a_third_neither_compiles_nor_binds(
    tmp_path: pathlib.Path, cache: pathlib.Path
) -> None:
    for process, out, err in processes(tmp_path, cache, "fresh", "fresh"):
        assert process.returncode == 0 and out.strip() == "ok", err
    assert len(entries(cache, kernel_cache.KIND)) == len(entries(cache, launchers.KIND)) == 1
    kinds = (cache / kernel_cache.KIND, cache / launchers.KIND)
    assert not [p.name for kind in kinds for p in kind.iterdir() if p.name.startswith(".")]
    ((process, out, err),) = processes(tmp_path, cache, "cached")
    assert process.returncode == 0 and out.strip() == "ok", err


def test_the_engine_key_follows_config_and_checks(cache: pathlib.Path) -> None:
    x, gate = gated_inputs()
    bound = gated_kernel().bind((x, gate))
    config = resolve_config(bound, None)
    keys = {
        kernel_cache.engine_key(bound, config, False),
        kernel_cache.engine_key(bound, config, True),
        kernel_cache.engine_key(bound, resolve_config(bound, {"block_sizes": [4, 4]}), False),
    }
    assert len(keys) == 3 and None not in keys
