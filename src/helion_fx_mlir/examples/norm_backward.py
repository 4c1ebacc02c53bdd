"""Norm backward passes with two-level tiles: an outer `hl.tile(m, block_size=block_m)`
(block_m registered with `hl.register_block_size`) whose body loops over
`hl.tile(outer.begin, outer.end)`, computing dx row by row and one partial weight
gradient per outer tile (summed on the host or with `hl.atomic_add`)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

from .registry import FLOATS, Example

_WRAPPER_OPS = [helion.exc.TensorOperationInWrapper]


@helion.kernel(static_shapes=True, ignore_warnings=_WRAPPER_OPS)
def rms_norm_bwd(
    grad_out: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """dx per row, dweight as per-outer-tile partial sums reduced on the host."""
    m, n = x.size()
    block_m = hl.register_block_size(m)
    grad_x = torch.empty_like(x)
    grad_w_parts = torch.empty([helion.cdiv(m, block_m), n], dtype=torch.float32, device=x.device)
    for tile_outer in hl.tile(m, block_size=block_m):
        dw = hl.zeros([n], dtype=torch.float32)
        for tile_m in hl.tile(tile_outer.begin, tile_outer.end):
            g = grad_out[tile_m, :].to(torch.float32)
            r = rstd[tile_m]
            xhat = x[tile_m, :].to(torch.float32) * r[:, None]
            dw = dw + torch.sum(g * xhat, dim=0)
            wg = g * weight[:].to(torch.float32)
            proj = torch.sum(wg * xhat, dim=-1, keepdim=True) / n
            grad_x[tile_m, :] = ((wg - xhat * proj) * r[:, None]).to(grad_x.dtype)
        grad_w_parts[tile_outer.id, :] = dw
    return grad_x, grad_w_parts.sum(0).to(weight.dtype)


@helion.kernel(static_shapes=True, ignore_warnings=_WRAPPER_OPS)
def layer_norm_bwd_partial(
    grad_out: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Layer norm backward: dx, and dweight/dbias partials per outer row tile."""
    m, n = x.size()
    block_m = hl.register_block_size(m)
    parts = helion.cdiv(m, block_m)
    grad_x = torch.empty_like(x)
    dw_parts = torch.empty([parts, n], dtype=torch.float32, device=x.device)
    db_parts = torch.empty([parts, n], dtype=torch.float32, device=x.device)
    for tile_outer in hl.tile(m, block_size=block_m):
        dw_acc = hl.zeros([n], dtype=torch.float32)
        db_acc = hl.zeros([n], dtype=torch.float32)
        for tile_m in hl.tile(tile_outer.begin, tile_outer.end):
            g = grad_out[tile_m, :].to(torch.float32)
            mu = mean[tile_m]
            r = rstd[tile_m]
            xhat = (x[tile_m, :].to(torch.float32) - mu[:, None]) * r[:, None]
            dw_acc = dw_acc + torch.sum(g * xhat, dim=0)
            db_acc = db_acc + torch.sum(g, dim=0)
            wg = g * weight[:].to(torch.float32)
            c1 = torch.sum(xhat * wg, dim=-1) / n
            c2 = torch.sum(wg, dim=-1) / n
            dx = (wg - (xhat * c1[:, None] + c2[:, None])) * r[:, None]
            grad_x[tile_m, :] = dx.to(grad_x.dtype)
        dw_parts[tile_outer.id, :] = dw_acc
        db_parts[tile_outer.id, :] = db_acc
    return grad_x, dw_parts.sum(0).to(weight.dtype), db_parts.sum(0).to(weight.dtype)


