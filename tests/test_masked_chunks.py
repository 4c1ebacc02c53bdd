"""Masked loads and stores split into 256-bit chunks keep their meaning: lanes on read
and write memory, lanes off take the pass-through and write nothing, at -O3.

The LLVM miscompile the split avoids shows only in whole kernels (on AVX2 CPUs):
`test_fast_pipeline_matches_eager[sum_rows]` and the other fast-pipeline tests are its
regression tests."""

from __future__ import annotations

import ctypes

import pytest
import torch
from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.passes.masked_chunks import split_masked_memory_ops
from helion_fx_mlir.runtime.jit import OPT_LEVEL

LANES = 128
IOTA = ", ".join(map(str, range(LANES)))

# copy(src, dst, seen, n): dst[i] = src[i] for i < n (the rest untouched) through a masked
# load and store, and seen = the loaded vector, whose lanes from n on hold the pass-through.
COPY = f"""
module {{
  llvm.func @copy(%src: !llvm.ptr, %dst: !llvm.ptr, %seen: !llvm.ptr, %n: i64) {{
    %iota = llvm.mlir.constant(dense<[{IOTA}]> : vector<{LANES}xi64>) : vector<{LANES}xi64>
    %pass = llvm.mlir.constant(dense<-2.5> : vector<{LANES}xf32>) : vector<{LANES}xf32>
    %zero = llvm.mlir.constant(0 : i32) : i32
    %poison = llvm.mlir.poison : vector<{LANES}xi64>
    %one = llvm.insertelement %n, %poison[%zero : i32] : vector<{LANES}xi64>
    %ns = llvm.shufflevector %one, %poison [{", ".join("0" for _ in range(LANES))}] : vector<{LANES}xi64>
    %mask = llvm.icmp "slt" %iota, %ns : vector<{LANES}xi64>
    %v = llvm.intr.masked.load %src, %mask, %pass {{alignment = 4 : i32}} : (!llvm.ptr, vector<{LANES}xi1>, vector<{LANES}xf32>) -> vector<{LANES}xf32>
    llvm.intr.masked.store %v, %dst, %mask {{alignment = 4 : i32}} : vector<{LANES}xf32>, vector<{LANES}xi1> into !llvm.ptr
    llvm.store %v, %seen {{alignment = 4 : i64}} : vector<{LANES}xf32>, !llvm.ptr
    llvm.return
  }}
}}
"""


def compiled_copy() -> tuple[ir.Module, ExecutionEngine]:
    with mlir_context():
        module = ir.Module.parse(COPY)
        split_masked_memory_ops(module)
        module.operation.verify()
        return module, ExecutionEngine(module, opt_level=OPT_LEVEL)


def test_wide_masked_ops_become_256_bit_chunks() -> None:
    module, _ = compiled_copy()
    text = str(module)
    assert text.count("llvm.intr.masked.load") == LANES // 8
    assert text.count("llvm.intr.masked.store") == LANES // 8
    assert f"vector<{LANES}xi1>) -> vector<{LANES}xf32>" not in text


@pytest.mark.parametrize("n", [0, 5, 100, 128])
def test_chunks_read_and_write_only_the_lanes_on(n: int) -> None:
    _, engine = compiled_copy()
    src = torch.arange(LANES, dtype=torch.float32) + 1
    dst = torch.full([LANES], -1.0)
    seen = torch.zeros(LANES)
    pointers = [ctypes.c_void_p(t.data_ptr()) for t in (src, dst, seen)]
    count = ctypes.c_int64(n)
    packed = (ctypes.c_void_p * 4)(
        *(ctypes.addressof(p) for p in pointers), ctypes.addressof(count)
    )
    ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p))(engine.raw_lookup("copy"))(packed)
    on = torch.arange(LANES) < n
    torch.testing.assert_close(dst, torch.where(on, src, -1.0), rtol=0, atol=0)
    torch.testing.assert_close(seen, torch.where(on, src, -2.5), rtol=0, atol=0)
