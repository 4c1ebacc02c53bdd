"""A contraction's B block of strided rows is copied into a contiguous buffer first
(`packed_operands.py`); a whole-K strip too large to copy is contracted in chunks of K
blocks (`whole_contractions.py`); register tiles follow the host's vector registers, and
the largest copy the host's L2 (`host_cpu.large_pack_bytes`). Each runs against eager on
shapes that do not divide the blocks, for both register files and both copy limits."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, host_cpu
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.packed_operands import target_pack_limit
from helion_fx_mlir.passes.pipelines import LINALG, VECTORIZE, apply
from helion_fx_mlir.runtime import jit, kernel_cache

# K divides the K blocks (so the K loop is a candidate for one contraction) and is long
# enough that B's whole strip exceeds PACK_BYTES; N divides its blocks (a padded B block
# is a copy already) and M does not.
SHAPES = {
    "matmul": ((37, 1024), (1024, 256)),
    "bmm": ((3, 21, 512), (3, 512, 128)),
}
CONFIGS = {
    "matmul": [helion.Config(block_sizes=[16, 64, 32]), helion.Config(block_sizes=[32, 32, 128])],
    "bmm": [helion.Config(block_sizes=[1, 16, 64, 64]), helion.Config(block_sizes=[1, 8, 32, 16])],
}
CASES = [
    pytest.param(name, config, registers, pack, id=f"{name}-{i}-{registers}regs-{pack}")
    for name in SHAPES
    for i, config in enumerate(CONFIGS[name])
    for registers in (16, 32)
    for pack in (None, host_cpu.LARGE_PACK)
]


def _args(name: str) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return tuple(torch.randn(*shape) for shape in SHAPES[name])


def _vectorized(
    name: str,
    config: helion.Config,
    args: tuple[torch.Tensor, ...] | None = None,
    pack: int | None = None,
) -> str:
    bound = EXAMPLES[name].kernel.bind(args or _args(name))
    module = parse_module(generate_mlir(bound, config=config))
    target_pack_limit(module, pack)
    return str(apply(module, (*LINALG, *VECTORIZE)))


@pytest.mark.parametrize(("name", "config", "registers", "pack"), CASES)
def test_chunked_and_packed_contraction_matches_eager(
    name: str,
    config: helion.Config,
    registers: int,
    pack: int | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = _vectorized(name, config)
    assert "linalg.matmul" not in text and "linalg.batch_matmul" not in text
    assert "affine.for" in text  # chunks of K blocks: the loop stays, with a longer step
    monkeypatch.setattr(host_cpu, "vector_registers", lambda: registers)
    monkeypatch.setattr(host_cpu, "large_pack_bytes", lambda: pack)
    monkeypatch.setattr(jit, "_ENGINES", {})
    monkeypatch.setenv(kernel_cache.DISABLE_ENV, "0")
    example = EXAMPLES[name]
    args = _args(name)
    got = compile_kernel(example.kernel.bind(args), config=config)(*args)
    # Sums of 1024 products in K order: f32 rounding differs from eager's blocked sums by
    # about 1e-4 (as it did before these rewrites; both are that far from f64).
    torch.testing.assert_close(got, example.reference(*args), rtol=1e-4, atol=1e-3)


def test_a_strip_of_whole_rows_is_not_copied() -> None:
    """N in one block: B's rows are y's rows, already contiguous."""
    example = EXAMPLES["matmul"]
    args = (torch.randn(37, 64), torch.randn(64, 16))
    config = helion.Config(block_sizes=[16, 16, 16])
    bound = example.kernel.bind(args)
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    apply(module, ("helion-fold-accumulations", "helion-whole-k-contractions"))
    before = str(module).count("linalg.generic")
    apply(module, ("helion-pack-contraction-operands",))
    assert str(module).count("linalg.generic") == before
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), example.reference(*args)
    )


@pytest.mark.parametrize(("dtype", "chunked"), [(torch.float32, False), (torch.bfloat16, True)])
def test_a_larger_copy_limit_takes_a_whole_f32_strip(dtype: torch.dtype, chunked: bool) -> None:
    """Under the 2 MB L2 limit, B's whole 1024x64 f32 strip (256 KB) is copied and
    contracted at once; a bf16 one (128 KB) keeps chunks of PACK_BYTES."""
    torch.manual_seed(0)
    args = (torch.randn(37, 1024, dtype=dtype), torch.randn(1024, 256, dtype=dtype))
    config = helion.Config(block_sizes=[16, 64, 32])
    assert ("affine.for" in _vectorized("matmul", config, args, host_cpu.LARGE_PACK)) == chunked
    assert "affine.for" in _vectorized("matmul", config, args)


@pytest.mark.parametrize(
    ("l2", "pack"), [(2 << 20, host_cpu.LARGE_PACK), (1 << 20, None), (0, None)]
)
def test_the_copy_limit_follows_the_hosts_l2(
    l2: int, pack: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_cpu, "l2_bytes", lambda: l2)
    assert host_cpu.large_pack_bytes() == pack


def test_the_hosts_l2_is_read_in_bytes() -> None:
    """sysfs says "2048K" or "1M"; a machine without it says 0."""
    l2 = host_cpu.l2_bytes()
    assert l2 == 0 or (l2 % 1024 == 0 and 64 << 10 <= l2 <= 64 << 20)


@pytest.mark.parametrize("pack", [None, host_cpu.LARGE_PACK])
def test_k_blocks_the_chunks_do_not_divide_end_in_a_shorter_chunk(
    pack: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """K in 17 blocks of 64, two of which fit PACK_BYTES: eight steps of two blocks, then one
    block contracted after the loop (before, steps had to divide 17: one block each). The
    host's larger limit takes the whole strip (272 KB)."""
    torch.manual_seed(0)
    args = (torch.randn(48, 1088), torch.randn(1088, 256))
    config = helion.Config(block_sizes=[16, 64, 64])
    bound = EXAMPLES["matmul"].kernel.bind(args)
    module = parse_module(generate_mlir(bound, config=config))
    target_pack_limit(module, pack)
    apply(module, (*LINALG, "helion-fold-accumulations", "helion-whole-k-contractions"))
    chunked = pack is None
    assert str(module).count("linalg.matmul") == (2 if chunked else 1)
    assert ("step 2 iter_args" in str(module)) == chunked
    monkeypatch.setattr(host_cpu, "large_pack_bytes", lambda: pack)
    monkeypatch.setattr(jit, "_ENGINES", {})
    monkeypatch.setenv(kernel_cache.DISABLE_ENV, "0")
    got = compile_kernel(bound, config=config)(*args)
    torch.testing.assert_close(got, EXAMPLES["matmul"].reference(*args), rtol=1e-4, atol=1e-3)