@helion.kernel(static_shapes=True)
def rms_norm_bwd_atomic(
    grad_out: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """dx in a first loop; dweight in a second, column-tiled, with the row tile split in
    two levels and each outer tile's partial added into grad_w with hl.atomic_add."""
    m, n = x.size()
    grad_x = torch.empty_like(x)
    grad_w = torch.zeros([n], dtype=torch.float32, device=x.device)
    block_m = hl.register_block_size(m)
    for tile_m in hl.tile(m):
        g = grad_out[tile_m, :].to(torch.float32)
        r = rstd[tile_m]
        xhat = x[tile_m, :].to(torch.float32) * r[:, None]
        wg = g * weight[:].to(torch.float32)
        proj = torch.mean(wg * xhat, dim=-1)
        grad_x[tile_m, :] = ((wg - xhat * proj[:, None]) * r[:, None]).to(grad_x.dtype)
    for tile_outer, tile_n in hl.tile([m, n], block_size=[block_m, None]):
        acc = hl.zeros([tile_n], dtype=torch.float32)
        for tile_r in hl.tile(tile_outer.begin, tile_outer.end):
            xhat = x[tile_r, tile_n].to(torch.float32) * rstd[tile_r][:, None]
            acc = acc + torch.sum(grad_out[tile_r, tile_n].to(torch.float32) * xhat, dim=0)
        hl.atomic_add(grad_w, [tile_n], acc)
    return grad_x, grad_w


@helion.kernel(static_shapes=True)
def layer_norm_bwd_dx_chunked(
    grad_out: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor
) -> torch.Tensor:
    """dx for wide rows: the two row reductions accumulate over column chunks of a
    registered block size, then a second chunk loop writes dx."""
    m, n = x.size()
    grad_x = torch.empty_like(x)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        mu = mean[tile_m]
        r = rstd[tile_m]
        c1 = hl.zeros([tile_m, block_n], dtype=torch.float32)
        c2 = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            xhat = (x[tile_m, tile_n].to(torch.float32) - mu[:, None]) * r[:, None]
            wg = grad_out[tile_m, tile_n].to(torch.float32) * weight[tile_n].to(torch.float32)
            c1 = c1 + xhat * wg
            c2 = c2 + wg
        s1 = c1.sum(-1) / n
        s2 = c2.sum(-1) / n
        for tile_n in hl.tile(n, block_size=block_n):
            xhat = (x[tile_m, tile_n].to(torch.float32) - mu[:, None]) * r[:, None]
            wg = grad_out[tile_m, tile_n].to(torch.float32) * weight[tile_n].to(torch.float32)
            dx = (wg - (xhat * s1[:, None] + s2[:, None])) * r[:, None]
            grad_x[tile_m, tile_n] = dx.to(grad_x.dtype)
    return grad_x


# ------------------------------------------------------------------ inputs and references

EPS = 1e-5


def _rms_args(m: int, n: int):
    def make(dtype: torch.dtype):
        x = torch.randn(m, n, dtype=dtype)
        g = torch.randn(m, n, dtype=dtype)
        w = torch.randn(n, dtype=dtype)
        rstd = torch.rsqrt(x.float().pow(2).mean(-1) + EPS)
        return g, x, w, rstd

    return make


def _rms_grads(g, x, w):
    """dx and dweight in f32."""
    xf = x.float().requires_grad_(True)
    wf = w.float().requires_grad_(True)
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * wf
    y.backward(g.float())
    return xf.grad, wf.grad


def _rms_ref(g, x, w, rstd):
    dx, dw = _rms_grads(g, x, w)
    return dx.to(x.dtype), dw.to(w.dtype)


def _rms_atomic_ref(g, x, w, rstd):
    dx, dw = _rms_grads(g, x, w)
    return dx.to(x.dtype), dw  # grad_w accumulates in f32


def _ln_args(m: int, n: int):
    def make(dtype: torch.dtype):
        x = torch.randn(m, n, dtype=dtype)
        g = torch.randn(m, n, dtype=dtype)
        w = torch.randn(n, dtype=dtype)
        xf = x.float()
        return g, x, w, xf.mean(-1), torch.rsqrt(xf.var(-1, unbiased=False) + EPS)

    return make


def _ln_ref(g, x, w, mean, rstd):
    xf = x.float().requires_grad_(True)
    wf = w.float().requires_grad_(True)
    bf = torch.zeros_like(wf, requires_grad=True)
    F.layer_norm(xf, [x.shape[-1]], wf, bf, EPS).backward(g.float())
    return xf.grad.to(x.dtype), wf.grad.to(w.dtype), bf.grad.to(w.dtype)


def _ln_dx_ref(g, x, w, mean, rstd):
    return _ln_ref(g, x, w, mean, rstd)[0]


EXAMPLES = [
    Example("rms_norm_bwd", rms_norm_bwd, _rms_args(45, 70), _rms_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[16, 4]), helion.Config(block_sizes=[64, 1]))),
    Example("layer_norm_bwd_partial", layer_norm_bwd_partial, _ln_args(37, 100), _ln_ref,
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[8, 2]),)),
    Example("rms_norm_bwd_atomic", rms_norm_bwd_atomic, _rms_args(45, 70), _rms_atomic_ref, FLOATS,
            (helion.Config(block_sizes=[2, 16, 8, 4]),)),
    Example("layer_norm_bwd_dx_chunked", layer_norm_bwd_dx_chunked, _ln_args(37, 300), _ln_dx_ref, FLOATS,
            (helion.Config(block_sizes=[64, 4]),)),
]
