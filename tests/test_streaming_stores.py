"""Large write-only outputs are written with non-temporal stores where their addresses are
aligned (`stream_output_stores`): results still match eager on aligned and unaligned
outputs, one thread and several; outputs the kernel reads, and small ones, keep ordinary
stores. The configs here say `mlir_streaming_stores="on"`, so the streamed path runs on
every host (by default only CPUs where it pays stream); "off" keeps ordinary stores."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, host_cpu, lower_to_llvm
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.attributes import STREAMING_STORES, module_integer
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.streaming_stores import STREAM_BYTES, target_streaming_stores

ON = {"mlir_streaming_stores": "on"}


@helion.kernel(static_shapes=True)
def scale_shift_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] * 2.0 + 1.0
    return out


@helion.kernel(static_shapes=True)
def accumulate_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = out[tile_m, tile_n] + x[tile_m, tile_n]
    return out


def _streams(bound: object, config: helion.Config) -> bool:
    return "nontemporal" in lower_to_llvm(generate_mlir(bound, config=config))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("block", [[1], [4]])
def test_a_large_norm_output_streams_and_matches_eager(block: list[int], threads: int) -> None:
    torch.set_num_threads(threads)
    example = EXAMPLES["layer_norm"]
    torch.manual_seed(0)
    args = (torch.randn(4096, 1024), torch.randn(1024), torch.randn(1024))
    bound = example.kernel.bind(args)
    config = helion.Config(block_sizes=block, **ON)
    assert _streams(bound, config)
    compiled = compile_kernel(bound, config=config)
    torch.testing.assert_close(compiled(*args), example.reference(*args))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("shape", "block", "streams"),
    [
        ((2048, 2048), [16, 64], True),
        ((1024, 4096), [8, 128], True),
        ((1999, 2056), [16, 64], True),
    ],
)
def test_2d_tiles_match_eager(
    shape: tuple[int, int], block: list[int], streams: bool, threads: int
) -> None:
    """Tiles that divide the output stream their rows. Where they do not, the grid of
    whole tiles runs apart from its edges (`grid_edges.py`) and streams, each write
    checking its address (rows 8224 bytes apart: every other one is not 64-byte aligned
    and is written ordinarily); the edges' masked writes stay ordinary."""
    torch.set_num_threads(threads)
    x = torch.randn(*shape)
    out = torch.empty_like(x)
    bound = scale_shift_into.bind((x, out))
    config = helion.Config(block_sizes=block, **ON)
    assert x.numel() * 4 >= STREAM_BYTES and _streams(bound, config) == streams
    compile_kernel(bound, config=config)(x, out)
    torch.testing.assert_close(out, x * 2.0 + 1.0)


@pytest.mark.parametrize("shift", [0, 1, 8])
def test_an_output_view_at_any_address_is_written_right(shift: int) -> None:
    """An output starting 4 or 32 bytes past a line takes the ordinary stores at run time
    (the aligned instruction would fault)."""
    x = torch.randn(2048, 2048)
    out = torch.empty(2048 * 2048 + 16)[shift : shift + 2048 * 2048].view(2048, 2048)
    bound = scale_shift_into.bind((x, out))
    config = helion.Config(block_sizes=[16, 64], **ON)
    assert _streams(bound, config)
    compile_kernel(bound, config=config)(x, out)
    torch.testing.assert_close(out, x * 2.0 + 1.0)


def test_outputs_the_kernel_reads_or_small_ones_keep_ordinary_stores() -> None:
    config = helion.Config(block_sizes=[16, 64], **ON)
    x, out = torch.randn(2048, 2048), torch.randn(2048, 2048)
    expected = out + x
    bound = accumulate_into.bind((x, out))
    assert not _streams(bound, config)
    compile_kernel(bound, config=config)(x, out)
    torch.testing.assert_close(out, expected)
    small = torch.randn(256, 256)
    assert not _streams(scale_shift_into.bind((small, torch.empty_like(small))), config)


@pytest.mark.parametrize("threads", [1, 2])
def test_off_keeps_ordinary_stores_and_matches_eager(threads: int) -> None:
    torch.set_num_threads(threads)
    x = torch.randn(2048, 2048)
    out = torch.empty_like(x)
    bound = scale_shift_into.bind((x, out))
    config = helion.Config(block_sizes=[16, 64], mlir_streaming_stores="off")
    assert not _streams(bound, config)
    compile_kernel(bound, config=config)(x, out)
    torch.testing.assert_close(out, x * 2.0 + 1.0)


@pytest.mark.parametrize(
    ("knob", "pay", "streams"),
    [("auto", True, 1), ("auto", False, 0), ("on", False, 1), ("off", True, 0)],
)
def test_the_host_decides_only_where_the_config_does_not(
    knob: str, pay: bool, streams: int
) -> None:
    """The JIT records the host's choice (`target_streaming_stores`) under "auto" alone."""
    x = torch.randn(2048, 2048)
    bound = scale_shift_into.bind((x, torch.empty_like(x)))
    config = helion.Config(block_sizes=[16, 64], mlir_streaming_stores=knob)
    module = parse_module(generate_mlir(bound, config=config))
    target_streaming_stores(module, pay)
    with mlir_context():
        assert module_integer(module, STREAMING_STORES, -1) == streams


@pytest.mark.parametrize(("vendor", "pay"), [("AuthenticAMD", True), ("GenuineIntel", False)])
def test_streaming_pays_on_the_cpus_it_was_measured_faster_on(
    vendor: str, pay: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_cpu, "cpu_fields", lambda: {"vendor_id": vendor})
    assert host_cpu.streaming_stores_pay() is pay
