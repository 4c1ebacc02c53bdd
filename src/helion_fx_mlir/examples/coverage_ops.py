"""Small kernels that exercise the remaining inventory targets (math ops, views, SymInt
arithmetic, hl.arange, strided grids, every atomic, scalar-operand ops, topk) so each is
proven by execution."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

from .registry import FLOATS, Example, randn, tensors


@helion.kernel(static_shapes=True)
def math_mix(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        v = x[tile]
        a = torch.minimum(torch.exp2(v), torch.sqrt(torch.abs(v)))
        b = torch.log2(torch.abs(v) + 1) + torch.pow(v, 2) + (v >= 0.5).to(v.dtype)
        out[tile] = (a + b).clone()
    return out


def _math_mix_ref(x: torch.Tensor) -> torch.Tensor:
    a = torch.minimum(torch.exp2(x), torch.sqrt(torch.abs(x)))
    b = torch.log2(torch.abs(x) + 1) + torch.pow(x, 2) + (x >= 0.5).to(x.dtype)
    return a + b


@helion.kernel(static_shapes=True)
def views_amax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    best = torch.empty([m], dtype=x.dtype, device=x.device)
    both = torch.empty([m, 2], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :]
        values = torch.amax(row, dim=1)
        total = row.sum(1, keepdim=True).squeeze(1)
        best[tile_m] = values
        both[tile_m, :] = torch.stack([values, total], dim=-1) + total.unsqueeze(1) * 0
    return best, both


def _views_amax_ref(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    values = x.max(dim=1).values
    return values, torch.stack([values, x.sum(1)], dim=-1)


@helion.kernel(static_shapes=True)
def row_max_dim(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    values = torch.empty([m], dtype=x.dtype, device=x.device)
    indices = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        best, where = torch.max(x[tile_m, :], dim=1)
        values[tile_m] = best
        indices[tile_m] = where
    return values, indices


@helion.kernel(static_shapes=True)
def bmm_out_dtype(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    bsz, m, k = a.size()
    _, _, n = b.size()
    out = torch.empty([bsz, m, n], dtype=torch.float32, device=a.device)
    for tile_b, tile_m, tile_n in hl.tile([bsz, m, n]):
        acc = hl.zeros([tile_b, tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = acc + torch.bmm(a[tile_b, tile_m, tile_k], b[tile_b, tile_k, tile_n], out_dtype=torch.float32)
        out[tile_b, tile_m, tile_n] = acc
    return out


@helion.kernel(static_shapes=True)
def symint_arith(x: torch.Tensor, k: int) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        v = x[tile] * ((k * 3 - 1) // 2) + (k % 3) + k / 4 + (-k)
        if k > 2:
            v = v + 1
        else:
            v = v - 1
        if k <= 2:
            v = v - 1
        else:
            v = v + 0.5
        if k == 5:
            v = v * 2
        else:
            v = v * 3
        if k >= 4:
            v = v + 2
        else:
            v = v - 2
        if k < 3:
            v = v * 0.5
        else:
            v = v * 4
        out[tile] = v
    return out


def _symint_arith_ref(x: torch.Tensor, k: int) -> torch.Tensor:
    v = x * ((k * 3 - 1) // 2) + (k % 3) + k / 4 + (-k)
    v = v + 1 if k > 2 else v - 1
    v = v - 1 if k <= 2 else v + 0.5
    v = v * 2 if k == 5 else v * 3
    v = v + 2 if k >= 4 else v - 2
    return v * 0.5 if k < 3 else v * 4


@helion.kernel(static_shapes=True)
def arange_strided_grid(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.zeros_like(x)
    for tile_n in hl.tile(n):
        for i in hl.grid(1, m, 3):
            out[i, tile_n] = x[i, tile_n] + hl.arange(4).sum().to(x.dtype)
    return out


def _arange_strided_grid_ref(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    out[1::3] = x[1::3] + 6
    return out


@helion.kernel(static_shapes=True)
def all_atomics(x: torch.Tensor, bits: torch.Tensor) -> tuple[torch.Tensor, ...]:
    n = x.size(0)
    mx = torch.full([1], float("-inf"), dtype=x.dtype, device=x.device)
    mn = torch.full([1], float("inf"), dtype=x.dtype, device=x.device)
    ands = torch.full([1], -1, dtype=torch.int32, device=x.device)
    ors = torch.zeros([1], dtype=torch.int32, device=x.device)
    xors = torch.zeros([1], dtype=torch.int32, device=x.device)
    last = torch.zeros([n], dtype=x.dtype, device=x.device)
    flags = torch.zeros([n], dtype=torch.int32, device=x.device)
    for tile in hl.tile(n, block_size=16):
        hl.atomic_max(mx, [0], x[tile].amax())
        hl.atomic_min(mn, [0], x[tile].amin())
        b = bits[tile]
        hl.atomic_and(ands, [0], b.amax())
        hl.atomic_or(ors, [0], b.amin())
        hl.atomic_xor(xors, [0], b.amax())
        hl.atomic_xchg(last, [tile], x[tile])
        hl.atomic_cas(flags, [tile], torch.zeros_like(b), b)
    return mx, mn, ands, ors, xors, last, flags


def _all_atomics_ref(x: torch.Tensor, bits: torch.Tensor) -> tuple[torch.Tensor, ...]:
    ands, ors, xors = -1, 0, 0
    for chunk in bits.split(16):
        ands &= int(chunk.max())
        ors |= int(chunk.min())
        xors ^= int(chunk.max())
    one = lambda v, dt: torch.tensor([v], dtype=dt)  # noqa: E731
    return (one(float(x.max()), x.dtype), one(float(x.min()), x.dtype), one(ands, torch.int32),
            one(ors, torch.int32), one(xors, torch.int32), x.clone(), bits.clone())


@helion.kernel(static_shapes=True)
def scalar_operands(x: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out = torch.empty_like(x)
    bits = torch.empty_like(n)
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        out[tile] = torch.remainder(5.0, v) + torch.fmod(v, 1.5)
        i = n[tile]
        scalar_first = torch.bitwise_and(12, i) - torch.bitwise_or(1, i) + torch.bitwise_xor(9, i)
        bits[tile] = ((i | 3) ^ 5) + torch.remainder(7, i) + scalar_first
    return out, bits


def _scalar_operands_ref(x: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    bits = ((n | 3) ^ 5) + torch.remainder(7, n) + torch.bitwise_and(12, n) - torch.bitwise_or(1, n) + torch.bitwise_xor(9, n)
    return torch.remainder(5.0, x) + torch.fmod(x, 1.5), bits


@helion.kernel(static_shapes=True)
def ema_update(avg: torch.Tensor, x: torch.Tensor, decay: torch.Tensor, limit: float) -> torch.Tensor:
    out = torch.empty_like(avg)
    for tile in hl.tile(avg.size()):
        a, v = avg[tile], x[tile]
        blended = torch.lerp(a, v, decay[tile])
        damped = torch.addcdiv(a, v, a.abs() + 1, value=0.5)
        out[tile] = torch.where(v.abs() <= limit, blended, torch.addcmul(damped, v, v, value=-0.1))
    return out


def _ema_update_ref(avg: torch.Tensor, x: torch.Tensor, decay: torch.Tensor, limit: float) -> torch.Tensor:
    damped = torch.addcdiv(avg, x, avg.abs() + 1, value=0.5)
    return torch.where(x.abs() <= limit, torch.lerp(avg, x, decay), torch.addcmul(damped, x, x, value=-0.1))


def _away_from_zero(dtype: torch.dtype) -> torch.Tensor:
    """Divisors well away from 0, so remainder's floor(a / b) is not at a rounding edge."""
    x = torch.randn(37, 50, dtype=dtype)
    return torch.where(x >= 0, x + 0.5, x - 0.5)


