"""Unsupported input fails with one error type naming the node, target and source line."""

from __future__ import annotations

import re
import subprocess
import sys

import helion
import helion.language as hl
import pytest
import torch
from helion.language import _tracing_ops

from helion_fx_mlir import LoweringError, MLIRTextError, compile_kernel, generate_mlir
from helion_fx_mlir.errors import HelionMLIRError, InternalError
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.frontend import dispatch, rules  # noqa: F401 - importing rules fills LOWERINGS


def test_node_without_rule_names_node_target_and_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(dispatch.LOWERINGS, _tracing_ops._phi)
    with pytest.raises(LoweringError) as err:
        generate_mlir(EXAMPLES["matmul"].bind())
    message = str(err.value)
    assert "'_phi'" in message
    assert "helion.language._tracing_ops._phi" in message
    assert re.search(r"kernels\.py:\d+", message)
    assert err.value.node_name == "_phi"


def test_bugs_inside_a_rule_are_internal_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(cx: object) -> None:
        raise KeyError("boom")

    monkeypatch.setitem(dispatch.LOWERINGS, _tracing_ops._new_var, broken)
    with pytest.raises(InternalError, match=r"bug in helion-fx-mlir.*'_new_var'.*KeyError") as err:
        generate_mlir(EXAMPLES["matmul"].bind())
    assert err.value.node_name == "_new_var"
    assert err.value.target == "helion.language._tracing_ops._new_var"
    assert re.search(r"kernels\.py:\d+", err.value.source)
    assert not isinstance(err.value, LoweringError)


def test_unsupported_input_inside_a_rule_is_a_lowering_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unsupported(cx: object) -> None:
        raise HelionMLIRError("not supported here")

    monkeypatch.setitem(dispatch.LOWERINGS, _tracing_ops._new_var, unsupported)
    with pytest.raises(LoweringError, match=r"'_new_var'.*not supported here"):
        generate_mlir(EXAMPLES["matmul"].bind())


def test_source_line_points_at_the_kernel_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(dispatch.LOWERINGS, _tracing_ops._phi)
    with pytest.raises(LoweringError) as err:
        generate_mlir(EXAMPLES["matmul"].bind())
    path, line = err.value.source.rsplit(":", 1)
    source = open(path).read().splitlines()[int(line) - 1]
    assert "for tile_k in hl.tile(k)" in source or "acc" in source


@pytest.mark.parametrize("first", ["helion_fx_mlir", "helion"])
def test_stripped_inputs_are_recorded_whichever_package_is_imported_first(first: str) -> None:
    script = (
        f"import {first}\n"
        "import helion_fx_mlir, helion, torch\n"
        "from helion_fx_mlir.examples import EXAMPLES\n"
        "e = EXAMPLES['layer_norm']\n"
        "args = e.args()\n"
        "got = helion_fx_mlir.compile_kernel(e.kernel.bind(args))(*args)\n"
        "torch.testing.assert_close(got, e.reference(*args))\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr[-2000:]


def test_tools_for_mlir_text_do_not_import_torch_or_helion() -> None:
    script = (
        "import sys, helion_fx_mlir.tools.opt, helion_fx_mlir.tools.cli; "
        "print('torch' in sys.modules, 'helion' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


@helion.kernel(static_shapes=True)
def sort_rows(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile, :] = torch.sort(x[tile, :], dim=-1).values
    return out


def test_ops_torch_mlir_lowers_to_tm_tensor_fail_at_the_kernel_line() -> None:
    """torch.sort becomes tm_tensor.sort, which CPU bufferization cannot take."""
    x = torch.randn(37, 20)
    with pytest.raises(MLIRTextError) as err:
        compile_kernel(sort_rows.bind((x,)))
    line = next(
        i for i, text in enumerate(open(__file__).read().splitlines(), 1) if "torch.sort(" in text
    )
    assert f"test_errors.py:{line}:" in str(err.value)
    assert "tm_tensor.sort" in str(err.value)


@helion.kernel(static_shapes=True)
def flip_rows(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile, :] = torch.flip(x[tile, :], dims=[1])
    return out


def test_flip_of_a_tile_is_refused_at_its_node() -> None:
    """A row of 20 in 32 lanes: reversed, the masked lanes would come first."""
    with pytest.raises(LoweringError, match=r"'rev' \(target prims.rev.default\).*torch.flip"):
        compile_kernel(flip_rows.bind((torch.randn(37, 20),)))
