"""Kernels taking callables: attention with a `score_mod(scores, q_idx, kv_idx)` closure
(a causal mask, a relative-position bias gathered from a captured table), a matmul with
an `epilogue(acc, tile)` closure capturing a bias or residual tensor, a softmax with a
per-row temperature closure; and block-sparse attention that skips key blocks by a mask."""

from __future__ import annotations

import math
from collections.abc import Callable

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example


@helion.kernel(static_shapes=True)
def attention_score_mod(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    score_mod: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
) -> torch.Tensor:
    """Flash attention over [B, H, S, D]; score_mod(scores [1, tm, tn], q_idx [tm], kv_idx [tn])."""
    b, h, m, d = q.size()
    n = k.size(2)
    q_view = q.reshape(b * h, m, d)
    k_view = k.reshape(b * h, n, d).transpose(1, 2)
    v_view = v.reshape(b * h, n, d)
    out = torch.empty_like(q_view)
    scale = 1.0 / math.sqrt(d)
    for tile_bh, tile_m in hl.tile([b * h, m], block_size=[1, None]):
        m_i = hl.full([tile_bh, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_bh, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_bh, tile_m, d], dtype=torch.float32)
        q_tile = q_view[tile_bh, tile_m, :].to(torch.float32)
        for tile_n in hl.tile(n):
            scores = torch.bmm(q_tile, k_view[tile_bh, :, tile_n].to(torch.float32)) * scale
            scores = score_mod(scores, tile_m.index, tile_n.index)
            m_new = torch.maximum(m_i, torch.amax(scores, dim=-1))
            p = torch.exp(scores - m_new[:, :, None])
            alpha = torch.exp(m_i - m_new)
            l_i = l_i * alpha + torch.sum(p, dim=-1)
            acc = torch.baddbmm(acc * alpha[:, :, None], p, v_view[tile_bh, tile_n, :].to(torch.float32))
            m_i = m_new
        out[tile_bh, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out.view(b, h, m, d)


@helion.kernel(static_shapes=True)
def attention_block_sparse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_mask: torch.Tensor) -> torch.Tensor:
    """Attention over [BH, S, D] in 16x16 blocks; key block j is visited by query block i
    only if block_mask[i, j] (an `if` on a loaded 0-d bool)."""
    bh, m, d = q.size()
    n = k.size(1)
    out = torch.empty_like(q)
    k_t = k.transpose(1, 2)
    scale = 1.0 / math.sqrt(d)
    for tile_b, tile_m in hl.tile([bh, m], block_size=[1, 16]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, d], dtype=torch.float32)
        q_tile = q[tile_b, tile_m, :].to(torch.float32)
        for tile_n in hl.tile(n, block_size=16):
            if block_mask[tile_m.id, tile_n.id]:
                scores = torch.bmm(q_tile, k_t[tile_b, :, tile_n].to(torch.float32)) * scale
                m_new = torch.maximum(m_i, torch.amax(scores, dim=-1))
                p = torch.exp(scores - m_new[:, :, None])
                alpha = torch.exp(m_i - m_new)
                l_i = l_i * alpha + torch.sum(p, dim=-1)
                acc = torch.baddbmm(acc * alpha[:, :, None], p, v[tile_b, tile_n, :].to(torch.float32))
                m_i = m_new
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def matmul_epilogue(
    x: torch.Tensor,
    y: torch.Tensor,
    epilogue: Callable[[torch.Tensor, tuple[torch.Tensor, ...]], torch.Tensor] = lambda acc, tile: acc,
) -> torch.Tensor:
    """out = epilogue(x @ y, (tile_m, tile_n)) with an f32 accumulator."""
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = epilogue(acc, (tile_m, tile_n)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def softmax_mod(
    x: torch.Tensor, mod: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """Row softmax of mod(x_rows, row_index)."""
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        rows = mod(x[tile_m, :].to(torch.float32), tile_m.index)
        shifted = rows - torch.amax(rows, dim=-1, keepdim=True)
        e = torch.exp(shifted)
        out[tile_m, :] = (e / torch.sum(e, dim=-1, keepdim=True)).to(out.dtype)
    return out


# ------------------------------------------------------------------ closures the examples pass


def causal_mod(scores: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
    return torch.where(q_idx.unsqueeze(1) >= kv_idx.unsqueeze(0), scores, float("-inf"))


# Each factory returns a lambda capturing tensors; the captures are also attached as
# attributes so the eager references can read them. Closures are traced as plain Python
# (Helion rewrites only the kernel's own AST), so they use unsqueeze, not `[:, None]`, and
# hl.load for a gather from a captured tensor (indexing it with a tensor is refused).


def relative_bias_mod(table: torch.Tensor, n: int):
    """A closure capturing a [2n-1] table: scores + table[q - kv + n - 1]."""
    fn = lambda scores, q_idx, kv_idx: scores + hl.load(  # noqa: E731
        table, [q_idx.unsqueeze(1) - kv_idx.unsqueeze(0) + (n - 1)]
    ).to(torch.float32)
    fn.table = table
    return fn


def bias_relu_epilogue(bias: torch.Tensor):
    fn = lambda acc, tile: torch.relu(acc + bias[tile[1]].to(torch.float32))  # noqa: E731
    fn.bias = bias
    return fn


def residual_epilogue(residual: torch.Tensor, alpha: float):
    fn = lambda acc, tile: acc * alpha + residual[tile[0], tile[1]].to(torch.float32)  # noqa: E731
    fn.residual, fn.alpha = residual, alpha
    return fn


def temperature_mod(temperature: torch.Tensor):
    fn = lambda rows, row_idx: rows / hl.load(temperature, [row_idx]).to(torch.float32).unsqueeze(1)  # noqa: E731
    fn.temperature = temperature
    return fn


# ------------------------------------------------------------------ inputs and references


def _attention_ref(q, k, v, mask=None, bias=None):
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.size(-1))
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return (torch.softmax(s, -1) @ v.float()).to(q.dtype)


def _causal_args(dtype: torch.dtype):
    return (*(torch.randn(2, 3, 37, 24, dtype=dtype) for _ in range(3)), causal_mod)


def _causal_ref(q, k, v, mod):
    m = q.size(2)
    return _attention_ref(q, k, v, mask=torch.ones(m, m, dtype=torch.bool).tril())


def _relbias_args(dtype: torch.dtype):
    q = torch.randn(1, 2, 37, 16, dtype=dtype)
    k = torch.randn(1, 2, 45, 16, dtype=dtype)
    v = torch.randn(1, 2, 45, 16, dtype=dtype)
    table = torch.randn(2 * 45 - 1, dtype=dtype)
    return q, k, v, relative_bias_mod(table, 45)


def _relbias_ref(q, k, v, mod):
    m, n = q.size(2), k.size(2)
    table = mod.table
    idx = torch.arange(m)[:, None] - torch.arange(n)[None, :] + (n - 1)
    return _attention_ref(q, k, v, bias=table[idx].float())


def _block_mask() -> torch.Tensor:
    """3x3 blocks of 16 over 45 positions; the diagonal always on."""
    return torch.tensor([[1, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=torch.bool)


def _sparse_args(dtype: torch.dtype):
    return (*(torch.randn(3, 45, 24, dtype=dtype) for _ in range(3)), _block_mask())


def _sparse_ref(q, k, v, block_mask):
    m, n = q.size(1), k.size(1)
    mask = block_mask[torch.arange(m)[:, None] // 16, torch.arange(n)[None, :] // 16]
    return _attention_ref(q, k, v, mask=mask)


def _epilogue_bias_args(dtype: torch.dtype):
    return torch.randn(37, 70, dtype=dtype), torch.randn(70, 45, dtype=dtype), bias_relu_epilogue(torch.randn(45, dtype=dtype))


def _epilogue_bias_ref(x, y, epilogue):
    bias = epilogue.bias
    return torch.relu(x.float() @ y.float() + bias.float()).to(x.dtype)


def _epilogue_residual_args(dtype: torch.dtype):
    residual = torch.randn(37, 45, dtype=dtype)
    return torch.randn(37, 70, dtype=dtype), torch.randn(70, 45, dtype=dtype), residual_epilogue(residual, 0.5)


def _epilogue_residual_ref(x, y, epilogue):
    return ((x.float() @ y.float()) * epilogue.alpha + epilogue.residual.float()).to(x.dtype)


def _temperature_args(dtype: torch.dtype):
    return torch.randn(37, 100, dtype=dtype), temperature_mod(torch.rand(37, dtype=dtype) + 0.5)


def _temperature_ref(x, mod):
    t = mod.temperature
    return torch.softmax(x.float() / t.float()[:, None], -1).to(x.dtype)


EXAMPLES = [
    Example("attention_score_mod_causal", attention_score_mod, _causal_args, _causal_ref, FLOATS,
            (helion.Config(block_sizes=[16, 16]),)),
    Example("attention_score_mod_relbias", attention_score_mod, _relbias_args, _relbias_ref,
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[16, 32]),)),
    Example("attention_block_sparse", attention_block_sparse, _sparse_args, _sparse_ref, FLOATS),
    Example("matmul_epilogue_bias_relu", matmul_epilogue, _epilogue_bias_args, _epilogue_bias_ref, FLOATS,
            (helion.Config(block_sizes=[16, 32, 16]),)),
    Example("matmul_epilogue_residual", matmul_epilogue, _epilogue_residual_args, _epilogue_residual_ref,
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[32, 16, 64]),)),
    Example("softmax_temperature_mod", softmax_mod, _temperature_args, _temperature_ref, FLOATS,
            (helion.Config(block_sizes=[4], reduction_loops=[32]),)),
]
