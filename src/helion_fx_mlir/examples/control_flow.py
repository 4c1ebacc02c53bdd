"""Control-flow sample kernels: if/else and if without else (scalar arg, loaded scalar), while, scans,
custom reductions, hl.grid, tile attributes, multiple outputs, host views, several
top-level loops, static_range, split/join and specialize."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example, in_f32, randn, tensors


def combine_max(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.maximum(a, b)


def combine_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b


def combine_argmax(
    value_a: torch.Tensor, index_a: torch.Tensor, value_b: torch.Tensor, index_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    take_b = (value_b > value_a) | ((value_b == value_a) & (index_b < index_a))
    return torch.where(take_b, value_b, value_a), torch.where(take_b, index_b, index_a)


@helion.kernel(static_shapes=True)
def if_scalar_arg(x: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        v = x[tile]
        if alpha != 1.0:
            v = v * alpha
        else:
            v = v + 1.0
        out[tile] = v
    return out


@helion.kernel(static_shapes=True)
def if_loaded_scalar(x: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
    """Per row: double it where flags[row] > 0, else negate it (a 0-d tensor predicate)."""
    m, n = x.size()
    out = torch.empty_like(x)
    for i in hl.grid(m):
        for tile_n in hl.tile(n):
            v = x[i, tile_n]
            if flags[i] > 0:
                v = v * 2.0
            else:
                v = -v
            out[i, tile_n] = v
    return out


@helion.kernel(static_shapes=True)
def if_store_branch(x: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
    """Stores inside the branches: rows with flags[row] != 0 are copied, the others zeroed."""
    m, n = x.size()
    out = torch.empty_like(x)
    for i in hl.grid(m):
        if flags[i] != 0:
            for tile_copy in hl.tile(n):
                out[i, tile_copy] = x[i, tile_copy]
        else:
            for tile_zero in hl.tile(n):
                out[i, tile_zero] = torch.zeros_like(x[i, tile_zero])
    return out


@helion.kernel(static_shapes=True)
def if_no_else_flags(x: torch.Tensor, scale: int, shift: int) -> torch.Tensor:
    """x doubled if scale > 0, then plus 1 if shift > 0: ifs without else on scalar
    args (SymBool); a skipped if yields the tile value from before it."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        acc = x[tile]
        if scale > 0:
            acc = acc * 2.0
        if shift > 0:
            acc = acc + 1.0
        out[tile] = acc
    return out


