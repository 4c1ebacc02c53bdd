"""MoE routing: top-k router (softmax + torch.topk), expert histograms with data-dependent
atomic adds, expert loops whose row ranges are loaded from an offsets tensor
(`hl.grid` over experts, `hl.tile(start, end)`), gathers of token rows through sorted
token ids, and the weighted combine / scatter back to token order."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example

TOKENS, EXPERTS, TOP_K = 29, 6, 2


@helion.kernel(static_shapes=True)
def topk_router(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax over experts, the top-2 experts per token, their weights renormalized."""
    t, e = logits.size()
    weights = torch.empty([t, 2], dtype=torch.float32, device=logits.device)
    experts = torch.empty([t, 2], dtype=torch.int64, device=logits.device)
    for tile_t in hl.tile(t):
        probs = torch.softmax(logits[tile_t, :].to(torch.float32), dim=-1)
        top_p, top_i = torch.topk(probs, 2, dim=-1)
        weights[tile_t, :] = top_p / torch.sum(top_p, dim=-1, keepdim=True)
        experts[tile_t, :] = top_i
    return weights, experts


@helion.kernel(static_shapes=True)
def expert_histogram(expert_ids: torch.Tensor, weights: torch.Tensor, num_experts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens per expert and the routing weight each expert receives: atomic adds at
    data-dependent indices."""
    t, k = expert_ids.size()
    counts = torch.zeros([num_experts], dtype=torch.int32, device=expert_ids.device)
    load = torch.zeros([num_experts], dtype=torch.float32, device=expert_ids.device)
    for tile_t, tile_k in hl.tile([t, k]):
        ids = expert_ids[tile_t, tile_k]
        hl.atomic_add(counts, [ids], torch.ones_like(ids, dtype=torch.int32))
        hl.atomic_add(load, [ids], weights[tile_t, tile_k])
    return counts, load


@helion.kernel(static_shapes=True)
def moe_gather_gemm(
    x: torch.Tensor, w: torch.Tensor, sorted_token_ids: torch.Tensor, expert_offsets: torch.Tensor
) -> torch.Tensor:
    """Slots sorted by expert; slot s of expert e computes x[sorted_token_ids[s]] @ w[e].
    Each expert's slot range is loaded from expert_offsets and bounds the tile loop."""
    d = x.size(1)
    num_experts, _, n = w.size()
    slots = sorted_token_ids.size(0)
    out = torch.zeros([slots, n], dtype=x.dtype, device=x.device)
    for e in hl.grid(num_experts):
        start = expert_offsets[e]
        end = expert_offsets[e + 1]
        for tile_s in hl.tile(start, end):
            token_rows = sorted_token_ids[tile_s]
            for tile_n in hl.tile(n):
                acc = hl.zeros([tile_s, tile_n], dtype=torch.float32)
                for tile_k in hl.tile(d):
                    acc = torch.addmm(acc, x[token_rows, tile_k], w[e, tile_k, tile_n])
                out[tile_s, tile_n] = torch.nn.functional.silu(acc).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def moe_scatter_combine(
    h: torch.Tensor, w: torch.Tensor, sorted_token_ids: torch.Tensor, sorted_weights: torch.Tensor,
    expert_offsets: torch.Tensor, num_tokens: int,
) -> torch.Tensor:
    """Down projection per expert (rows from expert_offsets), each slot's result times its
    routing weight added into its token's output row with hl.atomic_add."""
    _, d = h.size()
    num_experts, _, n = w.size()
    out = torch.zeros([num_tokens, n], dtype=torch.float32, device=h.device)
    for e in hl.grid(num_experts):
        start = expert_offsets[e]
        end = expert_offsets[e + 1]
        if end > start:
            for tile_s, tile_n in hl.tile([start, 0], [end, n]):
                acc = hl.zeros([tile_s, tile_n], dtype=torch.float32)
                for tile_k in hl.tile(d):
                    acc = torch.addmm(acc, h[tile_s, tile_k], w[e, tile_k, tile_n])
                scaled = acc * sorted_weights[tile_s].to(torch.float32)[:, None]
                hl.atomic_add(out, [sorted_token_ids[tile_s], tile_n], scaled)
    return out


@helion.kernel(static_shapes=True)
def moe_weighted_combine(expert_out: torch.Tensor, slot_of: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """out[t] = sum_j weights[t, j] * expert_out[slot_of[t, j]]: a gather of rows by a
    [tile_t, k] index tensor."""
    t, k = slot_of.size()
    n = expert_out.size(1)
    out = torch.empty([t, n], dtype=expert_out.dtype, device=expert_out.device)
    for tile_t, tile_n in hl.tile([t, n]):
        slots = slot_of[tile_t, :]
        rows = expert_out[slots, tile_n].to(torch.float32)
        acc = torch.sum(rows * weights[tile_t, :].to(torch.float32)[:, :, None], dim=1)
        out[tile_t, tile_n] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def expert_token_mean(x: torch.Tensor, sorted_token_ids: torch.Tensor, expert_offsets: torch.Tensor) -> torch.Tensor:
    """Mean of the token rows routed to each expert: a reduction over a data-dependent
    range [offsets[e], offsets[e+1]) of gathered rows; empty experts give 0."""
    d = x.size(1)
    num_experts = expert_offsets.size(0) - 1
    out = torch.empty([num_experts, d], dtype=torch.float32, device=x.device)
    for e in hl.grid(num_experts):
        start = expert_offsets[e]
        end = expert_offsets[e + 1]
        for tile_d in hl.tile(d):
            acc = hl.zeros([tile_d], dtype=torch.float32)
            for tile_s in hl.tile(start, end):
                acc = acc + torch.sum(x[sorted_token_ids[tile_s], tile_d].to(torch.float32), dim=0)
            count = torch.clamp_min((end - start).to(torch.float32), 1.0)
            out[e, tile_d] = acc / count
    return out


# ------------------------------------------------------------------ inputs and references


def _routing(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-2 experts (distinct per token) and weights; expert 4 gets no token."""
    g = torch.Generator().manual_seed(seed)
    choices = torch.tensor([0, 1, 2, 3, 5])
    ids = torch.stack([choices[torch.randperm(5, generator=g)[:TOP_K]] for _ in range(TOKENS)])
    weights = torch.softmax(torch.randn(TOKENS, TOP_K, generator=g), -1)
    return ids, weights


def _sorted_slots(ids: torch.Tensor):
    """Slots (token, j) sorted by expert: token ids, slot weights order, expert offsets."""
    flat = ids.reshape(-1)
    order = torch.argsort(flat, stable=True)
    token_ids = order // TOP_K
    counts = torch.bincount(flat, minlength=EXPERTS)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(counts, 0)])
    return order, token_ids, offsets


def _router_args(dtype: torch.dtype):
    """Each row a permutation of distinct logits: torch.topk orders ties arbitrarily."""
    ranks = torch.rand(TOKENS, EXPERTS).argsort(-1)
    return ((ranks * 0.375 - 1.0).to(dtype),)


def _router_ref(logits):
    probs = torch.softmax(logits.float(), -1)
    p, i = torch.topk(probs, 2, -1)
    return p / p.sum(-1, keepdim=True), i


def _histogram_args(dtype: torch.dtype):
    ids, weights = _routing()
    return ids, weights.to(dtype), EXPERTS


def _histogram_ref(ids, weights, num_experts):
    counts = torch.bincount(ids.reshape(-1), minlength=num_experts).to(torch.int32)
    load = torch.zeros(num_experts).index_add_(0, ids.reshape(-1), weights.reshape(-1).float())
    return counts, load


def _gather_gemm_args(dtype: torch.dtype):
    ids, _ = _routing()
    _, token_ids, offsets = _sorted_slots(ids)
    x = torch.randn(TOKENS, 70, dtype=dtype)
    w = torch.randn(EXPERTS, 70, 45, dtype=dtype) / 70**0.5
    return x, w, token_ids, offsets


def _gather_gemm_ref(x, w, token_ids, offsets):
    out = torch.zeros(token_ids.size(0), w.size(2))
    for e in range(w.size(0)):
        s, t = int(offsets[e]), int(offsets[e + 1])
        out[s:t] = torch.nn.functional.silu(x[token_ids[s:t]].float() @ w[e].float())
    return out.to(x.dtype)


def _scatter_args(dtype: torch.dtype):
    ids, weights = _routing()
    order, token_ids, offsets = _sorted_slots(ids)
    h = torch.randn(order.size(0), 70, dtype=dtype)
    w = torch.randn(EXPERTS, 70, 45, dtype=dtype) / 70**0.5
    return h, w, token_ids, weights.reshape(-1)[order].to(dtype), offsets, TOKENS


def _scatter_ref(h, w, token_ids, sorted_weights, offsets, num_tokens):
    out = torch.zeros(num_tokens, w.size(2))
    for e in range(w.size(0)):
        s, t = int(offsets[e]), int(offsets[e + 1])
        y = (h[s:t].float() @ w[e].float()) * sorted_weights[s:t].float()[:, None]
        out.index_add_(0, token_ids[s:t], y)
    return out


def _combine_args(dtype: torch.dtype):
    ids, weights = _routing()
    order, _, _ = _sorted_slots(ids)
    slot_of = torch.empty_like(order)
    slot_of[order] = torch.arange(order.size(0))
    return torch.randn(order.size(0), 45, dtype=dtype), slot_of.reshape(TOKENS, TOP_K), weights.to(dtype)


def _combine_ref(expert_out, slot_of, weights):
    rows = expert_out[slot_of].float()
    return (rows * weights.float()[:, :, None]).sum(1).to(expert_out.dtype)


def _token_mean_args(dtype: torch.dtype):
    ids, _ = _routing()
    _, token_ids, offsets = _sorted_slots(ids)
    return torch.randn(TOKENS, 70, dtype=dtype), token_ids, offsets


def _token_mean_ref(x, token_ids, offsets):
    out = torch.zeros(offsets.size(0) - 1, x.size(1))
    for e in range(out.size(0)):
        s, t = int(offsets[e]), int(offsets[e + 1])
        if t > s:
            out[e] = x[token_ids[s:t]].float().mean(0)
    return out


EXAMPLES = [
    Example("topk_router", topk_router, _router_args, _router_ref, FLOATS, (helion.Config(block_sizes=[8]),)),
    Example("expert_histogram", expert_histogram, _histogram_args, _histogram_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[4, 1]),)),
    Example("moe_gather_gemm", moe_gather_gemm, _gather_gemm_args, _gather_gemm_ref, FLOATS,
            (helion.Config(block_sizes=[16, 16, 32]),)),
    Example("moe_scatter_combine", moe_scatter_combine, _scatter_args, _scatter_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[16, 32, 16]),)),
    Example("moe_weighted_combine", moe_weighted_combine, _combine_args, _combine_ref, FLOATS,
            (helion.Config(block_sizes=[4, 64]),)),
    Example("expert_token_mean", expert_token_mean, _token_mean_args, _token_mean_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[16, 4]),)),
]
