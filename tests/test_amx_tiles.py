"""bf16 matmuls on AMX tiles (`passes/amx_tiles.py`): which matmuls take them (on any
host: the rewrite needs no AMX), that kernels using them match eager bf16 matmuls on shapes
the blocks do not divide (on hosts with AMX), and that code LLVM cannot generate, or a
cached entry this process cannot run, falls back to the paths without them."""

from __future__ import annotations

import json
import pathlib

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, host_cpu
from helion_fx_mlir.examples.kernels import matmul
from helion_fx_mlir.examples.matmuls import matmul_dot_acc
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.amx_tiles import has_amx_tiles
from helion_fx_mlir.passes.pipelines import to_llvm_module
from helion_fx_mlir.runtime import jit, kernel_cache

needs_amx = pytest.mark.skipif(not host_cpu.amx_usable(), reason="the CPU lacks AMX_BF16")


@helion.kernel(static_shapes=True)
def scaled_linear(x: torch.Tensor, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """A bf16 projection with an f32 epilogue: each output column scaled, then rounded."""
    m, k = x.size()
    _, n = w.size()
    out = torch.empty([m, n], dtype=x.dtype)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], w[tile_k, tile_n], acc=acc)
        out[tile_m, tile_n] = (acc * scale[tile_n][None, :]).to(x.dtype)
    return out


def _config(*blocks: int) -> helion.Config:
    return helion.Config(block_sizes=list(blocks))


# (kernel, (M, K, N), config, whether its matmul takes AMX tiles). M and N divide no block
# size (the tiles are the blocks, padded); K blocks that do not divide K are padded too.
# Tiles are 16 rows by 32 K: a K block of 16 takes them only where the K loop became one
# contraction over all of K (whole_contractions.py): with a padded last K block, over the
# whole blocks (in programs off the grid's edges), the padded block after them on its own.
CASES = [
    pytest.param(matmul, (70, 128, 100), _config(64, 64, 64), True, id="addmm-64"),
    pytest.param(matmul, (100, 1000, 70), _config(32, 32, 32), True, id="addmm-padded-k"),
    pytest.param(matmul, (37, 64, 45), _config(16, 16, 16), True, id="addmm-whole-k-16"),
    pytest.param(matmul, (37, 70, 45), _config(16, 16, 16), True, id="addmm-padded-k-16"),
    pytest.param(matmul, (50, 96, 33), _config(32, 16, 32), True, id="addmm-rows-2x1"),
    pytest.param(matmul, (50, 96, 33), _config(16, 32, 32), True, id="addmm-cols-1x2"),
    pytest.param(matmul_dot_acc, (100, 130, 70), _config(64, 64, 64), True, id="dot-64"),
    # K of 10 tile steps in one contraction: a chunk of 8, then one of 2.
    pytest.param(matmul, (50, 320, 40), _config(32, 16, 64), True, id="addmm-k-chunk-rest"),
    # The 4 programs along M (the last one padded) pack B's pairs once per group of 2
    # (shared_strips.py): N is in whole blocks, so the pack reads B itself.
    pytest.param(matmul, (250, 256, 192), _config(64, 64, 256), True, id="addmm-shared-pairs"),
]


def _args(mkn: tuple[int, int, int]) -> tuple[torch.Tensor, torch.Tensor]:
    m, k, n = mkn
    torch.manual_seed(0)
    return torch.randn(m, k, dtype=torch.bfloat16), torch.randn(k, n, dtype=torch.bfloat16)


@pytest.mark.parametrize(("kernel", "mkn", "config", "amx"), CASES)
def test_which_matmuls_take_amx_tiles(
    kernel: helion.Kernel, mkn: tuple[int, int, int], config: helion.Config, amx: bool
) -> None:
    text = generate_mlir(kernel.bind(_args(mkn)), config=config)
    assert has_amx_tiles(to_llvm_module(parse_module(text), amx=True)) == amx
    assert not has_amx_tiles(to_llvm_module(parse_module(text), bf16_dots=True))


@needs_amx
@pytest.mark.parametrize(("kernel", "mkn", "config", "amx"), CASES)
def test_amx_tiles_match_eager(
    kernel: helion.Kernel, mkn: tuple[int, int, int], config: helion.Config, amx: bool
) -> None:
    x, y = _args(mkn)
    got = compile_kernel(kernel.bind((x, y)), config=config)(x, y)
    torch.testing.assert_close(got, x @ y)


@needs_amx
@pytest.mark.parametrize("config", [_config(64, 64, 64), _config(16, 32, 32)])
def test_an_epilogue_after_amx_tiles_matches_eager(config: helion.Config) -> None:
    torch.manual_seed(0)
    x, w = torch.randn(75, 200, dtype=torch.bfloat16), torch.randn(200, 90, dtype=torch.bfloat16)
    scale = torch.rand(90)
    got = compile_kernel(scaled_linear.bind((x, w, scale)), config=config)(x, w, scale)
    expected = ((x.float() @ w.float()) * scale).to(torch.bfloat16)
    torch.testing.assert_close(got, expected)


def test_code_llvm_cannot_generate_is_lowered_again_without_amx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the forked codegen probe dies on the tiles, the kernel compiles without them.
    The tiles are never run, so this holds on any CPU."""
    probed: list[bool] = []
    monkeypatch.setattr(host_cpu, "amx_usable", lambda: True)

    def crashes(module: object, name: str, opt_level: int, obj: object = None) -> bool:
        probed.append(has_amx_tiles(module))  # type: ignore[arg-type]
        return probed[-1]

    monkeypatch.setattr(jit, "codegen_crashes", crashes)
    x, y = _args((23, 64, 40))  # a signature no other test compiles (engines are cached)
    got = compile_kernel(matmul.bind((x, y)), config=_config(16, 16, 16))(x, y)
    assert probed[0] and not probed[-1]
    torch.testing.assert_close(got, x @ y)


def test_a_cached_kernel_on_amx_tiles_says_so_and_is_not_loaded_without_them(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk cache records whether code uses the tiles; a process that could not get
    the tile state compiles the kernel again instead of loading it (it would die of SIGILL)."""
    monkeypatch.setenv("HELION_FX_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(kernel_cache.DISABLE_ENV, "1")  # on
    monkeypatch.setattr(jit, "_ENGINES", {})
    x, y = _args((29, 64, 40))
    bound = matmul.bind((x, y))
    config = bound.config_spec.default_config()
    jit.jit(bound, config)
    [meta] = [json.loads(p.read_text()) for p in tmp_path.rglob("engine.json")]
    assert meta[jit.USES_AMX] == host_cpu.amx_usable()
    compiled: list[bool] = []
    real_compile = jit._compile

    def compile_again(*args: object) -> object:
        compiled.append(True)
        return real_compile(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(jit, "_compile", compile_again)
    monkeypatch.setattr(host_cpu, "amx_usable", lambda: False)
    engine = jit.jit(bound, config)
    assert compiled == ([True] if meta[jit.USES_AMX] else [])
    torch.testing.assert_close(jit.host_for_config(bound, config)(x, y), x @ y)
    assert engine is not None
