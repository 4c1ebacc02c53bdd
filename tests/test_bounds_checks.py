"""compile_kernel(bounds_checks=True): every memory access of the JIT'd code is verified.

A failed check aborts the process, so each run happens in a child process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helion_fx_mlir.examples import EXAMPLES, jagged_moe

# Kernels whose indices come from data: gathers, scatters with extra_mask, jagged bounds.
DATA_DEPENDENT = sorted({example.name for example in jagged_moe.EXAMPLES} | {"cross_entropy", "gather_gemv"})


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=900)


def test_data_dependent_kernels_stay_in_bounds() -> None:
    assert set(DATA_DEPENDENT) <= set(EXAMPLES)
    child = run_child(f"""
        import torch
        from helion_fx_mlir import compile_kernel
        from helion_fx_mlir.examples import EXAMPLES
        for name in {DATA_DEPENDENT!r}:
            example = EXAMPLES[name]
            for dtype in example.dtypes:
                args = example.args(dtype)
                got = compile_kernel(example.kernel.bind(args), bounds_checks=True)(*args)
                torch.testing.assert_close(got, example.reference(*args))
    """)
    assert child.returncode == 0, child.stdout + child.stderr


def test_an_out_of_bounds_gather_aborts_naming_the_kernel_line() -> None:
    """Eager PyTorch raises on a bad index; unchecked JIT code would read past the buffer."""
    child = run_child("""
        import torch
        from helion_fx_mlir import compile_kernel
        from helion_fx_mlir.examples import EXAMPLES
        example = EXAMPLES["gather_gemv"]
        w, idx, x = example.args()
        idx[3] = w.size(0) + 5
        compile_kernel(example.kernel.bind((w, idx, x)), bounds_checks=True)(w, idx, x)
    """)
    assert child.returncode != 0
    assert "out-of-bounds" in child.stderr + child.stdout
    line = next(i for i, text in enumerate(open(EXAMPLES["gather_gemv"].kernel.fn.__code__.co_filename), 1)
                if "mats = w[rows, tile_m, tile_k]" in text)
    assert f'matmuls.py":{line}:' in child.stderr + child.stdout
