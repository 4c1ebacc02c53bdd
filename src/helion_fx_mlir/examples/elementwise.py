"""Elementwise sample kernels: activations, gated units, dropout, int/bool ops, f64."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F
from helion.language.random_ops import philox_rand_ref

from .registry import FLOATS, Example, in_f32, randn, tensors

@helion.kernel(static_shapes=True)
def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(a)
    for tile in hl.tile(out.size()):
        x = a[tile].to(torch.float32)
        gate = 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))  # sqrt(2/pi)
        out[tile] = (gate * b[tile].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(a)
    for tile in hl.tile(out.size()):
        x = a[tile].to(torch.float32)
        out[tile] = (x * torch.sigmoid(x) * b[tile].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def gelu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = F.gelu(x[tile].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = F.gelu(x[tile], approximate="tanh")
    return out


@helion.kernel(static_shapes=True)
def relu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = torch.relu(x[tile])
    return out


@helion.kernel(static_shapes=True)
def leaky_relu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        v = x[tile]
        out[tile] = torch.where(v > 0, v, v * 0.01)
    return out


@helion.kernel(static_shapes=True)
def sigmoid(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = torch.sigmoid(x[tile].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def tanh(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = torch.tanh(x[tile].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def hardswish(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        v = x[tile].to(torch.float32)
        out[tile] = (v * torch.clamp(v + 3.0, min=0.0, max=6.0) / 6.0).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def softplus(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        v = x[tile].to(torch.float32)
        out[tile] = (torch.maximum(v, torch.zeros_like(v)) + torch.log(1.0 + torch.exp(-torch.abs(v)))).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def dropout(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    out = torch.empty_like(x)
    scale = 1.0 / (1.0 - p)
    for tile_m, tile_n in hl.tile(x.size()):
        keep = hl.rand([tile_m, tile_n], seed=seed) > p
        v = x[tile_m, tile_n].to(torch.float32)
        out[tile_m, tile_n] = torch.where(keep, v * scale, 0.0).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def int_ops(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        a = x[tile]
        b = y[tile]
        mixed = ((a * b + a) ^ (b & 255)) | (a >> 2)
        out[tile] = mixed - torch.remainder(a, 7) + torch.div(b, 3, rounding_mode="floor")
    return out


@helion.kernel(static_shapes=True)
def byte_ops(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Scalar arithmetic, floor division and pow on int8/uint8 (wrapping as eager does)."""
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        a = x[tile]
        b = y[tile]
        out[tile] = a * 3 - 1 + a % 7 + b // 3 + a // (b.abs() + 1) + a**3
    return out


@helion.kernel(static_shapes=True)
def bool_ops(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.size(), dtype=torch.bool, device=x.device)
    for tile in hl.tile(out.size()):
        a = x[tile]
        b = y[tile]
        out[tile] = ((a > 0) & (b < 0.5)) | (a < -1.0) ^ (b == a)
    return out


