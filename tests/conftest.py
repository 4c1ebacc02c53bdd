"""Shared fixtures: example cases as pytest parameters."""

from __future__ import annotations

import pytest
import torch

from helion_fx_mlir.examples import EXAMPLES

CASES = [
    pytest.param(name, dtype, id=f"{name}-{str(dtype).removeprefix('torch.')}")
    for name, example in EXAMPLES.items()
    for dtype in example.dtypes
]


@pytest.fixture(autouse=True)
def _single_thread() -> None:
    torch.set_num_threads(1)


# A miniature Helion test/ directory that tests/test_conformance.py runs through the plugin
# (one of its tests kills its process on purpose).
collect_ignore = ["conformance_suite"]
