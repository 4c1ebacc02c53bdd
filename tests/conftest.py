"""Shared fixtures and the grouping of each sample kernel's tests on one worker.

Imports nothing heavy at module level: pytest-xdist's controller loads this file but runs
no test, and torch, Helion and torch-mlir cost it seconds of a core the workers need."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from helion_fx_mlir.tools.upstream_check import UpstreamTools

# Each test compiles what it runs: the disk cache of compiled kernels would let a kernel
# compiled by an earlier test (or run) skip the code a test patches. The cache's own tests
# turn it on, in a directory of their own.
os.environ["HELION_FX_MLIR_DISK_CACHE"] = "0"
# A kernel without a config runs the default one, as in Helion's own tests; the autotuning
# tests ask for a search on the kernel (`autotune_effort=`).
os.environ["HELION_AUTOTUNE_EFFORT"] = "none"


@pytest.fixture(autouse=True)
def _single_thread_seeded() -> None:
    """One thread, and the same random inputs whatever ran before (a test's tolerance then
    holds or fails every time)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)


@pytest.fixture(params=[32, 16], ids=["avx512", "no-avx512"])
def vector_registers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Kernels compiled as for a CPU with this many vector registers (32: AVX-512, whose
    instructions the passes then use; 16: the code every x86-64 CPU with AVX2 runs)."""
    from helion_fx_mlir import host_cpu
    from helion_fx_mlir.runtime import jit

    monkeypatch.setattr(host_cpu, "vector_registers", lambda: request.param)
    monkeypatch.setattr(jit, "_ENGINES", {})
    return int(request.param)


@pytest.fixture(scope="session")
def upstream_tools() -> UpstreamTools:
    """The upstream mlir-opt/mlir-runner; their tests fail without them, as a skip would
    pass unnoticed (make setup installs them)."""
    from helion_fx_mlir.tools.upstream_check import INSTALL_HINT, find_tools

    tools = find_tools()
    assert tools is not None, f"upstream mlir-opt/mlir-runner are not installed: {INSTALL_HINT}"
    return tools


# A miniature Helion test/ directory that tests/test_conformance.py runs through the plugin
# (one of its tests kills its process on purpose).
collect_ignore = ["conformance_suite"]


# The longest tests start first, so no worker is left with one at the end.
LONG_FIRST = ["test_fuzz.py", "test_conformance.py", "test_programs.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of one sample kernel run on one xdist worker (`--dist loadgroup`): Helion traces
    a kernel once per argument signature and process, and tracing costs more than most
    tests. So no test walks every kernel at once: each module's per-kernel check is a
    test parametrized by `name`, run beside that kernel's others."""
    from helion_fx_mlir.examples import EXAMPLES

    items.sort(key=lambda item: item.path.name not in LONG_FIRST)
    for item in items:
        params = getattr(item, "callspec", None)
        name = params.params.get("name") if params else None
        if name in EXAMPLES:
            item.add_marker(pytest.mark.xdist_group(name))
