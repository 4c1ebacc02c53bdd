"""The main job end to end: bind a matmul, print its MLIR, validate, compile, run, compare."""

from __future__ import annotations

import sys

import torch

from helion_fx_mlir import compile_kernel, generate_mlir, lower_to_linalg, validate_with_helion_opt
from helion_fx_mlir.examples import EXAMPLES


def main() -> int:
    example = EXAMPLES["matmul"]
    x, y = example.args()
    bound = example.kernel.bind((x, y))
    print(
        f"# Helion matmul, x: {tuple(x.shape)}, y: {tuple(y.shape)} "
        "(extents not divisible by the block sizes)"
    )
    text = generate_mlir(bound)
    print(text)
    result = validate_with_helion_opt(text)
    print(f"# validate_with_helion_opt: {'ok' if result.ok else 'FAILED'}")
    for diag in result.diagnostics:
        print(diag)
    if not result.ok:
        return 1
    linalg = lower_to_linalg(text)
    print(f"# lower_to_linalg: {linalg.count(chr(10))} lines, {linalg.count('linalg.')} linalg ops")
    got = compile_kernel(bound)(x, y)
    want = x @ y
    error = (got - want).abs().max().item()
    print(
        f"# compiled on CPU and ran: output {tuple(got.shape)}, max |MLIR - PyTorch| = {error:.3g}"
    )
    torch.testing.assert_close(got, want)
    print("# matches eager PyTorch (torch.testing.assert_close)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
