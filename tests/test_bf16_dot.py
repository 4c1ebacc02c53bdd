"""bf16 matmuls as AVX512_BF16 dot products (`passes/bf16_dot.py`): which matmuls take
them, and that kernels using them still match eager bf16 matmuls."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, host_cpu
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.examples.kernels import matmul
from helion_fx_mlir.examples.matmuls import matmul_dot_acc
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes import bf16_dot, pipelines
from helion_fx_mlir.passes.bf16_dot import has_bf16_dots, host_has_bf16_dot
from helion_fx_mlir.passes.pipelines import to_llvm_module
from helion_fx_mlir.runtime import jit, kernel_cache

DOTS = "helion-bf16-dot-products"
needs_bf16_dot = pytest.mark.skipif(not host_has_bf16_dot(), reason="the CPU lacks AVX512_BF16")


@helion.kernel(static_shapes=True)
def whole_k_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """K is not tiled: the contraction's K is the tensor's, odd or even."""
    m, _ = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        acc = torch.addmm(acc, x[tile_m, :], y[:, tile_n])
        out[tile_m, tile_n] = acc.to(x.dtype)
    return out


def _config(*blocks: int) -> helion.Config:
    return helion.Config(block_sizes=list(blocks))


# (kernel, (M, K, N), config, whether its matmul becomes dot products). M and N divide no
# block size; K blocks that do not divide K are padded (the loop over K blocks stays), and
# so is an untiled odd K (37 lanes to 64): only K = 1 stays odd. (Helion's dot blocks are
# 16 wide at least, so N is always in whole registers here; lit_tests/passes has N = 8.)
CASES = [
    pytest.param(matmul, (37, 64, 45), _config(16, 16, 16), True, id="addmm-16"),
    pytest.param(matmul, (100, 130, 70), _config(32, 32, 32), True, id="addmm-padded-k"),
    pytest.param(matmul, (70, 128, 100), _config(64, 64, 64), True, id="addmm-64"),
    pytest.param(matmul_dot_acc, (100, 130, 70), _config(64, 64, 64), True, id="dot-64"),
    pytest.param(matmul_dot_acc, (37, 70, 45), _config(16, 32, 16), True, id="dot-padded-k"),
    pytest.param(whole_k_rows, (37, 38, 45), _config(16, 32), True, id="whole-k-38"),
    pytest.param(whole_k_rows, (37, 37, 45), _config(16, 32), True, id="whole-k-37"),
    pytest.param(whole_k_rows, (20, 1, 33), _config(16, 16), False, id="whole-k-1"),
    pytest.param(
        matmul,
        (100, 130, 70),
        helion.Config(block_sizes=[32, 32, 32], mlir_vector_width=256),
        True,
        id="addmm-256-bit",
    ),
]


def _args(mkn: tuple[int, int, int]) -> tuple[torch.Tensor, torch.Tensor]:
    m, k, n = mkn
    torch.manual_seed(0)
    return torch.randn(m, k, dtype=torch.bfloat16), torch.randn(k, n, dtype=torch.bfloat16)


@pytest.mark.parametrize(("kernel", "mkn", "config", "dots"), CASES)
def test_which_matmuls_become_dot_products(
    kernel: helion.Kernel, mkn: tuple[int, int, int], config: helion.Config, dots: bool
) -> None:
    """Even K and N in whole 16-lane registers take dot products; the rest stays f32 FMAs."""
    text = generate_mlir(kernel.bind(_args(mkn)), config=config)
    assert has_bf16_dots(to_llvm_module(parse_module(text), bf16_dots=True)) == dots


@needs_bf16_dot
@pytest.mark.parametrize(("kernel", "mkn", "config", "dots"), CASES)
def test_dot_products_match_eager(
    kernel: helion.Kernel, mkn: tuple[int, int, int], config: helion.Config, dots: bool
) -> None:
    x, y = _args(mkn)
    got = compile_kernel(kernel.bind((x, y)), config=config)(x, y)
    torch.testing.assert_close(got, x @ y)


def _after_dots(kernel: helion.Kernel, mkn: tuple[int, int, int], config: helion.Config) -> str:
    """The kernel's module right after `helion-bf16-dot-products`."""
    passes = pipelines.LLVM_BF16_DOT
    text = generate_mlir(kernel.bind(_args(mkn)), config=config)
    return str(pipelines.apply(parse_module(text), passes[: passes.index(DOTS) + 1]))


