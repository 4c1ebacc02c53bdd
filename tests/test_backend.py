"""Helion's `mlir` backend on kernels whose code Helion itself generates."""

from __future__ import annotations

import pathlib
import sys
import textwrap

import torch

import helion_fx_mlir  # noqa: F401 - registers the backend

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
    exec(compile(SOURCE, str(path), "exec"), scope)  # noqa: S102 - our own source text
    assert "generated_not_registered" not in sys.modules
    x = torch.randn(45)
    torch.testing.assert_close(scope["shifted"](x), x + 0.5)
