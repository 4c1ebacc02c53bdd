"""A loop over K blocks of one contraction becomes one contraction over all of K
(`whole_k_contractions`) when the blocks tile K exactly, or over the whole blocks and then
the partial last one where only K's tail is padded; the result still matches eager."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LINALG, apply

# K (the last dim of x) divides the K block sizes; M and N do not divide theirs.
SHAPES = {
    "matmul": ((37, 64), (64, 45)),
    "matmul_dot_acc": ((37, 64), (64, 45)),
    "matmul_dot_out_dtype": ((37, 64), (64, 45)),
    "bmm": ((3, 21, 32), (3, 32, 19)),
}
CONFIGS = {
    2: [helion.Config(block_sizes=[16, 16, 16]), helion.Config(block_sizes=[8, 32, 32])],
    3: [helion.Config(block_sizes=[1, 16, 16, 16]), helion.Config(block_sizes=[2, 8, 32, 8])],
}
CASES = [
    pytest.param(name, dtype, config, id=f"{name}-{str(dtype)[6:]}-{i}")
    for name in SHAPES
    for dtype in (torch.float32, torch.bfloat16)
    for i, config in enumerate(CONFIGS[len(SHAPES[name][0])])
]


def _args(name: str, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return tuple(torch.randn(*shape, dtype=dtype) for shape in SHAPES[name])


def _loops_left(name: str, dtype: torch.dtype, config: helion.Config) -> int:
    """Loops over K blocks left after the rewrite, in the linalg module."""
    bound = EXAMPLES[name].kernel.bind(_args(name, dtype))
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    apply(module, ("helion-fold-accumulations", "helion-whole-k-contractions"))
    return str(module).count("affine.for") + str(module).count("scf.for ")


@pytest.mark.parametrize(("name", "dtype", "config"), CASES)
def test_whole_k_contraction_matches_eager(
    name: str, dtype: torch.dtype, config: helion.Config
) -> None:
    assert _loops_left(name, dtype, config) == 0
    example = EXAMPLES[name]
    args = _args(name, dtype)
    got = compile_kernel(example.kernel.bind(args), config=config)(*args)
    torch.testing.assert_close(
        got,
        example.reference(*args),
        rtol=2e-2 if dtype == torch.bfloat16 else None,
        atol=2e-2 if dtype == torch.bfloat16 else None,
    )


def test_a_padded_last_k_block_keeps_the_loop() -> None:
    """K = 70 in blocks of 16: the last block is padded, so the blocks do not tile K."""
    example = EXAMPLES["matmul"]
    args = (torch.randn(37, 70), torch.randn(70, 45))
    config = helion.Config(block_sizes=[16, 16, 16])
    bound = example.kernel.bind(args)
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    apply(module, ("helion-fold-accumulations", "helion-whole-k-contractions"))
    assert "affine.for" in str(module)
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), example.reference(*args)
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", ["matmul", "matmul_dot_acc"])
def test_a_k_tail_is_contracted_after_the_whole_blocks(name: str, dtype: torch.dtype) -> None:
    """K = 70 in blocks of 16, M and N whole blocks: one contraction over the first 64 rows
    of K, then the last block (6 rows, padded to 16), no loop."""
    torch.manual_seed(0)
    args = (torch.randn(32, 70, dtype=dtype), torch.randn(70, 48, dtype=dtype))
    config = helion.Config(block_sizes=[16, 16, 16])
    bound = EXAMPLES[name].kernel.bind(args)
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    apply(module, ("helion-fold-accumulations", "helion-whole-k-contractions"))
    text = str(module)
    assert "affine.for" not in text and "scf.for " not in text
    assert text.count("linalg.matmul") == 2
    got = compile_kernel(bound, config=config)(*args)
    tolerance = 2e-2 if dtype == torch.bfloat16 else None
    torch.testing.assert_close(got, EXAMPLES[name].reference(*args), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize(
    ("x_shape", "y_shape", "contractions"),
    [((40, 64), (64, 48), 2), ((40, 70), (70, 45), 3)],
    ids=["edge-rows", "edge-rows-cols-and-k-tail"],
)
def test_programs_off_the_edges_contract_whole_strips(
    x_shape: tuple[int, int], y_shape: tuple[int, int], contractions: int, dtype: torch.dtype
) -> None:
    """M (and N, K) not dividing their blocks of 16: programs whose M and N blocks are whole
    take the whole strips sliced at the block's shape (and K's tail after them); the edge
    programs take the padded whole strips, or keep the loop where K has a tail too."""
    torch.manual_seed(0)
    args = (torch.randn(*x_shape, dtype=dtype), torch.randn(*y_shape, dtype=dtype))
    config = helion.Config(block_sizes=[16, 16, 16])
    bound = EXAMPLES["matmul"].kernel.bind(args)
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    apply(module, ("helion-fold-accumulations", "helion-whole-k-contractions"))
    text = str(module)
    assert "scf.if" in text
    assert text.count("linalg.matmul") == contractions
    assert ("affine.for" in text) == (contractions == 3)
    got = compile_kernel(bound, config=config)(*args)
    tolerance = 2e-2 if dtype == torch.bfloat16 else None
    torch.testing.assert_close(
        got, EXAMPLES["matmul"].reference(*args), rtol=tolerance, atol=tolerance
    )
