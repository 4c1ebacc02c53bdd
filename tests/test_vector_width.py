"""The vector width knob (`passes/vector_width.py`): every mlir kernel's config space has
`mlir_vector_width`; at 256 bits LLVM splits our 512-bit vector ops (no zmm register in
the object code) and sample kernels of every kind still match eager, on shapes the blocks
do not divide, under two configs each."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
from typing import Any

import helion
import pytest
import torch
from helion.exc import InvalidConfig

import helion_fx_mlir  # noqa: F401 - registers the backend
from helion_fx_mlir import compile_kernel, generate_mlir, host_cpu
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.host_cpu import cpu_flags
from helion_fx_mlir.passes.bf16_dot import has_bf16_dots, host_has_bf16_dot
from helion_fx_mlir.runtime import jit, kernel_cache
from helion_fx_mlir.runtime.autotune import mlir_copy

# Row and column reductions, masked 2-D tiles, the polynomial exp, a scan, jagged rows,
# matmuls in f32 and bf16 (dot products on CPUs that have them), attention.
NAMES = [
    "softmax",
    "col_sum",
    "layer_norm",
    "sum_rows",
    "swiglu",
    "cross_entropy",
    "cumsum_rows",
    "jagged_softmax",
    "bias_add_3d",
    "matmul",
    "attention",
]
# bf16 where its code differs most: the dot products, and the exp computed in f32.
BF16 = ("matmul", "softmax")
CASES = [
    *(pytest.param(name, torch.float32, id=name) for name in NAMES),
    *(pytest.param(name, torch.bfloat16, id=f"{name}-bf16") for name in BF16),
]


def _bound(name: str, args: tuple[Any, ...]) -> Any:
    return mlir_copy(EXAMPLES[name].kernel, "none").bind(args)


def _at(config: helion.Config, width: int) -> helion.Config:
    return helion.Config(**{**config.config, "mlir_vector_width": width})


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_256_bit_vectors_match_eager(name: str, dtype: torch.dtype) -> None:
    """The default config and the example's first other config."""
    example = EXAMPLES[name]
    args = example.args(dtype)
    bound = _bound(name, args)
    for config in (bound.config_spec.default_config(), *example.configs[:1]):
        bound.set_config(_at(config, 256))
        torch.testing.assert_close(bound(*args), example.reference(*args))


def test_the_knob_is_in_mlir_kernels_config_space_only() -> None:
    args = EXAMPLES["swiglu"].args()
    assert _bound("swiglu", args).config_spec.default_config().config["mlir_vector_width"] == 512
    triton = EXAMPLES["swiglu"].kernel.bind(args).config_spec.default_config()
    assert "mlir_vector_width" not in triton.config


def test_a_width_other_than_the_default_is_a_module_attribute() -> None:
    bound = _bound("swiglu", EXAMPLES["swiglu"].args())
    default = bound.config_spec.default_config()
    text = {w: generate_mlir(bound, config=_at(default, w)) for w in (512, 256)}
    assert "helion.vector_width = 256 : i64" in text[256].splitlines()[0]
    assert "helion.vector_width" not in text[512]


def test_a_kernel_of_another_backend_takes_the_knob_through_our_api() -> None:
    """`compile_kernel` and `generate_mlir` on a kernel bound for Triton: the knob is not in
    its config space, yet its configs may set it; a width we do not have is refused."""
    example = EXAMPLES["layer_norm"]
    args = example.args()
    bound = example.kernel.bind(args)
    config = helion.Config(block_sizes=[4], mlir_vector_width=256)
    assert "helion.vector_width = 256" in generate_mlir(bound, config=config)
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), example.reference(*args)
    )
    with pytest.raises(InvalidConfig, match=r"mlir_vector_width=128: expected one of \[512, 256\]"):
        generate_mlir(bound, config=helion.Config(block_sizes=[4], mlir_vector_width=128))


