"""Helion's `mlir` backend: plain calls, `bind`, configs, `code_and_output`, `HELION_BACKEND`,
Triton-only knobs, our errors, and kernels whose code Helion itself generates."""

from __future__ import annotations

import pathlib
import re
import sys
import textwrap

import helion
import helion.language as hl
import pytest
import torch
from helion._testing import code_and_output

import helion_fx_mlir  # noqa: F401 - registers the backend
from helion_fx_mlir.errors import HelionMLIRError, LoweringError

SOURCE = textwrap.dedent("""
    import helion
    import helion.language as hl
    import torch

    @helion.kernel(backend="mlir", static_shapes=True)
    def shifted(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for t in hl.tile(x.size(0)):
            out[t] = x[t] + 0.5
        return out
""")


def test_a_kernel_from_a_module_python_never_registered_runs(tmp_path: pathlib.Path) -> None:
    """Helion's autodiff execs its backward kernels in globals named after a module that
    is not in sys.modules: the host code still finds its globals (this was a KeyError)."""
    path = tmp_path / "generated.py"
    path.write_text(SOURCE)
    scope = {"__name__": "generated_not_registered"}
    exec(compile(SOURCE, str(path), "exec"), scope)
    assert "generated_not_registered" not in sys.modules
    x = torch.randn(45)
    torch.testing.assert_close(scope["shifted"](x), x + 0.5)


@helion.kernel(backend="mlir", static_shapes=True, configs=[helion.Config(block_sizes=[8, 32])])
def bias_rows(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn] = torch.relu(x[tm, tn] + bias[tn])
    return out


@helion.kernel(backend="mlir", static_shapes=True)
def matmul_bias(x: torch.Tensor, y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0), y.size(1)], dtype=x.dtype, device=x.device)
    for tm, tn in hl.tile([x.size(0), y.size(1)]):
        acc = hl.zeros([tm, tn], dtype=torch.float32)
        for tk in hl.tile(x.size(1)):
            acc = torch.addmm(acc, x[tm, tk], y[tk, tn])
        out[tm, tn] = acc + bias[tn]
    return out


@helion.kernel(backend="mlir", static_shapes=True)
def inline_asm(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for t in hl.tile(x.size(0)):
        out[t] = hl.inline_asm_elementwise(
            "mov.b32 $0, $1;", "=r,r", [x[t]], dtype=torch.float32, is_pure=True, pack=1
        )
    return out


def test_plain_calls_bind_and_configs_run_through_the_backend() -> None:
    """A plain call runs the kernel's `configs=` entry; `set_config`, `bind` and
    `code_and_output` with another config give the same numbers, on shapes no block divides."""
    x, bias = torch.randn(37, 45), torch.randn(45)
    want = torch.relu(x + bias)
    torch.testing.assert_close(bias_rows(x, bias), want)
    bound = bias_rows.bind((x, bias))
    assert 'helion.kernel = "bias_rows"' in bound.to_code()
    torch.testing.assert_close(
        bound.compile_config(helion.Config(block_sizes=[16, 4]))(x, bias), want
    )
    code, out = code_and_output(bias_rows, (x, bias), block_sizes=[1, 64])
    assert "loom.block_size_0 = 1" in code
    torch.testing.assert_close(out, want)


def test_helion_backend_environment_variable_selects_the_backend(monkeypatch) -> None:
    monkeypatch.setenv("HELION_BACKEND", "mlir")

    @helion.kernel(static_shapes=True)
    def halve(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        for t in hl.tile(x.size(0)):
            out[t] = x[t] * 0.5
        return out

    x = torch.randn(29)
    torch.testing.assert_close(halve(x), x * 0.5)
    assert 'helion.kernel = "halve"' in halve.bind((x,)).to_code()


def test_triton_only_knobs_leave_the_config() -> None:
    """`epilogue_subtile` splits Triton's epilogue stores (GPU register pressure): the
    matmul runs with it as without."""
    x, y, bias = torch.randn(37, 50), torch.randn(50, 45), torch.randn(45)
    for subtile in (None, 2):
        config = helion.Config(block_sizes=[16, 16, 16], epilogue_subtile=subtile)
        got = matmul_bias.bind((x, y, bias)).compile_config(config)(x, y, bias)
        torch.testing.assert_close(got, x @ y + bias, rtol=1e-4, atol=1e-4)


def test_other_devices_and_unlowerable_kernels_get_our_errors() -> None:
    with pytest.raises(HelionMLIRError, match="runs on the CPU; the arguments are on 'meta'"):
        bias_rows(torch.randn(8, 8, device="meta"), torch.randn(8, device="meta"))
    with pytest.raises(
        LoweringError,
        match=rf"inline_asm_elementwise.*at {re.escape(__file__)}:\d+: no lowering rule",
    ):
        inline_asm(torch.randn(10))
