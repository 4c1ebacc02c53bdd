"""Reduction sample kernels: sums (persistent and rolled), softmax variants, norms
(forward and backward), welford, losses, mean/amax/argmax."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

from .registry import FLOATS, Example, in_f32, randn, tensors


@helion.kernel(static_shapes=True)
def col_sum(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([n], dtype=x.dtype, device=x.device)
    for tile_n in hl.tile(n):
        acc = hl.zeros([tile_n], dtype=torch.float32)
        for tile_m in hl.tile(m):
            acc = acc + x[tile_m, tile_n].to(torch.float32).sum(0)
        out[tile_n] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def long_sum(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].to(torch.float32).sum(-1).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def log_softmax(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        shifted = row - torch.amax(row, dim=-1, keepdim=True)
        lse = torch.log(torch.sum(torch.exp(shifted), dim=-1, keepdim=True))
        out[tile_m, :] = (shifted - lse).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def masked_softmax(x: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = torch.where(mask[tile_m, :], float("-inf"), x[tile_m, :].to(torch.float32) * scale)
        exp = torch.exp(row - torch.amax(row, dim=-1, keepdim=True))
        out[tile_m, :] = (exp / torch.sum(exp, dim=-1, keepdim=True)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def layer_norm_fwd(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = x.size()
    out = torch.empty_like(x)
    mean = torch.empty([m], dtype=torch.float32, device=x.device)
    rstd = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        mu = torch.sum(row, dim=-1) / n
        centered = row - mu[:, None]
        r = torch.rsqrt(torch.sum(centered * centered, dim=-1) / n + eps)
        y = centered * r[:, None] * weight[:].to(torch.float32) + bias[:].to(torch.float32)
        out[tile_m, :] = y.to(out.dtype)
        mean[tile_m] = mu
        rstd[tile_m] = r
    return out, mean, rstd


@helion.kernel(static_shapes=True)
def layer_norm_bwd(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = x.size()
    dx = torch.empty_like(x)
    dw = torch.empty([n], dtype=weight.dtype, device=x.device)
    db = torch.empty([n], dtype=weight.dtype, device=x.device)
    for tile_m in hl.tile(m):
        xhat = (x[tile_m, :].to(torch.float32) - mean[tile_m][:, None]) * rstd[tile_m][:, None]
        wdy = weight[:].to(torch.float32) * dy[tile_m, :].to(torch.float32)
        c1 = torch.sum(xhat * wdy, dim=-1, keepdim=True) / n
        c2 = torch.sum(wdy, dim=-1, keepdim=True) / n
        dx[tile_m, :] = ((wdy - (xhat * c1 + c2)) * rstd[tile_m][:, None]).to(dx.dtype)
    for tile_n in hl.tile(n):
        dw_acc = hl.zeros([tile_n], dtype=torch.float32)
        db_acc = hl.zeros([tile_n], dtype=torch.float32)
        for tile_r in hl.tile(m):
            g = dy[tile_r, tile_n].to(torch.float32)
            xhat = (x[tile_r, tile_n].to(torch.float32) - mean[tile_r][:, None]) * rstd[tile_r][:, None]
            dw_acc = dw_acc + torch.sum(g * xhat, dim=0)
            db_acc = db_acc + torch.sum(g, dim=0)
        dw[tile_n] = dw_acc.to(dw.dtype)
        db[tile_n] = db_acc.to(db.dtype)
    return dx, dw, db


@helion.kernel(static_shapes=True)
def rms_norm_rstd(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    out = torch.empty_like(x)
    rstd = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        r = torch.rsqrt(torch.mean(row * row, dim=-1) + eps)
        out[tile_m, :] = (row * r[:, None] * weight[:].to(torch.float32)).to(out.dtype)
        rstd[tile_m] = r
    return out, rstd


@helion.kernel(static_shapes=True)
def welford_layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        count = hl.zeros([tile_m], dtype=torch.float32)
        mean = hl.zeros([tile_m], dtype=torch.float32)
        m2 = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n):
            chunk = x[tile_m, tile_n].to(torch.float32)
            chunk_count = (tile_n.index < n).to(torch.float32).sum()
            chunk_sum = torch.sum(chunk, dim=-1)
            chunk_mean = chunk_sum / chunk_count
            chunk_m2 = torch.sum(chunk * chunk, dim=-1) - chunk_sum * chunk_mean
            delta = chunk_mean - mean
            new_count = count + chunk_count
            mean = mean + delta * (chunk_count / new_count)
            m2 = m2 + chunk_m2 + delta * delta * (count * chunk_count / new_count)
            count = new_count
        rstd = torch.rsqrt(m2 / count + eps)
        for tile_n in hl.tile(n):
            chunk = x[tile_m, tile_n].to(torch.float32)
            y = (chunk - mean[:, None]) * rstd[:, None]
            out[tile_m, tile_n] = (y * weight[tile_n].to(torch.float32) + bias[tile_n].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(static_shapes=True, ignore_warnings=[helion.exc.TensorOperationInWrapper])
def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    n, v = logits.size()
    losses = torch.empty([n], dtype=torch.float32, device=logits.device)
    logits_flat = logits.view(-1)
    for tile_n in hl.tile(n):
        row = logits[tile_n, :].to(torch.float32)
        picked = hl.load(logits_flat, [tile_n.index * v + labels[tile_n]]).to(torch.float32)
        row_max = torch.amax(row, dim=-1)
        lse = torch.log(torch.sum(torch.exp(row - row_max[:, None]), dim=-1)) + row_max
        losses[tile_n] = lse - picked
    return losses.mean()


@helion.kernel(static_shapes=True, ignore_warnings=[helion.exc.TensorOperationInWrapper])
def kl_div(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    n, v = log_q.size()
    per_row = torch.empty([n], dtype=torch.float32, device=p.device)
    for tile_n in hl.tile(n):
        target = p[tile_n, :].to(torch.float32)
        term = target * (torch.log(target) - log_q[tile_n, :].to(torch.float32))
        per_row[tile_n] = torch.sum(term, dim=-1)
    return per_row.sum() / n


@helion.kernel(static_shapes=True)
def row_mean_amax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    mean = torch.empty([m], dtype=x.dtype, device=x.device)
    amax = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        mean[tile_m] = torch.mean(row, dim=-1).to(mean.dtype)
        amax[tile_m] = torch.amax(row, dim=-1).to(amax.dtype)
    return mean, amax


@helion.kernel(static_shapes=True)
def row_argmax(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = torch.argmax(x[tile_m, :], dim=-1)
    return out


@helion.kernel(static_shapes=True)
def sum_all_atomic(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.zeros([1], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        partial = torch.sum(torch.sum(x[tile_m, tile_n].to(torch.float32), dim=1), dim=0)
        hl.atomic_add(out, [0], partial)
    return out


def _layer_norm_fwd_ref(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float = 1e-5):
    xf = x.float()
    mean = xf.mean(-1)
    rstd = torch.rsqrt(xf.var(-1, unbiased=False) + eps)
    out = F.layer_norm(xf, [x.shape[-1]], w.float(), b.float(), eps).to(x.dtype)
    return out, mean, rstd


def _layer_norm_bwd_args(dtype: torch.dtype):
    x = torch.randn(37, 100, dtype=dtype)
    dy = torch.randn(37, 100, dtype=dtype)
    w = torch.randn(100, dtype=dtype)
    xf = x.float()
    mean = xf.mean(-1)
    rstd = torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5)
    return dy, x, w, mean, rstd


def _layer_norm_bwd_ref(dy, x, w, mean, rstd):
    xf = x.float().requires_grad_(True)
    wf = w.float().requires_grad_(True)
    bf = torch.zeros_like(wf, requires_grad=True)
    F.layer_norm(xf, [x.shape[-1]], wf, bf, 1e-5).backward(dy.float())
    return xf.grad.to(x.dtype), wf.grad.to(w.dtype), bf.grad.to(w.dtype)


def _rms_norm_rstd_ref(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1) + eps)
    return (xf * rstd[:, None] * w.float()).to(x.dtype), rstd


def _masked_softmax_args(dtype: torch.dtype):
    x = torch.randn(37, 100, dtype=dtype)
    mask = torch.rand(37, 100) < 0.3
    mask[:, 0] = False  # no fully masked row
    return x, mask, 0.125


def _masked_softmax_ref(x, mask, scale):
    return torch.softmax(torch.where(mask, float("-inf"), x.float() * scale), -1).to(x.dtype)


def _cross_entropy_args(dtype: torch.dtype):
    return torch.randn(37, 1000, dtype=dtype), torch.randint(0, 1000, (37,))


def _kl_div_args(dtype: torch.dtype):
    return torch.log_softmax(torch.randn(37, 100), -1).to(dtype), torch.softmax(torch.randn(37, 100), -1).to(dtype)


def _row_mean_amax_ref(x: torch.Tensor):
    return x.float().mean(-1).to(x.dtype), x.amax(-1)


def _distinct(*shape: int):
    """Each row a random permutation of 0..n-1: no ties, exact in every dtype, so argmax is unique."""
    return lambda dtype: torch.stack([torch.randperm(shape[1]) for _ in range(shape[0])]).to(dtype)


@helion.kernel(static_shapes=True)
def row_var_std(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Unbiased variance and population std per row (var.correction, twice)."""
    m, _ = x.size()
    var = torch.empty([m], dtype=x.dtype, device=x.device)
    std = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        var[tile_m] = torch.var(row, dim=1).to(var.dtype)
        std[tile_m] = torch.std(row, dim=1, correction=0).to(std.dtype)
    return var, std


