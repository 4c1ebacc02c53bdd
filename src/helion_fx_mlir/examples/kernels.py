"""Core sample kernels: elementwise, matmul, softmax, norms, row sums."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

from .registry import FLOATS, Example, in_f32, randn, tensors


@helion.kernel(static_shapes=True)
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = x[tile] + y[tile]
    return out


@helion.kernel(static_shapes=True)
def matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    k2, n = y.size()
    assert k == k2, f"inner dims differ: {k} != {k2}"
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(x.dtype)
    return out


@helion.kernel(static_shapes=True)
def softmax(x: torch.Tensor) -> torch.Tensor:
    n, _ = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        values = x[tile_n, :].to(torch.float32)
        amax = torch.amax(values, dim=1, keepdim=True)
        exp = torch.exp(values - amax)
        sum_exp = torch.sum(exp, dim=1, keepdim=True)
        out[tile_n, :] = (exp / sum_exp).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def softmax_two_pass(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    block_size_m = hl.register_block_size(m)
    block_size_n = hl.register_block_size(n)
    for tile_m in hl.tile(m, block_size=block_size_m):
        mi = hl.full([tile_m], float("-inf"), dtype=torch.float32)
        di = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_size_n):
            values = x[tile_m, tile_n]
            local_amax = torch.amax(values, dim=1)
            mi_next = torch.maximum(mi, local_amax)
            di = di * torch.exp(mi - mi_next) + torch.exp(values - mi_next[:, None]).sum(dim=1)
            mi = mi_next
        for tile_n in hl.tile(n, block_size=block_size_n):
            values = x[tile_m, tile_n]
            out[tile_m, tile_n] = torch.exp(values - mi[:, None]) / di[:, None]
    return out


@helion.kernel(static_shapes=True)
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        acc = x[tile_m, :].to(torch.float32)
        mean = torch.mean(acc, dim=-1, keepdim=True)
        centered = acc - mean
        var = torch.mean(centered * centered, dim=-1, keepdim=True)
        normalized = centered * torch.rsqrt(var + eps)
        result = normalized * weight[:].to(torch.float32) + bias[:].to(torch.float32)
        out[tile_m, :] = result.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        mean_sq = torch.mean(row * row, dim=-1, keepdim=True)
        normalized = row * torch.rsqrt(mean_sq + eps)
        out[tile_m, :] = (normalized * weight[:].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def sum_rows(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].sum(-1)
    return out


def _rms_norm_ref(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


EXAMPLES = [
    Example("add", add, tensors(randn(37, 50), randn(37, 50)), torch.add, FLOATS,
            (helion.Config(block_sizes=[8, 64]),)),
    Example("matmul", matmul, tensors(randn(100, 130), randn(130, 70)), in_f32(torch.matmul), FLOATS,
            (helion.Config(block_sizes=[32, 8, 64]),)),
    Example("softmax", softmax, tensors(randn(37, 100)), in_f32(lambda x: torch.softmax(x, -1)), FLOATS,
            (helion.Config(block_sizes=[4]), helion.Config(block_sizes=[4], reduction_loops=[16]))),
    Example("softmax_two_pass", softmax_two_pass, tensors(randn(37, 100)), lambda x: torch.softmax(x, -1),
            configs=(helion.Config(block_sizes=[8, 64]),)),
    Example("layer_norm", layer_norm, tensors(randn(37, 100), randn(100), randn(100)),
            in_f32(lambda x, w, b: F.layer_norm(x, [x.shape[-1]], w, b, 1e-5)), (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[1]), helion.Config(block_sizes=[4], reduction_loops=[16]))),
    Example("rms_norm", rms_norm, tensors(randn(37, 100), randn(100)), in_f32(_rms_norm_ref),
            (torch.float32, torch.float16), (helion.Config(block_sizes=[64]), helion.Config(block_sizes=[4], reduction_loops=[64]))),
    Example("sum_rows", sum_rows, tensors(randn(37, 100)), lambda x: x.sum(-1),
            configs=(helion.Config(block_sizes=[2]), helion.Config(block_sizes=[8], reduction_loops=[32]))),
]