def _zmm_registers(cache: pathlib.Path) -> int:
    (library,) = cache.glob("**/*.so")
    listing = subprocess.run(
        [shutil.which("objdump") or "objdump", "-d", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return listing.count("%zmm")


@pytest.mark.skipif(
    shutil.which("objdump") is None, reason="objdump (binutils) reads the object code"
)
@pytest.mark.parametrize("width", [512, 256])
def test_at_256_bits_no_zmm_register_is_used(
    width: int, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LLVM honors the functions' widths, OpenMP's outlined grid bodies included (the
    disk cache keeps the object code; on a CPU without AVX-512 neither width has zmm)."""
    monkeypatch.setenv("HELION_FX_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(kernel_cache.DISABLE_ENV, "1")
    args = (torch.randn(64, 512),)
    bound = _bound("softmax", args)
    bound.set_config(helion.Config(block_sizes=[4], mlir_vector_width=width))
    torch.testing.assert_close(bound(*args), torch.softmax(args[0], -1))
    assert (_zmm_registers(tmp_path) > 0) == (_avx512() and width == 512)


@pytest.mark.skipif(not host_has_bf16_dot(), reason="the CPU has no AVX512_BF16 dot products")
def test_at_256_bits_a_bf16_matmul_keeps_its_dot_products(monkeypatch: pytest.MonkeyPatch) -> None:
    """256-bit dot products (LLVM aborts on 512-bit ones in 256-bit code, and the kernel
    would fall back to extending its operands to f32)."""
    probes: list[tuple[bool, bool]] = []
    crashes = jit.codegen_crashes
    monkeypatch.setattr(host_cpu, "amx_usable", lambda: False)  # AMX would take the matmul

    def probe(module: Any, *args: Any, **kwargs: Any) -> bool:
        probes.append((has_bf16_dots(module), crashes(module, *args, **kwargs)))
        return probes[-1][1]

    monkeypatch.setattr(jit, "codegen_crashes", probe)
    args = (torch.randn(40, 66).bfloat16(), torch.randn(66, 24).bfloat16())
    bound = _bound("matmul", args)
    bound.set_config(helion.Config(block_sizes=[16, 16, 32], mlir_vector_width=256))
    torch.testing.assert_close(bound(*args), EXAMPLES["matmul"].reference(*args))
    assert probes == [(True, False)]


def _avx512() -> bool:
    return "avx512f" in cpu_flags()


def test_code_llvm_cannot_generate_at_256_bits_runs_at_512_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kernel of a narrower width is probed in a forked child first; where LLVM dies
    there, it is lowered again at the default width (here the probe says so, on any CPU)."""
    monkeypatch.setattr(jit, "codegen_crashes", lambda module, *_: "vector-width" in str(module))
    example = EXAMPLES["sum_rows"]
    args = (torch.randn(29, 75),)  # a signature no other test compiles (engines are cached)
    bound = example.kernel.bind(args)
    with pytest.warns(UserWarning, match="sum_rows: LLVM cannot .* runs with 512-bit vectors"):
        host = compile_kernel(bound, config=helion.Config(block_sizes=[4], mlir_vector_width=256))
    torch.testing.assert_close(host(*args), example.reference(*args))


@pytest.mark.skipif(not _avx512(), reason="LLVM's X86 back end fails only where 512 bits are legal")
def test_a_kernel_llvm_aborts_on_at_256_bits_leaves_the_process_alive() -> None:
    """Found by the fuzzer: LLVM cannot select a 64-lane i8 mask constant in 256-bit code
    (rows of 97 columns in blocks of 128, stored with a mask): an abort in the probe's child."""
    example = EXAMPLES["overwrite_last_column"]
    x = torch.randn(66, 97)
    bound = example.kernel.bind((x,))
    config = helion.Config(block_sizes=[128], mlir_vector_width=256)
    with pytest.warns(UserWarning, match="runs with 512-bit vectors"):
        host = compile_kernel(bound, config=config)
    torch.testing.assert_close(host(x), example.reference(x))