@helion.kernel(static_shapes=True)
def if_no_else_accumulate(x: torch.Tensor, y: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    """Row sums of x, plus those of y where gate[row] > 0: an if without else on a loaded
    0-d value inside the reduction loop updates the loop-carried accumulator."""
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for i in hl.grid(m):
        acc = hl.zeros([], dtype=torch.float32)
        for tile_n in hl.tile(n):
            acc = acc + x[i, tile_n].to(torch.float32).sum()
            if gate[i] > 0:
                acc = acc + y[i, tile_n].to(torch.float32).sum()
        out[i] = acc.to(x.dtype)
    return out


@helion.kernel(static_shapes=True)
def while_halving(x: torch.Tensor) -> torch.Tensor:
    """How many halvings bring |x| to at most 1: a data-dependent while loop."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        v = torch.abs(x[tile])
        steps = torch.zeros_like(v)
        while torch.any(v > 1.0):
            big = v > 1.0
            v = torch.where(big, v * 0.5, v)
            steps = steps + big.to(v.dtype)
        out[tile] = steps
    return out


@helion.kernel(static_shapes=True)
def cumsum_rows(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        out[tile_m, :] = hl.cumsum(x[tile_m, :].to(torch.float32), dim=1).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def scan_cummax(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        out[tile_m, :] = hl.associative_scan(combine_max, x[tile_m, :], dim=1)
    return out


@helion.kernel(static_shapes=True)
def scan_reverse_cumsum(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        scanned = hl.associative_scan(combine_add, x[tile_m, :].to(torch.float32), dim=1, reverse=True)
        out[tile_m, :] = scanned.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def reduce_custom_max(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = hl.reduce(combine_max, x[tile_m, :], dim=1, other=float("-inf"))
    return out


@helion.kernel(static_shapes=True)
def reduce_tuple_argmax(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    values = torch.empty([m], dtype=x.dtype, device=x.device)
    indices = torch.empty([m], dtype=torch.int64, device=x.device)
    for tile_m, tile_n in hl.tile([m, n], block_size=[None, n]):
        row = x[tile_m, tile_n]
        cols = tile_n.index[None, :].to(torch.int64).expand_as(row)
        best, where = hl.reduce(combine_argmax, (row, cols), dim=1, other=(float("-inf"), 0))
        values[tile_m] = best
        indices[tile_m] = where
    return values, indices


@helion.kernel(static_shapes=True)
def grid_row_scale(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for i in hl.grid(m):
        s = scale[i]
        for tile_n in hl.tile(n):
            out[i, tile_n] = x[i, tile_n] * s
    return out


@helion.kernel(static_shapes=True)
def tile_attributes(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per element: x + its index, and the begin/end/id/block_size of its tile (block 16)."""
    (n,) = x.size()
    out = torch.empty_like(x)
    begins = torch.empty([n], dtype=torch.int64, device=x.device)
    ends = torch.empty([n], dtype=torch.int64, device=x.device)
    ids = torch.empty([n], dtype=torch.int64, device=x.device)
    sizes = torch.empty([n], dtype=torch.int64, device=x.device)
    for tile in hl.tile(n, block_size=16):
        out[tile] = x[tile] + tile.index.to(x.dtype)
        zero = hl.zeros([tile], dtype=torch.int64)
        begins[tile] = zero + tile.begin
        ends[tile] = zero + tile.end
        ids[tile] = zero + tile.id
        sizes[tile] = zero + tile.block_size
    return out, begins, ends, ids, sizes


@helion.kernel(static_shapes=True)
def add_mul_outputs(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    total = torch.empty_like(x)
    product = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        a = x[tile]
        b = y[tile]
        total[tile] = a + b
        product[tile] = a * b
    return total, product


@helion.kernel(static_shapes=True)
def transpose_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x [m, n] + y [n, m] transposed on the host: a strided view as a kernel input."""
    y_t = y.transpose(0, 1)
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(out.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] + y_t[tile_m, tile_n]
    return out


@helion.kernel(static_shapes=True)
def view_flatten(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """A 3-D input viewed as 2-D on the host; the 2-D result viewed back."""
    a, b, c = x.size()
    flat = x.view(a * b, c)
    out = torch.empty_like(flat)
    for tile_r, tile_c in hl.tile(flat.size()):
        out[tile_r, tile_c] = flat[tile_r, tile_c] * 2.0 + bias[tile_c][None, :]
    return out.view(a, b, c)


@helion.kernel(static_shapes=True)
def row_col_means(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Two independent top-level loops (two grids) in one kernel."""
    m, n = x.size()
    row_mean = torch.empty([m], dtype=x.dtype, device=x.device)
    col_mean = torch.empty([n], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        row_mean[tile_m] = torch.mean(x[tile_m, :].to(torch.float32), dim=1).to(x.dtype)
    for tile_n in hl.tile(n):
        col_mean[tile_n] = torch.mean(x[:, tile_n].to(torch.float32), dim=0).to(x.dtype)
    return row_mean, col_mean


@helion.kernel(static_shapes=True)
def horner_static_range(x: torch.Tensor, coeffs: torch.Tensor) -> torch.Tensor:
    """c0 + c1 x + c2 x^2 + c3 x^3 by Horner's rule; hl.static_range is unrolled at trace time."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        v = x[tile].to(torch.float32)
        acc = torch.zeros_like(v)
        for i in hl.static_range(4):
            acc = acc * v + coeffs[3 - i].to(torch.float32)
        out[tile] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def complex_mul_split_join(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Complex products of [m, n, 2] (re, im) pairs: hl.split of the last dim, hl.join back."""
    m, n, _ = x.size()
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile([m, n]):
        x_re, x_im = hl.split(x[tile_m, tile_n, :])
        y_re, y_im = hl.split(y[tile_m, tile_n, :])
        out[tile_m, tile_n, :] = hl.join(x_re * y_re - x_im * y_im, x_re * y_im + x_im * y_re)
    return out


@helion.kernel(static_shapes=False)
def specialize_rows(x: torch.Tensor) -> torch.Tensor:
    """Dynamic shapes with the row length specialized (hl.specialize): a persistent row
    normalization x / max|x| per row."""
    m = x.size(0)
    n = hl.specialize(x.size(1))
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :n].to(torch.float32)
        out[tile_m, :] = (row / torch.amax(torch.abs(row), dim=1, keepdim=True)).to(out.dtype)
    return out


def _flags(m: int):
    return lambda dtype: torch.tensor([(i * 7) % 3 - 1 for i in range(m)], dtype=torch.int32)


def _while_ref(x: torch.Tensor) -> torch.Tensor:
    v = x.abs()
    steps = torch.zeros_like(v)
    while bool((v > 1.0).any()):
        big = v > 1.0
        v = torch.where(big, v * 0.5, v)
        steps = steps + big.to(v.dtype)
    return steps


def _if_no_else_flags_ref(x: torch.Tensor, scale: int, shift: int) -> torch.Tensor:
    acc = x * 2.0 if scale > 0 else x
    return acc + 1.0 if shift > 0 else acc


def _if_no_else_accumulate_ref(x: torch.Tensor, y: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    return (x.float().sum(-1) + torch.where(gate > 0, y.float().sum(-1), 0.0)).to(x.dtype)


def _tile_attributes_ref(x: torch.Tensor):
    n = x.numel()
    i = torch.arange(n)
    begins = i // 16 * 16
    return (x + i.to(x.dtype), begins, torch.clamp(begins + 16, max=n), i // 16, torch.full_like(i, 16))


def _distinct_rows(m: int, n: int):
    return lambda dtype: torch.stack([torch.randperm(n) for _ in range(m)]).to(dtype)


def _scaled_randn(*shape: int):
    return lambda dtype: (torch.randn(*shape) * 100).to(dtype)


def _rev_cumsum(x: torch.Tensor) -> torch.Tensor:
    return torch.flip(torch.cumsum(torch.flip(x.float(), [-1]), -1), [-1]).to(x.dtype)


def _complex_mul_ref(x, y):
    return torch.view_as_real(torch.view_as_complex(x.float()) * torch.view_as_complex(y.float())).to(x.dtype)


def _horner_ref(x, c):
    xf, cf = x.float(), c.float()
    return (cf[0] + xf * (cf[1] + xf * (cf[2] + xf * cf[3]))).to(x.dtype)


EXAMPLES = [
    Example("if_scalar_arg", if_scalar_arg, tensors(randn(37, 50), 0.5), lambda x, a: x * a, FLOATS),
    Example("if_loaded_scalar", if_loaded_scalar, tensors(randn(37, 50), _flags(37)),
            lambda x, f: torch.where(f[:, None] > 0, x * 2.0, -x), FLOATS),
    Example("if_store_branch", if_store_branch, tensors(randn(37, 50), _flags(37)),
            lambda x, f: torch.where(f[:, None] != 0, x, 0.0).to(x.dtype), FLOATS),
    Example("if_no_else_flags", if_no_else_flags, tensors(randn(37, 100), 1, 0), _if_no_else_flags_ref, FLOATS),
    Example("if_no_else_accumulate", if_no_else_accumulate, tensors(randn(37, 100), randn(37, 100), _flags(37)),
            _if_no_else_accumulate_ref, FLOATS),
    Example("while_halving", while_halving, tensors(_scaled_randn(1000)), _while_ref, (torch.float32,),
            (helion.Config(block_sizes=[128]),)),
    Example("cumsum_rows", cumsum_rows, tensors(randn(37, 100)), in_f32(lambda x: torch.cumsum(x, -1)), FLOATS),
    Example("scan_cummax", scan_cummax, tensors(randn(37, 100)), lambda x: torch.cummax(x, -1).values, FLOATS),
    Example("scan_reverse_cumsum", scan_reverse_cumsum, tensors(randn(37, 100)), _rev_cumsum, FLOATS),
    Example("reduce_custom_max", reduce_custom_max, tensors(randn(37, 100)), lambda x: x.amax(-1), FLOATS),
    Example("reduce_tuple_argmax", reduce_tuple_argmax, tensors(_distinct_rows(37, 100)),
            lambda x: (x.amax(-1), x.argmax(-1)), (torch.float32, torch.bfloat16)),
    Example("grid_row_scale", grid_row_scale, tensors(randn(37, 50), randn(37)), lambda x, s: x * s[:, None], FLOATS),
    Example("tile_attributes", tile_attributes, tensors(randn(100)), _tile_attributes_ref),
    Example("add_mul_outputs", add_mul_outputs, tensors(randn(37, 50), randn(37, 50)),
            lambda x, y: (x + y, x * y), FLOATS),
    Example("transpose_add", transpose_add, tensors(randn(37, 50), randn(50, 37)), lambda x, y: x + y.t(), FLOATS),
    Example("view_flatten", view_flatten, tensors(randn(3, 37, 50), randn(50)), lambda x, b: x * 2.0 + b, FLOATS),
    Example("row_col_means", row_col_means, tensors(randn(37, 50)),
            lambda x: (x.float().mean(1).to(x.dtype), x.float().mean(0).to(x.dtype)), FLOATS),
    Example("horner_static_range", horner_static_range, tensors(randn(37, 50), randn(4)), _horner_ref, FLOATS),
    Example("complex_mul_split_join", complex_mul_split_join, tensors(randn(37, 50, 2), randn(37, 50, 2)),
            _complex_mul_ref, (torch.float32,)),
    Example("specialize_rows", specialize_rows, tensors(randn(37, 100)),
            in_f32(lambda x: x / x.abs().amax(-1, keepdim=True)), FLOATS),
]
