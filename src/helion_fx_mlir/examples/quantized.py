"""int4 weights packed two to an int8: low nibble = even row, high nibble = odd row.
Unpacked in the kernel with shifts and masks (signed: `(b << 4) >> 4` and `b >> 4`;
unsigned with a zero point: `b & 0xF`, `(b >> 4) & 0xF`), converted with `.to(...)` and
fed to `hl.dot`, a GEMV reduction, or written out (dequantization)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import Example


@helion.kernel(static_shapes=True)
def int4_gemm(a: torch.Tensor, b_packed: torch.Tensor) -> torch.Tensor:
    """a: [M, K] bf16; b_packed: [K/2, N] int8 of signed int4 pairs. The K axis of a is
    viewed as [K/2, 2] so even/odd columns meet the low/high nibbles."""
    m, k = a.size()
    _, n = b_packed.size()
    out = torch.empty([m, n], dtype=torch.bfloat16, device=a.device)
    a_pairs = a.view(m, k // 2, 2)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k // 2):
            packed = b_packed[tile_k, tile_n]
            low = ((packed << 4) >> 4).to(torch.bfloat16)
            high = (packed >> 4).to(torch.bfloat16)
            acc = hl.dot(a_pairs[tile_m, tile_k, 0], low, acc=acc)
            acc = hl.dot(a_pairs[tile_m, tile_k, 1], high, acc=acc)
        out[tile_m, tile_n] = acc.to(torch.bfloat16)
    return out


@helion.kernel(static_shapes=True)
def int4_gemm_zero_point(a: torch.Tensor, b_packed: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """Unsigned int4 with zero point 8 and a scale per output column:
    out = a @ ((nibbles - 8) * scales)."""
    m, k = a.size()
    _, n = b_packed.size()
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    a_pairs = a.view(m, k // 2, 2)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k // 2):
            packed = b_packed[tile_k, tile_n].to(torch.int32)
            low = ((packed & 0xF) - 8).to(a.dtype)
            high = (((packed >> 4) & 0xF) - 8).to(a.dtype)
            acc = torch.addmm(acc, a_pairs[tile_m, tile_k, 0], low)
            acc = torch.addmm(acc, a_pairs[tile_m, tile_k, 1], high)
        out[tile_m, tile_n] = (acc * scales[tile_n].to(torch.float32)[None, :]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def int4_gemv(x: torch.Tensor, w_packed: torch.Tensor) -> torch.Tensor:
    """y[n] = sum_k x[k] * int4(w)[k, n] with elementwise products and a column sum."""
    k = x.size(0)
    n = w_packed.size(1)
    y = torch.empty([n], dtype=torch.float32, device=x.device)
    x_pairs = x.view(k // 2, 2)
    for tile_n in hl.tile(n):
        acc = hl.zeros([tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k // 2):
            packed = w_packed[tile_k, tile_n]
            low = ((packed << 4) >> 4).to(torch.float32)
            high = (packed >> 4).to(torch.float32)
            x_even = x_pairs[tile_k, 0].to(torch.float32)
            x_odd = x_pairs[tile_k, 1].to(torch.float32)
            acc = acc + torch.sum(low * x_even[:, None] + high * x_odd[:, None], dim=0)
        y[tile_n] = acc
    return y


@helion.kernel(static_shapes=True)
def int4_dequantize(packed: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """[M, N/2] int8 of signed int4 pairs (along N) -> [M, N] bf16 times a per-row scale;
    the two nibbles are stacked into a [M, N/2, 2] view of the output."""
    m, half_n = packed.size()
    out = torch.empty([m, 2 * half_n], dtype=torch.bfloat16, device=packed.device)
    out_pairs = out.view(m, half_n, 2)
    for tile_m, tile_n in hl.tile([m, half_n]):
        p = packed[tile_m, tile_n]
        s = scales[tile_m].to(torch.float32)[:, None]
        low = ((p << 4) >> 4).to(torch.float32) * s
        high = (p >> 4).to(torch.float32) * s
        out_pairs[tile_m, tile_n, :] = torch.stack([low, high], dim=2).to(torch.bfloat16)
    return out


# ------------------------------------------------------------------ inputs and references


def _pack_signed(values: torch.Tensor, dim: int) -> torch.Tensor:
    """int4 values in [-8, 7], pairs along `dim` (even -> low nibble) packed into int8."""
    even = values.narrow(dim, 0, values.size(dim) // 2 * 2)
    lo = even.unflatten(dim, (-1, 2)).select(dim + 1, 0)
    hi = even.unflatten(dim, (-1, 2)).select(dim + 1, 1)
    return ((hi.to(torch.int32) << 4) | (lo.to(torch.int32) & 0xF)).to(torch.uint8).view(torch.int8)


def _unpack_signed(packed: torch.Tensor, dim: int) -> torch.Tensor:
    lo = (packed << 4) >> 4
    hi = packed >> 4
    return torch.stack([lo, hi], dim + 1).flatten(dim, dim + 1)


def _int4_gemm_args(dtype: torch.dtype):
    b = torch.randint(-8, 8, (70, 45))
    return torch.randn(37, 70, dtype=torch.bfloat16), _pack_signed(b, 0)


def _int4_gemm_ref(a, b_packed):
    return (a.float() @ _unpack_signed(b_packed, 0).float()).to(torch.bfloat16)


def _zero_point_args(dtype: torch.dtype):
    nibbles = torch.randint(0, 16, (70, 45), dtype=torch.int32)
    packed = ((nibbles[1::2] << 4) | nibbles[0::2]).to(torch.uint8).view(torch.int8)
    return torch.randn(37, 70, dtype=dtype), packed, (torch.rand(45) * 0.1 + 0.01).to(dtype)


def _zero_point_ref(a, b_packed, scales):
    p = b_packed.to(torch.int32)
    lo, hi = (p & 0xF) - 8, ((p >> 4) & 0xF) - 8
    w = torch.stack([lo, hi], 1).flatten(0, 1).float()
    return ((a.float() @ w) * scales.float()).to(a.dtype)


def _gemv_args(dtype: torch.dtype):
    return torch.randn(300, dtype=dtype) / 16, _pack_signed(torch.randint(-8, 8, (300, 97)), 0)


def _gemv_ref(x, w_packed):
    return x.float() @ _unpack_signed(w_packed, 0).float()


def _dequant_args(dtype: torch.dtype):
    return _pack_signed(torch.randint(-8, 8, (37, 90)), 1), torch.rand(37, dtype=dtype) + 0.5


def _dequant_ref(packed, scales):
    return (_unpack_signed(packed, 1).float() * scales.float()[:, None]).to(torch.bfloat16)


EXAMPLES = [
    Example("int4_gemm", int4_gemm, _int4_gemm_args, _int4_gemm_ref, (torch.bfloat16,),
            (helion.Config(block_sizes=[16, 32, 16]), helion.Config(block_sizes=[32, 16, 32]))),
    Example("int4_gemm_zero_point", int4_gemm_zero_point, _zero_point_args, _zero_point_ref,
            (torch.float32, torch.bfloat16, torch.float16), (helion.Config(block_sizes=[32, 16, 32]),)),
    Example("int4_gemv", int4_gemv, _gemv_args, _gemv_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[64, 8]),)),
    Example("int4_dequantize", int4_dequantize, _dequant_args, _dequant_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[8, 64]),)),
]
