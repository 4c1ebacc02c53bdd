"""The sample kernels as test parameters, and what several test modules read of each."""

from __future__ import annotations

import functools

import pytest

from helion_fx_mlir import generate_mlir, lower_to_linalg
from helion_fx_mlir.examples import EXAMPLES

CASES = [
    pytest.param(name, dtype, id=f"{name}-{str(dtype).removeprefix('torch.')}")
    for name, example in EXAMPLES.items()
    for dtype in example.dtypes
]


@functools.cache
def linalg_text(name: str) -> str:
    """The example's MLIR (first dtype, default config) after --helion-lower-to-linalg,
    once per worker for the tests that read it."""
    return lower_to_linalg(generate_mlir(EXAMPLES[name].bind()))
