"""Matmul sample kernels: bmm, epilogues, hl.dot (acc, out_dtype, int8, fp8), mm,
split-K (atomics and barrier), gather-GEMV, fused gate/up projection."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

from .registry import FLOATS, Example, in_f32, randn, tensors


@helion.kernel(static_shapes=True)
def bmm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    b, m, k = x.size()
    _, _, n = y.size()
    out = torch.empty([b, m, n], dtype=x.dtype, device=x.device)
    for tile_b, tile_m, tile_n in hl.tile([b, m, n]):
        acc = hl.zeros([tile_b, tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.baddbmm(acc, x[tile_b, tile_m, tile_k], y[tile_b, tile_k, tile_n])
        out[tile_b, tile_m, tile_n] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def bmm_full_k(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    b, m, k = x.size()
    _, _, n = y.size()
    out = torch.empty([b, m, n], dtype=x.dtype, device=x.device)
    for tile_b, tile_m, tile_n in hl.tile([b, m, n]):
        out[tile_b, tile_m, tile_n] = torch.bmm(x[tile_b, tile_m, :], y[tile_b, :, tile_n])
    return out


@helion.kernel(static_shapes=True)
def matmul_bias_relu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = w.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], w[tile_k, tile_n])
        out[tile_m, tile_n] = torch.relu(acc + bias[tile_n].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def matmul_dot_acc(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], y[tile_k, tile_n], acc=acc)
        out[tile_m, tile_n] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def matmul_dot_out_dtype(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = acc + hl.dot(x[tile_m, tile_k], y[tile_k, tile_n], out_dtype=torch.float32)
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(static_shapes=True)
def matmul_mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=x.dtype)
        for tile_k in hl.tile(k):
            acc = acc + torch.mm(x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(static_shapes=True)
def split_k_atomic(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.zeros([m, n], dtype=torch.float32, device=x.device)
    for tile_m, tile_n, outer_k in hl.tile([m, n, k], block_size=[None, None, 64]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = torch.addmm(acc, x[tile_m, inner_k], y[inner_k, tile_n])
        hl.atomic_add(out, [tile_m, tile_n], acc)
    return out


@helion.kernel(static_shapes=True)
def split_k_barrier(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    block_k = helion.next_power_of_2(helion.cdiv(k, 4))
    splits = helion.cdiv(k, block_k)
    partial = torch.empty([m, n, splits], dtype=torch.float32, device=x.device)
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n, outer_k in hl.tile([m, n, k], block_size=[None, None, block_k]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for inner_k in hl.tile(outer_k.begin, outer_k.end):
            acc = torch.addmm(acc, x[tile_m, inner_k], y[inner_k, tile_n])
        partial[tile_m, tile_n, outer_k.id] = acc
    hl.barrier()
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = torch.sum(partial[tile_m, tile_n, :], dim=-1).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def int8_matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=torch.int32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.int32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], y[tile_k, tile_n], acc=acc)
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(static_shapes=True)
def fp8_matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = hl.dot(x[tile_m, tile_k], y[tile_k, tile_n], acc=acc)
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(static_shapes=True)
def gather_gemv(w: torch.Tensor, idx: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """out[b, m] = sum_k w[idx[b], m, k] * x[b, k]: a GEMV per row with a gathered matrix."""
    e, m, k = w.size()
    b = idx.size(0)
    out = torch.empty([b, m], dtype=x.dtype, device=x.device)
    for tile_b, tile_m in hl.tile([b, m]):
        rows = idx[tile_b]
        acc = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        for tile_k in hl.tile(k):
            mats = w[rows, tile_m, tile_k].to(torch.float32)
            vec = x[tile_b, tile_k].to(torch.float32)
            acc = acc + torch.sum(mats * vec[:, None, :], dim=-1)
        out[tile_b, tile_m] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def fused_gate_up(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = w_gate.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        gate = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        up = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            a = x[tile_m, tile_k]
            gate = torch.addmm(gate, a, w_gate[tile_k, tile_n])
            up = torch.addmm(up, a, w_up[tile_k, tile_n])
        out[tile_m, tile_n] = (gate * torch.sigmoid(gate) * up).to(out.dtype)
    return out


def _in_f64(fn):
    """Reference computed in f64 and cast back: with long (split) K or products of two
    matmuls, an f32 reference's own rounding exceeds assert_close's f32 tolerance."""

    def run(*args):
        return fn(*[a.double() for a in args]).to(args[0].dtype)

    return run


def _scaled(k: int, n: int):
    """Weights scaled by 1/sqrt(k): O(1) projections, so f32 rounding stays within tolerance."""
    return lambda dtype: (torch.randn(k, n) / k**0.5).to(dtype)


def _small_ints(*shape: int):
    return lambda dtype: torch.randint(-8, 8, shape, dtype=dtype)


def _fp8(*shape: int):
    return lambda dtype: torch.randn(*shape).to(dtype)


def _gather_gemv_args(dtype: torch.dtype):
    return torch.randn(5, 37, 70, dtype=dtype), torch.randint(0, 5, (19,)), torch.randn(19, 70, dtype=dtype)


def _gather_gemv_ref(w, idx, x):
    return torch.einsum("bmk,bk->bm", w[idx].float(), x.float()).to(x.dtype)


EXAMPLES = [
    Example("bmm", bmm, tensors(randn(3, 37, 70), randn(3, 70, 50)), in_f32(torch.bmm), FLOATS,
            (helion.Config(block_sizes=[2, 16, 32, 64]),)),
    Example("bmm_full_k", bmm_full_k, tensors(randn(3, 37, 70), randn(3, 70, 50)), torch.bmm),
    Example("matmul_bias_relu", matmul_bias_relu, tensors(randn(100, 130), randn(130, 70), randn(70)),
            in_f32(lambda x, w, b: torch.relu(x @ w + b)), FLOATS, (helion.Config(block_sizes=[32, 8, 64]),)),
    Example("matmul_dot_acc", matmul_dot_acc, tensors(randn(100, 130), randn(130, 70)), in_f32(torch.matmul), FLOATS,
            (helion.Config(block_sizes=[64, 32, 16]),)),
    Example("matmul_dot_out_dtype", matmul_dot_out_dtype, tensors(randn(100, 130), randn(130, 70)),
            lambda x, y: x.float() @ y.float(), (torch.float16, torch.bfloat16)),
    Example("matmul_mm", matmul_mm, tensors(randn(100, 130), randn(130, 70)), torch.matmul),
    Example("split_k_atomic", split_k_atomic, tensors(randn(37, 300), randn(300, 50)),
            lambda x, y: (x.double() @ y.double()).float(), (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[16, 8, 32]),)),
    Example("split_k_barrier", split_k_barrier, tensors(randn(37, 300), randn(300, 50)), _in_f64(torch.matmul),
            (torch.float32, torch.bfloat16)),
    Example("int8_matmul", int8_matmul, tensors(_small_ints(100, 130), _small_ints(130, 70)),
            lambda x, y: x.int() @ y.int(), (torch.int8,)),
    Example("fp8_matmul", fp8_matmul, tensors(_fp8(100, 130), _fp8(130, 70)),
            lambda x, y: x.float() @ y.float(), (torch.float8_e4m3fn,)),
    Example("gather_gemv", gather_gemv, _gather_gemv_args, _gather_gemv_ref, FLOATS,
            (helion.Config(block_sizes=[4, 8, 32]),)),
    Example("fused_gate_up", fused_gate_up, tensors(randn(100, 130), _scaled(130, 70), _scaled(130, 70)),
            _in_f64(lambda x, g, u: F.silu(x @ g) * (x @ u)), FLOATS),
]