def _row_var_std_ref(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    row = x.float()
    return torch.var(row, dim=1).to(x.dtype), torch.std(row, dim=1, correction=0).to(x.dtype)


EXAMPLES = [
    Example("col_sum", col_sum, tensors(randn(100, 37)), in_f32(lambda x: x.sum(0)), FLOATS,
            (helion.Config(block_sizes=[8, 64]),)),
    Example("long_sum", long_sum, tensors(randn(5, 1000)), in_f32(lambda x: x.sum(-1)), FLOATS,
            (helion.Config(block_sizes=[1], reduction_loops=[64]),
             helion.Config(block_sizes=[2], reduction_loops=[256]))),
    Example("log_softmax", log_softmax, tensors(randn(37, 100)), in_f32(lambda x: torch.log_softmax(x, -1)), FLOATS,
            (helion.Config(block_sizes=[4], reduction_loops=[32]),)),
    Example("masked_softmax", masked_softmax, _masked_softmax_args, _masked_softmax_ref, FLOATS,
            (helion.Config(block_sizes=[8]),)),
    Example("layer_norm_fwd", layer_norm_fwd, tensors(randn(37, 100), randn(100), randn(100)), _layer_norm_fwd_ref,
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[4], reduction_loops=[32]),)),
    Example("layer_norm_bwd", layer_norm_bwd, _layer_norm_bwd_args, _layer_norm_bwd_ref, (torch.float32,),
            (helion.Config(block_sizes=[4, 16, 8]),)),
    Example("rms_norm_rstd", rms_norm_rstd, tensors(randn(37, 100), randn(100)), _rms_norm_rstd_ref, FLOATS,
            (helion.Config(block_sizes=[2], reduction_loops=[16]),)),
    Example("welford_layer_norm", welford_layer_norm, tensors(randn(37, 100), randn(100), randn(100)),
            in_f32(lambda x, w, b: F.layer_norm(x, [x.shape[-1]], w, b, 1e-5)), (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[4, 64, 32]),)),
    Example("cross_entropy", cross_entropy, _cross_entropy_args,
            lambda logits, labels: F.cross_entropy(logits.float(), labels), (torch.float32, torch.bfloat16)),
    Example("kl_div", kl_div, _kl_div_args,
            lambda log_q, p: F.kl_div(log_q.float(), p.float(), reduction="batchmean"),
            (torch.float32, torch.bfloat16)),
    Example("row_mean_amax", row_mean_amax, tensors(randn(37, 100)), _row_mean_amax_ref, FLOATS),
    Example("row_argmax", row_argmax, tensors(_distinct(37, 100)), lambda x: torch.argmax(x, -1),
            (torch.float32, torch.bfloat16)),
    Example("sum_all_atomic", sum_all_atomic, tensors(randn(37, 100)), lambda x: x.float().sum().reshape(1),
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[8, 64]),)),
    Example("row_var_std", row_var_std, tensors(randn(37, 300)), _row_var_std_ref, FLOATS,
            (helion.Config(block_sizes=[8], reduction_loops=[32]),)),
]
