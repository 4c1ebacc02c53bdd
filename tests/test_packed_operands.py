"""A contraction's B block of strided rows is copied into a contiguous buffer first
(`packed_operands.py`); a whole-K strip too large to copy is contracted in chunks of K
blocks (`whole_contractions.py`); register tiles follow the host's vector registers. Each
runs against eager on shapes that do not divide the blocks, for both register files."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, host_cpu
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
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
    pytest.param(name, config, registers, id=f"{name}-{i}-{registers}regs")
    for name in SHAPES
    for i, config in enumerate(CONFIGS[name])
    for registers in (16, 32)
]


def _args(name: str) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return tuple(torch.randn(*shape) for shape in SHAPES[name])


def _vectorized(name: str, config: helion.Config) -> str:
    bound = EXAMPLES[name].kernel.bind(_args(name))
    return str(apply(parse_module(generate_mlir(bound, config=config)), (*LINALG, *VECTORIZE)))


@pytest.mark.parametrize(("name", "config", "registers"), CASES)
def test_chunked_and_packed_contraction_matches_eager(
    name: str, config: helion.Config, registers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _vectorized(name, config)
    assert "linalg.matmul" not in text and "linalg.batch_matmul" not in text
    assert "affine.for" in text  # chunks of K blocks: the loop stays, with a longer step
    monkeypatch.setattr(host_cpu, "vector_registers", lambda: registers)
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
