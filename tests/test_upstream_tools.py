"""A second, independent MLIR build (upstream LLVM 22.1 mlir-opt / mlir-runner) agrees with ours."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from cases import linalg_text
from helion_fx_mlir import compile_kernel
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.tools import upstream_check
from helion_fx_mlir.tools.upstream_check import (
    as_printed,
    parse_printed_memrefs,
    run_llvm_text,
    run_with_mlir_runner,
    verify_with_mlir_opt,
)

needs_tools = pytest.mark.usefixtures("upstream_tools")

RUNNER_KERNELS = ("matmul", "softmax", "layer_norm")


@needs_tools
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_linalg_output_verifies_with_upstream_mlir_opt(name: str) -> None:
    """LLVM 22.1 reads and verifies the text torch-mlir's bindings print.
    tests/test_literals.py covers the literals of every dtype. One mlir-opt process per
    kernel (~40 ms), run beside the kernel's other tests, which bind and lower it already:
    a single run over every kernel would have one worker bind them all again."""
    result = verify_with_mlir_opt(linalg_text(name), f"{name}.mlir")
    assert result.ok, (
        f"upstream mlir-opt rejects {name} ({EXAMPLES[name].dtypes[0]}) after "
        "--helion-lower-to-linalg:\n" + "\n".join(result.diagnostics)
    )
    assert result.returncode == 0


@needs_tools
def test_mlir_opt_diagnostics_are_returned_not_raised() -> None:
    text = "func.func @f(%a: tensor<4xf32>) -> tensor<4xi32> {\n  return %a : tensor<4xf32>\n}\n"
    result = verify_with_mlir_opt(text, "bad.mlir")
    assert not result.ok
    assert result.returncode == 1
    assert result.diagnostics[0].startswith("bad.mlir:2:3: error: type of return operand 0")


@needs_tools
@pytest.mark.parametrize("name", RUNNER_KERNELS)
def test_mlir_runner_prints_the_in_process_numbers(name: str) -> None:
    example = EXAMPLES[name]
    args = example.args(torch.float32)
    bound = example.kernel.bind(args)
    got = run_with_mlir_runner(bound, *args)
    torch.testing.assert_close(got, as_printed(compile_kernel(bound)(*args)))


def test_printed_memrefs_parse_back() -> None:
    stdout = (
        "Unranked Memref base@ = 0x1 rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data = \n"
        "[[1.5,   -2e-07], \n [inf,   -0.000999451]]\n"
        "Unranked Memref base@ = 0x2 rank = 0 offset = 0 sizes = [] strides = [] data = \n[-7]\n"
    )
    floats, ints = parse_printed_memrefs(stdout, [torch.float32, torch.int64])
    torch.testing.assert_close(floats, torch.tensor([[1.5, -2e-7], [float("inf"), -0.000999451]]))
    assert ints.shape == () and ints.item() == -7


@needs_tools
def test_mlir_runner_exits_cleanly_while_the_machine_is_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mlir-runner dlcloses its -shared-libs at exit; the OpenMP runtime's pool threads spun
    in it after the kernel and crashed (SIGSEGV) when it was unmapped, about 1 run in 30
    with four runs at once. Preloaded, it stays mapped: 24 runs, four at a time, all exit 0.
    `add` has an OpenMP grid like layer_norm's and JIT-compiles in a fifth of the time."""
    example = EXAMPLES["add"]
    args = example.args(torch.float32)
    texts: list[str] = []
    monkeypatch.setattr(
        upstream_check, "run_llvm_text", lambda text: texts.append(text) or run_llvm_text(text)
    )
    run_with_mlir_runner(example.kernel.bind(args), *args)
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(lambda _: run_llvm_text(texts[0]), range(24)))
    assert all("Unranked Memref" in out for out in outputs)