@pytest.mark.parametrize(
    ("mkn", "config", "packed", "shuffled"),
    [
        # 64-column blocks pack; the 36-column edge (N = 100) is no whole 16 lanes: f32 FMAs
        pytest.param((70, 128, 100), _config(64, 64, 64), 1, 0, id="64-blocks"),
        # 16-column blocks pack; the 13-column edge stays f32
        pytest.param((37, 38, 45), _config(16, 32), 1, 0, id="16-blocks"),
        # 256-bit code: 32-column blocks pack, each packed row in two 8-lane dots
        pytest.param(
            (100, 130, 64),
            helion.Config(block_sizes=[32, 32, 32], mlir_vector_width=256),
            1,
            0,
            id="256-bit",
        ),
    ],
)
def test_b_blocks_of_whole_16_columns_are_packed_in_pairs_once(
    mkn: tuple[int, int, int], config: helion.Config, packed: int, shuffled: int
) -> None:
    """B is packed in pairs (one vector.interleave of two rows per step of the packing
    loop) where its block has whole 16-column blocks, and no register tile interleaves
    B's rows again (vector.shuffle: only where B does not pack, N = 8 in 256-bit code,
    lit_tests/passes/bf16-dot-products-256.mlir)."""
    kernel = whole_k_rows if len(config.block_sizes) == 2 else matmul
    text = _after_dots(kernel, mkn, config)
    assert text.count("vector.interleave") >= packed
    assert text.count("vector.shuffle") == shuffled
    assert "x86.avx512.dot" in text


@needs_bf16_dot
@pytest.mark.parametrize("threads", [1, 2])
def test_packed_pairs_shared_by_a_column_of_programs_match_eager(threads: int) -> None:
    """Programs of a column share B's packed strip (`shared_strips.py`): 23 row blocks of
    a matmul whose M, K and N divide no block, on 1 and 2 threads."""
    x, y = _args((23 * 16 + 5, 130, 3 * 32 + 16))
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = compile_kernel(matmul.bind((x, y)), config=_config(16, 32, 32))(x, y)
    finally:
        torch.set_num_threads(previous)
    torch.testing.assert_close(got, x @ y)


def test_code_llvm_cannot_generate_is_lowered_again_without_dot_products(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the forked codegen probe dies on the dot products, the kernel compiles
    without them (and still runs optimized). The dot products are never run, so this
    holds on any CPU."""
    probed: list[bool] = []
    monkeypatch.setattr(bf16_dot, "host_has_bf16_dot", lambda: True)
    monkeypatch.setattr(host_cpu, "amx_usable", lambda: False)  # test_amx_tiles.py's case

    def crashes(module: object, name: str, opt_level: int, obj: object = None) -> bool:
        probed.append(has_bf16_dots(module))  # type: ignore[arg-type]
        return probed[-1]

    monkeypatch.setattr(jit, "codegen_crashes", crashes)
    x, y = _args((21, 32, 40))  # a signature no other test compiles (engines are cached)
    got = compile_kernel(matmul.bind((x, y)), config=_config(16, 16, 16))(x, y)
    assert probed == [True, False]
    torch.testing.assert_close(got, x @ y)


@pytest.mark.parametrize("linker", [True, False])
def test_a_bf16_kernel_runs_the_code_its_probe_generated(
    monkeypatch: pytest.MonkeyPatch, linker: bool
) -> None:
    """LLVM generates a bf16 kernel's code once, in the forked probe; the process links
    and loads that object. Without a linker it generates the code again itself."""
    monkeypatch.setattr(kernel_cache, "linker_available", lambda: linker)
    example = EXAMPLES["softmax"]
    x = torch.randn(19, 37 + linker).bfloat16()  # signatures no other test compiles
    bound = example.kernel.bind((x,))
    config = bound.config_spec.default_config()
    engine = jit.cached_engine(bound, config)
    assert isinstance(engine.code, kernel_cache.CompiledCode) == linker
    torch.testing.assert_close(jit.host_for_config(bound, config)(x), example.reference(x))
