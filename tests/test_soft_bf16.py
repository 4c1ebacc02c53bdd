"""bf16 on CPUs without bf16 instructions: kernels link and compile fast, the software
truncation rounds as PyTorch does, masked bf16 loads move as i16, and bf16 arithmetic on
vectors of any width runs on its f32 extensions."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import helion
import helion.language as hl
import pytest
import torch
from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

from helion_fx_mlir import generate_mlir, lower_to_llvm
from helion_fx_mlir.errors import CodegenError
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.passes.soft_bf16 import NAME, define_bf16_truncation
from helion_fx_mlir.runtime import jit
from helion_fx_mlir.runtime.jit import compile_kernel

# A caller with a plain C signature (f32 -> i16) around the bf16-returning definition.
CALLER = f"""
module {{
  llvm.func @truncate_bits(%x: f32) -> i16 {{
    %b = llvm.call @{NAME}(%x) : (f32) -> bf16
    %bits = llvm.bitcast %b : bf16 to i16
    llvm.return %bits : i16
  }}
  llvm.func @{NAME}(f32) -> bf16
}}
"""


@helion.kernel(config=helion.Config(block_sizes=[8]), static_shapes=True)
def scaled_softmax(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m in hl.tile(x.size(0)):
        v = x[tile_m, :].to(torch.float32) * scale[None, :].to(torch.float32)
        out[tile_m, :] = torch.softmax(v, dim=-1).to(x.dtype)
    return out


def truncation() -> Callable[[float], int]:
    """The definition compiled alone; f32 -> the bf16 bits, through the engine's packed
    wrapper (`void(void**)`: a pointer to each argument, then one to the result)."""
    with mlir_context():
        module = ir.Module.parse(CALLER)
        define_bf16_truncation(module)
        module.operation.verify()
        engine = ExecutionEngine(module, opt_level=2)
    packed = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p))(
        engine.raw_lookup("truncate_bits")
    )

    def call(value: float) -> int:
        x, result = ctypes.c_float(value), ctypes.c_uint16()
        pointers = (ctypes.c_void_p * 2)(ctypes.addressof(x), ctypes.addressof(result))
        packed(pointers)
        return result.value

    call.engine = engine  # type: ignore[attr-defined]  # the code lives as long as the engine
    return call


def test_truncation_rounds_as_torch() -> None:
    """Random bit patterns (every exponent, NaNs, subnormals), ties to even, specials."""
    generator = torch.Generator().manual_seed(0)
    randoms = torch.randint(-(2**31), 2**31, (20_000,), generator=generator, dtype=torch.int64)
    ties = torch.arange(0, 1 << 20, 1 << 15, dtype=torch.int64) | 0x3F808000
    specials = torch.tensor(
        [0.0, -0.0, float("inf"), -float("inf"), 3.4e38, -3.4e38, 1e-45, 1.0]
    ).view(torch.int32)
    bits = torch.cat([randoms.to(torch.int32), ties.to(torch.int32), specials])
    values = bits.view(torch.float32)
    function = truncation()
    got = torch.tensor([function(v) for v in values.tolist()], dtype=torch.int32).to(torch.int16)
    want = values.to(torch.bfloat16).view(torch.int16)
    nan = values.isnan()
    assert torch.equal(got[~nan], want[~nan])
    assert got[nan].view(torch.bfloat16).isnan().all()  # quiet NaNs, whatever the payload


def test_module_without_bf16_gets_no_definition() -> None:
    with mlir_context():
        module = ir.Module.parse("module { llvm.func @f(%x: f32) -> f32 { llvm.return %x : f32 } }")
        define_bf16_truncation(module)
        assert NAME not in str(module)


@pytest.mark.parametrize("bounds_checks", [False, True], ids=["fast", "checked"])
def test_masked_bf16_kernel_matches_eager(bounds_checks: bool) -> None:
    """Tiles of 8 rows over 13: the masked lanes of bf16 loads are where LLVM's x86 back end
    needed `__truncsfbf2` (and a minute to compile)."""
    x, scale = torch.randn(13, 37, dtype=torch.bfloat16), torch.rand(37, dtype=torch.bfloat16) + 0.5
    got = compile_kernel(scaled_softmax.bind((x, scale)), bounds_checks=bounds_checks)(x, scale)
    want = torch.softmax(x.float() * scale.float(), dim=-1).to(torch.bfloat16)
    torch.testing.assert_close(got, want)


def test_no_bf16_masked_load_reaches_llvm() -> None:
    x, scale = torch.randn(13, 37, dtype=torch.bfloat16), torch.rand(37, dtype=torch.bfloat16)
    text = lower_to_llvm(generate_mlir(scaled_softmax.bind((x, scale))))
    loads = [line for line in text.splitlines() if "llvm.intr.masked.load" in line]
    assert loads and not any("bf16>" in line.split("->")[-1] for line in loads)
    assert f"llvm.func weak @{NAME}" in text


@pytest.mark.parametrize("bounds_checks", [False, True], ids=["fast", "checked"])
@pytest.mark.parametrize(("rows", "cols", "block"), [(34, 97, 64), (13, 33, 32)])
def test_bf16_tiles_of_odd_width_rows_compile_and_run(
    rows: int, cols: int, block: int, bounds_checks: bool
) -> None:
    """Found by the fuzzer: a 64-row bf16 tile over 34 rows of 97 is copied row by row as
    97-lane bf16 loads and stores, on which LLVM aborted ("Do not know how to soft promote
    this operator's operand") at every optimization level; they move as i16 now."""
    example = EXAMPLES["reduce_tuple_argmax"]
    x = torch.randn(rows, cols, dtype=torch.bfloat16)
    config = helion.Config(block_sizes=[block])
    got = compile_kernel(example.kernel.bind((x,)), config=config, bounds_checks=bounds_checks)(x)
    torch.testing.assert_close(got, example.reference(x))


@pytest.mark.parametrize("block_sizes", [[256, 16, 16], [4, 8, 32]], ids=["16-wide", "32-wide"])
def test_bf16_arithmetic_on_an_edge_tile_of_odd_width_compiles_and_run(
    block_sizes: list[int],
) -> None:
    """Found by the fuzzer: a bias add over 41 columns in 16-wide tiles leaves an edge tile
    9 wide, whose `vector<9xbf16>` add LLVM could not promote at any optimization level
    ("Do not know how to soft promote this operator's operand"); the adds run on the f32
    extensions now, rounded back to bf16 after each, as PyTorch rounds them."""
    example = EXAMPLES["bias_add_3d"]
    x, bias = torch.randn(194, 51, 41, dtype=torch.bfloat16), torch.randn(41, dtype=torch.bfloat16)
    config = helion.Config(block_sizes=block_sizes)
    got = compile_kernel(example.kernel.bind((x, bias)), config=config)(x, bias)
    torch.testing.assert_close(got, example.reference(x, bias), rtol=0, atol=0)


def test_code_llvm_cannot_generate_at_any_level_is_an_error_not_an_abort(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the forked probe dies optimized and at -O0 too, generating the code in this
    process would abort it: the call raises instead (the probe says so here, on any CPU)."""
    levels: list[int] = []

    def crashes(module: object, name: str, opt_level: int, obj: object = None) -> bool:
        levels.append(opt_level)
        return True

    monkeypatch.setattr(jit, "codegen_crashes", crashes)
    x, scale = torch.randn(11, 29, dtype=torch.bfloat16), torch.rand(29, dtype=torch.bfloat16)
    with pytest.raises(CodegenError, match=r"kernel 'scaled_softmax' .* this one is unharmed"):
        compile_kernel(scaled_softmax.bind((x, scale)))(x, scale)
    assert levels[-1] == 0 and levels[-2] > 0