@helion.kernel(static_shapes=True)
def masked_fill(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = torch.where(mask[tile], torch.zeros_like(x[tile]), x[tile])
    return out


@helion.kernel(static_shapes=True)
def axpby(x: torch.Tensor, y: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = alpha * x[tile] + beta * y[tile]
    return out


@helion.kernel(static_shapes=True)
def bias_add_3d(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_b, tile_m, tile_n in hl.tile(out.size()):
        out[tile_b, tile_m, tile_n] = x[tile_b, tile_m, tile_n] + bias[tile_n][None, None, :]
    return out


@helion.kernel(static_shapes=True)
def quantize_fp8(x: torch.Tensor, scale: float) -> torch.Tensor:
    """(x * scale) stored as fp8 e4m3fn, rounded as PyTorch rounds."""
    out = torch.empty(x.size(), dtype=torch.float8_e4m3fn, device=x.device)
    for tile in hl.tile(x.size()):
        out[tile] = (x[tile] * scale).to(torch.float8_e4m3fn)
    return out


def _geglu_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.gelu(a, approximate="tanh") * b


def _softplus_ref(x: torch.Tensor) -> torch.Tensor:
    return F.softplus(x)


def _dropout_ref(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    offsets = torch.arange(x.numel(), dtype=torch.int64).reshape(x.shape)
    keep = philox_rand_ref(seed, offsets) > p
    return torch.where(keep, x.float() * (1.0 / (1.0 - p)), 0.0).to(x.dtype)


def _int_ops_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    mixed = ((a * b + a) ^ (b & 255)) | (a >> 2)
    return mixed - torch.remainder(a, 7) + torch.div(b, 3, rounding_mode="floor")


def _bool_ops_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return ((a > 0) & (b < 0.5)) | (a < -1.0) ^ (b == a)


def _randint(*shape: int):
    return lambda dtype: torch.randint(-1000, 1000, shape, dtype=dtype)


def _small_ints(*shape: int):
    """int8/uint8 values with room for |b| + 1 (uint8 starts at 0)."""
    return lambda dtype: torch.randint(0 if dtype == torch.uint8 else -100, 100, shape, dtype=dtype)


def _bool_mask(*shape: int):
    return lambda dtype: torch.rand(*shape) < 0.3


def _same_mixed(*shape: int):
    """Random values, a few of them repeated, so equality compares are not all false."""

    def make(dtype: torch.dtype) -> torch.Tensor:
        return torch.randn(*shape, dtype=dtype).round(decimals=1)

    return make


EXAMPLES = [
    Example("geglu", geglu, tensors(randn(37, 50), randn(37, 50)), in_f32(_geglu_ref), FLOATS,
            (helion.Config(block_sizes=[8, 64]),)),
    Example("swiglu", swiglu, tensors(randn(37, 50), randn(37, 50)), in_f32(lambda a, b: F.silu(a) * b), FLOATS),
    Example("gelu", gelu, tensors(randn(37, 50)), in_f32(F.gelu), FLOATS),
    Example("gelu_tanh", gelu_tanh, tensors(randn(37, 50)), in_f32(lambda x: F.gelu(x, approximate="tanh")),
            (*FLOATS, torch.float64)),
    Example("relu", relu, tensors(randn(1000)), torch.relu, FLOATS, (helion.Config(block_sizes=[128]),)),
    Example("leaky_relu", leaky_relu, tensors(randn(37, 50)), lambda x: F.leaky_relu(x, 0.01), FLOATS),
    Example("sigmoid", sigmoid, tensors(randn(37, 50)), in_f32(torch.sigmoid), FLOATS),
    Example("tanh", tanh, tensors(randn(3, 37, 50)), in_f32(torch.tanh), FLOATS),
    Example("hardswish", hardswish, tensors(randn(37, 50)), in_f32(F.hardswish), FLOATS),
    Example("softplus", softplus, tensors(randn(37, 50)), in_f32(_softplus_ref), FLOATS),
    Example("dropout", dropout, tensors(randn(37, 50), 0.25, 123), _dropout_ref, FLOATS,
            (helion.Config(block_sizes=[4, 64]),)),
    Example("int_ops", int_ops, tensors(_randint(37, 50), _randint(37, 50)), _int_ops_ref,
            (torch.int32, torch.int64)),
    Example("byte_ops", byte_ops, tensors(_small_ints(37, 50), _small_ints(37, 50)),
            lambda a, b: a * 3 - 1 + a % 7 + b // 3 + a // (b.abs() + 1) + a**3, (torch.int8, torch.uint8)),
    Example("bool_ops", bool_ops, tensors(_same_mixed(37, 50), _same_mixed(37, 50)), _bool_ops_ref,
            (torch.float32, torch.float16)),
    Example("masked_fill", masked_fill, tensors(randn(37, 50), _bool_mask(37, 50)),
            lambda x, m: x.masked_fill(m, 0.0), FLOATS),
    Example("axpby", axpby, tensors(randn(37, 50), randn(37, 50), 0.5, -2.0), lambda x, y, a, b: a * x + b * y,
            (torch.float64, torch.float32)),
    Example("quantize_fp8", quantize_fp8, tensors(randn(37, 50), 60.0), lambda x, s: (x * s).to(torch.float8_e4m3fn),
            FLOATS),
    Example("bias_add_3d", bias_add_3d, tensors(randn(3, 37, 50), randn(50)), lambda x, b: x + b, FLOATS,
            (helion.Config(block_sizes=[2, 8, 64]),)),
]


@helion.kernel(static_shapes=True)
def cast_to_f32(x: torch.Tensor) -> torch.Tensor:
    """x.to(float32) for any input dtype (proves fp8 conversions bit-exactly)."""
    out = torch.empty(x.size(), dtype=torch.float32, device=x.device)
    for tile in hl.tile(x.size()):
        out[tile] = x[tile].to(torch.float32)
    return out