@helion.kernel(static_shapes=True)
def router_topk(logits: torch.Tensor, k: hl.constexpr) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = logits.size()
    weights = torch.empty([m, k], dtype=logits.dtype, device=logits.device)
    experts = torch.empty([m, k], dtype=torch.int64, device=logits.device)
    for tile_m in hl.tile(m):
        top, index = torch.topk(logits[tile_m, :], k, dim=-1)
        weights[tile_m, :] = torch.softmax(top.to(torch.float32), dim=-1).to(weights.dtype)
        experts[tile_m, :] = index
    return weights, experts


def _router_topk_ref(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    top, index = torch.topk(logits, k, dim=-1)
    return torch.softmax(top.float(), dim=-1).to(logits.dtype), index


@helion.kernel(static_shapes=True)
def column_bottomk(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    _, n = x.size()
    values = torch.empty([3, n], dtype=x.dtype, device=x.device)
    rows = torch.empty([3, n], dtype=torch.int64, device=x.device)
    for tile_n in hl.tile(n):
        low, where = torch.topk(x[:, tile_n], 3, dim=0, largest=False)
        values[:, tile_n] = low
        rows[:, tile_n] = where
    return values, rows


@helion.kernel(static_shapes=True)
def clamp_hypot(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        v, low = x[tile], lo[tile]
        out[tile] = torch.clamp(v, low, hi[tile]) + torch.hypot(v, low)
    return out


@helion.kernel(static_shapes=True)
def sign_ops(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        v, w = x[tile], y[tile]
        out[tile] = torch.copysign(v, w) + torch.signbit(w).to(v.dtype) + torch.copysign(v, -1.0)
    return out


def _with_negative_zeros(dtype: torch.dtype) -> torch.Tensor:
    """Signs to copy, a few of them -0.0 and +0.0 (signbit tells those apart)."""
    y = torch.randn(37, 50, dtype=dtype)
    y[::5, ::7] = -0.0
    y[1::5, ::7] = 0.0
    return y


@helion.kernel(static_shapes=True)
def guarded_inverse(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """1 / x where x is finite and not close to y, else 0: `x == x` inside isfinite is
    false on NaN, isclose's `and` is a prims op, and 1 / 0 is inf (then dropped)."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        v, w = x[tile], y[tile]
        keep = torch.isfinite(v) & ~torch.isclose(v, w)
        out[tile] = torch.where(keep, 1.0 / v, 0.0) + (1.0 / w).clamp(-4.0, 4.0)
    return out


def _guarded_inverse_ref(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    keep = torch.isfinite(x) & ~torch.isclose(x, y)
    return torch.where(keep, 1.0 / x, 0.0) + (1.0 / y).clamp(-4.0, 4.0)


def _with_specials(dtype: torch.dtype) -> torch.Tensor:
    """Zeros, NaN and infinities among normal values."""
    x = torch.randn(37, 50, dtype=dtype)
    x[::6, ::5] = 0.0
    x[1::6, ::7] = float("nan")
    x[2::6, ::9] = float("inf")
    return x


def _near(dtype: torch.dtype) -> torch.Tensor:
    """Zeros in other places, some where _with_specials has its own (isclose there)."""
    y = torch.randn(37, 50, dtype=dtype)
    y[::4, ::3] = 0.0
    return y


def _distinct_logits(dtype: torch.dtype) -> torch.Tensor:
    """Rows of distinct values exact in bf16: eager topk orders ties unspecified."""
    return torch.stack([torch.randperm(20) for _ in range(37)]).to(dtype) / 4 - 2.5


def _distinct_ints(dtype: torch.dtype) -> torch.Tensor:
    """Distinct values (eager topk orders ties unspecified), with the type's extremes."""
    x = torch.randperm(37 * 50).reshape(37, 50).to(dtype) - 900
    x[0, 7] = torch.iinfo(dtype).min
    x[5, 7] = torch.iinfo(dtype).max
    return x


EXAMPLES = [
    Example("math_mix", math_mix, tensors(randn(37, 50)), _math_mix_ref, (torch.float64,)),
    Example("views_amax", views_amax, tensors(randn(37, 100)), _views_amax_ref),
    Example("row_max_dim", row_max_dim, tensors(randn(37, 100)), lambda x: tuple(x.max(dim=1))),
    Example("bmm_out_dtype", bmm_out_dtype, tensors(randn(3, 37, 50), randn(3, 50, 20)),
            lambda a, b: a.double().bmm(b.double()).float(), (torch.float16, torch.bfloat16)),
    Example("symint_arith", symint_arith, tensors(randn(37), 5), _symint_arith_ref),
    Example("arange_strided_grid", arange_strided_grid, tensors(randn(37, 50)), _arange_strided_grid_ref),
    Example("all_atomics", all_atomics,
            tensors(randn(37), lambda dtype: torch.randint(1, 1 << 20, (37,), dtype=torch.int32)), _all_atomics_ref),
    Example("scalar_operands", scalar_operands,
            tensors(_away_from_zero, lambda dtype: torch.randint(1, 1000, (37,), dtype=torch.int32)), _scalar_operands_ref),
    Example("ema_update", ema_update, tensors(randn(37, 50), randn(37, 50), lambda dtype: torch.rand(37, 50, dtype=dtype), 1.1),
            _ema_update_ref, configs=(helion.Config(block_sizes=[8, 16]),)),
    Example("router_topk", router_topk, tensors(_distinct_logits, 4), _router_topk_ref, FLOATS,
            (helion.Config(block_sizes=[8]),)),
    Example("column_bottomk", column_bottomk, tensors(_distinct_ints), lambda x: tuple(torch.topk(x, 3, dim=0, largest=False)),
            (torch.int32, torch.int16)),
    Example("clamp_hypot", clamp_hypot, tensors(randn(37, 50), randn(37, 50), randn(37, 50)),
            lambda x, lo, hi: torch.clamp(x, lo, hi) + torch.hypot(x, lo), FLOATS),
    Example("guarded_inverse", guarded_inverse, tensors(_with_specials, _near), _guarded_inverse_ref, FLOATS),
    Example("sign_ops", sign_ops, tensors(randn(37, 50), _with_negative_zeros),
            lambda x, y: torch.copysign(x, y) + torch.signbit(y).to(x.dtype) + torch.copysign(x, -1.0), (*FLOATS, torch.float64)),
]
