"""generate_mlir: deterministic, valid, registered dialects only, in the target shape."""

from __future__ import annotations

import os
import subprocess
import sys

import helion
import pytest
import torch
from torch_mlir import ir

from cases import CASES, linalg_text
from helion_fx_mlir import generate_mlir, lower_to_llvm, validate_with_helion_opt
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_output_validates(name: str, dtype: torch.dtype) -> None:
    result = validate_with_helion_opt(generate_mlir(EXAMPLES[name].bind(dtype)))
    assert result.ok, result.diagnostics
    assert result.diagnostics == []


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_same_kernel_and_config_give_the_same_bytes(name: str) -> None:
    example = EXAMPLES[name]
    first = generate_mlir(example.bind())
    assert generate_mlir(example.bind()) == first
    assert generate_mlir(example.kernel.bind(example.args(seed=1))) == first


def test_same_bytes_across_processes() -> None:
    """A child process (its own string hash seed, its own object ids) prints ours."""
    script = (
        "from helion_fx_mlir.examples import EXAMPLES; from helion_fx_mlir import generate_mlir;"
        "import sys; sys.stdout.write(generate_mlir(EXAMPLES['softmax_two_pass'].bind()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    assert child.stdout == generate_mlir(EXAMPLES["softmax_two_pass"].bind())


def test_config_block_sizes_become_module_attributes() -> None:
    text = generate_mlir(EXAMPLES["matmul"].bind(), config=helion.Config(block_sizes=[64, 32, 16]))
    assert (
        "loom.block_size_0 = 64 : index, loom.block_size_1 = 32 : index, "
        "loom.block_size_2 = 16 : index" in text
    )
    assert text.count('"loom.get_symbol"') == 3


def test_kernel_name_override() -> None:
    text = generate_mlir(EXAMPLES["add"].bind(), "my_add")
    assert 'helion.kernel = "my_add"' in text and "func.func @my_add(" in text


def _op_names(text: str) -> set[str]:
    names: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        names.add(op.name)
        return ir.WalkResult.ADVANCE

    parse_module(text).operation.walk(visit)
    return names


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_lower_to_linalg_leaves_no_torch_helion_or_loom_ops(name: str) -> None:
    linalg = linalg_text(name)
    leftovers = {
        op for op in _op_names(linalg) if op.split(".")[0] in ("torch", "torch_c", "helion", "loom")
    }
    assert not leftovers
    assert validate_with_helion_opt(linalg).ok


def test_lower_to_llvm_gives_llvm_dialect() -> None:
    llvm = lower_to_llvm(generate_mlir(EXAMPLES["matmul"].bind()))
    assert "llvm.func @matmul(" in llvm and "llvm.func @_mlir_ciface_matmul(" in llvm
    for leftover in ("scf.", "affine.", "tensor.", "linalg.", "memref."):
        assert leftover not in llvm


def _op_lines(text: str) -> list[str]:
    skip = ("module", "^", "}", "func.func")
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith(skip) and not line.strip().endswith("{")
    ]


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_debug_info_puts_a_kernel_location_on_every_op(name: str) -> None:
    text = generate_mlir(EXAMPLES[name].bind(), debug_info=True)
    assert validate_with_helion_opt(text).ok
    source = EXAMPLES[name].kernel.fn.__code__.co_filename
    for line in _op_lines(text):
        assert f'loc("{source}":' in line, line
    assert "loc(" not in generate_mlir(EXAMPLES[name].bind())


def test_verifier_diagnostics_on_emitted_ir_point_at_the_kernel_line() -> None:
    text = generate_mlir(EXAMPLES["matmul"].bind(), debug_info=True)
    broken = text.replace('{name = "block_size_2"}', '{nom = "block_size_2"}')
    result = validate_with_helion_opt(broken, "matmul.mlir")
    assert not result.ok
    path, line, _col = result.diagnostics[0].split(":")[:3]
    assert path.endswith("examples/kernels.py"), result.diagnostics
    assert "def matmul(" in open(path).read().splitlines()[int(line) - 1]
