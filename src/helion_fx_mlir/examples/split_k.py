"""Split-K matmuls: the split from `hl.register_tunable("split_k", ...)`, the K tile of
`helion.next_power_of_2(helion.cdiv(k, split_k))` in `hl.tile([m, n, k], block_size=[None,
None, k_block])`, an inner `hl.tile(outer_k.begin, outer_k.end)`; partials combined with
`hl.atomic_add` or written to a buffer and reduced after an `hl.barrier()`."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
from helion.autotuner import PowerOfTwoFragment

from .registry import FLOATS, Example


@helion.kernel(static_shapes=True)
def split_k_tunable_atomic(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _, n = b.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=a.device)
    split_k = hl.register_tunable("split_k", PowerOfTwoFragment(1, 16, 4))
    k_block = helion.next_power_of_2(helion.cdiv(k, split_k))
    for tile_m, tile_n, outer_k in hl.tile([m, n, k], block_size=[None, None, k_block]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = torch.addmm(acc, a[tile_m, inner_k], b[inner_k, tile_n])
        hl.atomic_add(out, [tile_m, tile_n], acc)
    return out


@helion.kernel(static_shapes=True)
def split_k_barrier_bias(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Phase 1 writes one partial product per K split; after the barrier, phase 2 sums
    the splits, adds the bias and casts to the input dtype."""
    m, k = a.size()
    _, n = b.size()
    split_k = hl.register_tunable("split_k", PowerOfTwoFragment(1, 8, 2))
    k_block = helion.next_power_of_2(helion.cdiv(k, split_k))
    splits = helion.cdiv(k, k_block)
    partial = torch.empty([splits, m, n], dtype=torch.float32, device=a.device)
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tile_m, tile_n, outer_k in hl.tile([m, n, k], block_size=[None, None, k_block]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = hl.dot(a[tile_m, inner_k], b[inner_k, tile_n], acc=acc)
        partial[outer_k.id, tile_m, tile_n] = acc
    hl.barrier()
    for tile_m, tile_n in hl.tile([m, n]):
        total = torch.sum(partial[:, tile_m, tile_n], dim=0)
        out[tile_m, tile_n] = (total + bias[tile_n].to(torch.float32)[None, :]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def split_k_bias_first_split(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Atomic split-K where only the split holding k = 0 adds the bias (an `if` on the tile id)."""
    m, k = a.size()
    _, n = b.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=a.device)
    split_k = hl.register_tunable("split_k", PowerOfTwoFragment(1, 8, 4))
    k_block = helion.next_power_of_2(helion.cdiv(k, split_k))
    for tile_m, tile_n, outer_k in hl.tile([m, n, k], block_size=[None, None, k_block]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = torch.addmm(acc, a[tile_m, inner_k], b[inner_k, tile_n])
        if outer_k.id == 0:
            acc = acc + bias[tile_n].to(torch.float32)[None, :]
        hl.atomic_add(out, [tile_m, tile_n], acc)
    return out


@helion.kernel(static_shapes=True)
def split_k_gemv(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """y = w @ x for a long K: each (row tile, K split) adds its partial dot products."""
    m, k = w.size()
    y = torch.zeros([m], dtype=torch.float32, device=w.device)
    split_k = hl.register_tunable("split_k", PowerOfTwoFragment(1, 32, 8))
    k_block = helion.next_power_of_2(helion.cdiv(k, split_k))
    for tile_m, outer_k in hl.tile([m, k], block_size=[None, k_block]):
        acc = hl.zeros([tile_m], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            prod = w[tile_m, inner_k].to(torch.float32) * x[inner_k].to(torch.float32)[None, :]
            acc = acc + torch.sum(prod, dim=1)
        hl.atomic_add(y, [tile_m], acc)
    return y


@helion.kernel(static_shapes=True)
def split_k_bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Batched split-K: one batch per program (block size 1), the batch index is tile.begin."""
    batch, m, k = a.size()
    n = b.size(2)
    out = torch.zeros([batch, m, n], dtype=torch.float32, device=a.device)
    split_k = hl.register_tunable("split_k", PowerOfTwoFragment(1, 8, 2))
    k_block = helion.next_power_of_2(helion.cdiv(k, split_k))
    for tile_b, tile_m, tile_n, outer_k in hl.tile([batch, m, n, k], block_size=[1, None, None, k_block]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = torch.addmm(acc, a[tile_b.begin, tile_m, inner_k], b[tile_b.begin, inner_k, tile_n])
        hl.atomic_add(out, [tile_b.begin, tile_m, tile_n], acc)
    return out


# ------------------------------------------------------------------ inputs and references


def _mm(m: int, k: int, n: int, bias: bool = False):
    def make(dtype: torch.dtype):
        a = torch.randn(m, k, dtype=dtype) / k**0.5
        b = torch.randn(k, n, dtype=dtype)
        return (a, b, torch.randn(n, dtype=dtype)) if bias else (a, b)

    return make


def _mm_ref(a, b):
    return a.float() @ b.float()


def _mm_bias_ref(a, b, bias):
    return (a.float() @ b.float() + bias.float()).to(a.dtype)


def _mm_bias_f32_ref(a, b, bias):
    return a.float() @ b.float() + bias.float()


def _bmm_args(dtype: torch.dtype):
    return torch.randn(3, 29, 300, dtype=dtype) / 300**0.5, torch.randn(3, 300, 45, dtype=dtype)


EXAMPLES = [
    Example("split_k_tunable_atomic", split_k_tunable_atomic, _mm(37, 500, 45), _mm_ref, FLOATS,
            (helion.Config(block_sizes=[16, 32, 64], split_k=2), helion.Config(block_sizes=[32, 16, 16], split_k=8))),
    Example("split_k_barrier_bias", split_k_barrier_bias, _mm(37, 300, 45, bias=True), _mm_bias_ref, FLOATS,
            (helion.Config(block_sizes=[16, 16, 32, 8, 64], split_k=4),)),
    Example("split_k_bias_first_split", split_k_bias_first_split, _mm(37, 500, 45, bias=True), _mm_bias_f32_ref,
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[16, 16, 32], split_k=1),)),
    Example("split_k_gemv", split_k_gemv, lambda dtype: (torch.randn(97, 1000, dtype=dtype) / 32, torch.randn(1000, dtype=dtype)),
            lambda w, x: w.float() @ x.float(), FLOATS, (helion.Config(block_sizes=[8, 16], split_k=4),)),
    Example("split_k_bmm", split_k_bmm, _bmm_args, lambda a, b: torch.bmm(a.float(), b.float()),
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[16, 8, 32], split_k=4),)),
]
