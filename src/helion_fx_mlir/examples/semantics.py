"""Helion's meaning where a simpler lowering returned wrong numbers without a word: two
accumulators fed from one intermediate, grids over `hl.tile(begin, end)` and
`hl.grid(begin, end, step)`, Python numbers stored and added atomically, the old value an
atomic returns, tiles over size-1 dims (they broadcast), lower-rank operands aligned by
tile, two stores into one tensor from a one-program grid, negative indices, stored values
broadcast over their subscript, index tensors that broadcast together, `hl.arange`s of
sizes that are not powers of 2, tiles of block size 1 broadcast against wider ones, a
scalar joined to a tile, rolled means over dynamic extents, an op with two results, two outputs computed alike,
gathers over slices narrower than their block, means without a dim over padded rows, shifts of
tensors, two overlapping stores of one program, and Python's `%` on negative ints."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import Example, randn, tensors


@helion.kernel(static_shapes=True)
def two_accumulators(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Two `hl.zeros` accumulators updated from one shared term, each row-summed to its own
    output (equal inits were merged, and the second output came back equal to the first)."""
    m, n = x.size()
    bn = hl.register_block_size(n)
    first = torch.empty([m], dtype=torch.float32, device=x.device)
    second = torch.empty([m], dtype=torch.float32, device=x.device)
    for tm in hl.tile(m):
        acc_a = hl.zeros([tm, bn], dtype=torch.float32)
        acc_b = hl.zeros([tm, bn], dtype=torch.float32)
        for tn in hl.tile(n, block_size=bn):
            g = torch.sigmoid(x[tm, tn])
            shared = g * (x[tm, tn] - y[tm, tn])
            acc_a += shared + y[tm, tn]
            acc_b += shared * 0.5
        first[tm] = acc_a.sum(dim=1)
        second[tm] = acc_b.sum(dim=1)
    return first, second


@helion.kernel(static_shapes=True)
def window_scale(x: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    """Doubles x[lo:hi] and leaves the rest zero: a grid from an int begin to an int end."""
    out = torch.zeros_like(x)
    for tile in hl.tile(lo, hi):
        out[tile] = x[tile] * 2
    return out


@helion.kernel(static_shapes=True)
def strided_rows(x: torch.Tensor, first: int) -> torch.Tensor:
    """Negates every third row from `first` on: `hl.grid(begin, end, step)`."""
    out = torch.zeros_like(x)
    for row in hl.grid(first, x.size(0), 3):
        for tn in hl.tile(x.size(1)):
            out[row, tn] = -x[row, tn]
    return out


@helion.kernel(static_shapes=True)
def mark_and_count(keys: torch.Tensor, bins: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Python numbers as stored values: every tile writes 1.0, and adds 1.0 per key to its
    bin atomically (a histogram)."""
    seen = torch.empty([keys.size(0)], dtype=torch.float32, device=keys.device)
    counts = torch.zeros([bins], dtype=torch.float32, device=keys.device)
    for tile in hl.tile(keys.size(0)):
        seen[tile] = 1.0
        hl.atomic_add(counts, [keys[tile]], 1.0)
    return seen, counts


@helion.kernel(static_shapes=True, ignore_warnings=[helion.exc.TensorOperationInWrapper])
def add_and_keep_old(counts: torch.Tensor, inc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`hl.atomic_add` returns the values before the add; both are outputs."""
    total = counts.clone()
    before = torch.empty_like(counts)
    for tile in hl.tile(counts.size(0)):
        before[tile] = hl.atomic_add(total, [tile], inc[tile])
    return total, before


@helion.kernel(static_shapes=True)
def scale_by_unit_dims(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """rows is [m, 1], cols [1, n], both indexed by the 2-D tile: size-1 dims broadcast."""
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn] = x[tm, tn] * rows[tm, tn] + cols[tm, tn]
    return out


@helion.kernel(static_shapes=True)
def row_and_column_bias(x: torch.Tensor, row: torch.Tensor, col: torch.Tensor) -> torch.Tensor:
    """`x[tm, tn] + row[tm] - col[tn]`: 1-D operands line up with the tile they index
    (torch's trailing rule would pair row's tile with the columns)."""
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn] = x[tm, tn] + row[tm] - col[tn]
    return out


@helion.kernel(static_shapes=True)
def split_halves(x: torch.Tensor) -> torch.Tensor:
    """Two stores into one output per program, top rows and bottom rows (a grid of one
    program lost the second store)."""
    out = torch.empty_like(x)
    half = x.size(0) // 2
    for tn in hl.tile(x.size(1)):
        out[:half, tn] = x[:half, tn] + 1
        out[half:, tn] = x[half:, tn] - 1
    return out


@helion.kernel(static_shapes=True)
def last_row_and_column(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Negative indices count from the end: x[-1, t] and x[t, -1]."""
    last_row = torch.empty([x.size(1)], dtype=x.dtype, device=x.device)
    last_col = torch.empty([x.size(0)], dtype=x.dtype, device=x.device)
    for tn in hl.tile(x.size(1)):
        last_row[tn] = x[-1, tn]
    for tm in hl.tile(x.size(0)):
        last_col[tm] = x[tm, -1]
    return last_row, last_col


@helion.kernel(static_shapes=True)
def spread_row_means(x: torch.Tensor) -> torch.Tensor:
    """A [tm, 1] value stored into out[tm, :]: it broadcasts over the subscript."""
    out = torch.empty_like(x)
    for tm in hl.tile(x.size(0)):
        out[tm, :] = x[tm, :].mean(dim=1, keepdim=True)
    return out


@helion.kernel(static_shapes=True)
def gather_grid(table: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """table[rows[tm][:, None], cols[tn][None, :]]: two index tensors broadcast together."""
    out = torch.empty([rows.size(0), cols.size(0)], dtype=table.dtype, device=table.device)
    for tm, tn in hl.tile(out.size()):
        out[tm, tn] = table[rows[tm][:, None], cols[tn][None, :]]
    return out


@helion.kernel(static_shapes=True, ignore_warnings=[helion.exc.TensorOperationInWrapper])
def every_third(x: torch.Tensor) -> torch.Tensor:
    """out[1::3] = x[1::3] * 2, the rest x: strided slices in one program."""
    out = x.clone()
    for _ in hl.grid(1):
        out[1::3] = x[1::3] * 2
    return out


@helion.kernel(static_shapes=True)
def square_of_alias(x: torch.Tensor) -> torch.Tensor:
    """`t1 = t0; t1 * t0`: two FX nodes of one value as both operands of one op (found by
    the program generator: the second operand was an undeclared SSA name)."""
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        t0 = torch.minimum(x[tm, tn], x[tm, tn] * 2)
        t1 = t0
        for _ in hl.static_range(2):
            t0 = t0 * 0.5 + t1
        out[tm, tn] = t1 * t0
    return out


@helion.kernel(static_shapes=True)
def head_columns(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Columns 0..4 of each row doubled, and added into a total per column atomically, all
    indexed by `hl.arange(5)`: Helion widens it to a block of 8, whose 3 extra lanes must
    neither read nor write."""
    out = torch.zeros_like(x)
    total = torch.zeros([5], dtype=x.dtype, device=x.device)
    for row in hl.grid(x.size(0)):
        cols = hl.arange(5)
        doubled = hl.load(x, [row, cols]) * 2
        hl.store(out, [row, cols], doubled)
        hl.atomic_add(total, [cols], doubled)
    return out, total


@helion.kernel(static_shapes=True)
def segment_heads(x: torch.Tensor, starts: torch.Tensor, n: int) -> torch.Tensor:
    """x + 1 on the first 3 rows of each segment [starts[g], starts[g + 1]) and the columns
    below min(n, 5): masks from `hl.arange(3)[:, None]` and `hl.arange(5)[None, :]`, which
    Helion widens to 4 and 8 lanes (the extra ones off)."""
    out = torch.zeros_like(x)
    for g in hl.grid(starts.size(0) - 1):
        rows = starts[g] + hl.arange(3)
        cols = hl.arange(5)
        on = (rows < starts[g + 1])[:, None] & (cols < n)[None, :]
        hl.store(out, [rows, cols], hl.load(x, [rows, cols], extra_mask=on) + 1, extra_mask=on)
    return out


@helion.kernel(static_shapes=True)
def power_series(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """sum over k of w[k, c] * x**k, by a loop over `hl.tile(1, k, block_size=1)`: a [1, c]
    tile of w times a [b, c] tile is [b, c], though Helion's meta keeps [1, c]."""
    k = hl.specialize(w.size(0))
    out = torch.empty_like(x)
    for tb, tc in hl.tile(x.size()):
        xv = x[tb, tc]
        term = torch.ones_like(xv)
        acc = w[0, tc][None, :] * term
        for order in hl.tile(1, k, block_size=1):
            term = term * xv
            acc = acc + w[order, tc] * term
        out[tb, tc] = acc
    return out


@helion.kernel(static_shapes=True)
def paired_with_base(x: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """out[i, j] = (base[0], x[i, j] + 1): `hl.join` broadcasts a scalar half to the tile."""
    out = torch.empty([*x.size(), 2], dtype=x.dtype, device=x.device)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn, :] = hl.join(hl.load(base, [0]), x[tm, tn] + 1)
    return out


@helion.kernel(static_shapes=False)
def row_moments(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased variance of each row, shapes dynamic: with `reduction_loops` the row
    is summed in chunks and divided by its length, known only at run time."""
    m = x.size(0)
    mean = torch.empty([m], dtype=torch.float32, device=x.device)
    var = torch.empty([m], dtype=torch.float32, device=x.device)
    for tm in hl.tile(m):
        row = x[tm, :].to(torch.float32)
        mean[tm] = row.mean(-1)
        var[tm] = row.var(-1)
    return mean, var


@helion.kernel(static_shapes=False)
def dynamic_row_rms(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled by their RMS, shapes dynamic: the row reduced whole is as long as each
    call's, whatever length the kernel was bound at."""
    out = torch.empty_like(x)
    for tile_m in hl.tile(x.size(0)):
        row = x[tile_m, :]
        out[tile_m, :] = row * torch.rsqrt(torch.mean(row * row, dim=-1, keepdim=True) + 1e-6)
    return out


@helion.kernel(static_shapes=False)
def dynamic_column_peaks(x: torch.Tensor) -> torch.Tensor:
    """Each column's max, shapes dynamic: the column reduced whole is each call's height."""
    out = torch.empty([x.size(1)], dtype=x.dtype, device=x.device)
    for tile_n in hl.tile(x.size(1)):
        out[tile_n] = torch.amax(x[:, tile_n], dim=0)
    return out


@helion.kernel(static_shapes=False)
def dynamic_centered_softmax(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Softmax of biased, mean-centered rows, shapes dynamic: three whole-row reductions."""
    out = torch.empty_like(x)
    for tile_m in hl.tile(x.size(0)):
        shifted = x[tile_m, :] + bias[None, :]
        shifted = shifted - torch.mean(shifted, dim=1, keepdim=True)
        weights = torch.exp(shifted - torch.amax(shifted, dim=1, keepdim=True))
        out[tile_m, :] = weights / torch.sum(weights, dim=1, keepdim=True)
    return out


@helion.kernel(static_shapes=False)
def halves_difference(x: torch.Tensor) -> torch.Tensor:
    """Column sums of the top half of the rows minus the bottom half's, shapes dynamic:
    `x[:half]` and `x[half:]` with a symbolic half, which Helion clamps with torch.sym_min."""
    half = x.size(0) // 2
    out = torch.empty([x.size(1)], dtype=x.dtype, device=x.device)
    for tn in hl.tile(x.size(1)):
        out[tn] = torch.sum(x[:half, tn], dim=0) - torch.sum(x[half:, tn], dim=0)
    return out


@helion.kernel(static_shapes=False)
def dynamic_row_gain(x: torch.Tensor, gain: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """x * gain + shift, every operand indexed by the 2-D tile, shapes dynamic: a gain of
    one column (or a shift of one row) broadcasts. Helion settles a size of 1 at the bind
    under a guard: a call whose gain has whole rows binds a kernel of its own."""
    out = torch.empty_like(x)
    for tm, tn in hl.tile(x.size()):
        out[tm, tn] = x[tm, tn] * gain[tm, tn] + shift[tm, tn]
    return out


@helion.kernel(static_shapes=False)
def dynamic_row_marks(x: torch.Tensor) -> torch.Tensor:
    """Each row's mean over the row, every third column doubled, columns 4 and 5 less 1,
    the last two zeroed, shapes dynamic: a [tm, 1] value stored into a symbolic row
    broadcasts; slices are clamped to each call's row (`4:6` of a row of 2 is empty), a
    bound from the end by Helion's sym_max."""
    out = torch.empty_like(x)
    for tm in hl.tile(x.size(0)):
        out[tm, :] = x[tm, :].mean(dim=1, keepdim=True)
        out[tm, ::3] = x[tm, ::3] * 2.0
        out[tm, 4:6] = x[tm, 4:6] - 1.0
        out[tm, -2:] = 0.0
    return out


@helion.kernel(static_shapes=False)
def dynamic_row_tail(x: torch.Tensor) -> torch.Tensor:
    """Each row's last five columns summed, less its columns before the last seven, shapes
    dynamic: a bound `n - 5` below 0 at run time counts from the end as in Python (Helion
    writes it as torch.sym_ite), so rows of 3 columns sum their last 2, not all 3."""
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tm in hl.tile(m):
        out[tm] = x[tm, n - 5 :].sum(-1) - x[tm, : n - 7].sum(-1)
    return out


@helion.kernel(static_shapes=False)
def dynamic_row_offsets(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Each row of a batch of matrices less its own offset, in column chunks, shapes
    dynamic: called on rows of one column (a size Helion settles at 1), the chunk's unit
    dims beside the dynamic ones used to stop the kernel compiling (sliced_unit_dims.py)."""
    b, m, n = x.size()
    out = torch.empty_like(x)
    for tb, tm in hl.tile([b, m]):
        row_offsets = offsets[tb, tm].to(torch.float32)
        for tn in hl.tile(n):
            out[tb, tm, tn] = (x[tb, tm, tn].to(torch.float32) - row_offsets[:, :, None]).to(x.dtype)
    return out


def _row_tail_ref(x: torch.Tensor) -> torch.Tensor:
    n = x.size(1)
    return x[:, n - 5 :].sum(-1) - x[:, : n - 7].sum(-1)


def _row_marks_ref(x: torch.Tensor) -> torch.Tensor:
    out = x.mean(1, keepdim=True).expand_as(x).clone()
    out[:, ::3] = x[:, ::3] * 2
    out[:, 4:6] = x[:, 4:6] - 1
    out[:, -2:] = 0
    return out


def _halves_difference_ref(x: torch.Tensor) -> torch.Tensor:
    half = x.size(0) // 2
    return x[:half].sum(0) - x[half:].sum(0)


def _row_rms_ref(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def _centered_softmax_ref(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    shifted = x + bias
    return torch.softmax(shifted - shifted.mean(1, keepdim=True), dim=1)


@helion.kernel(static_shapes=True)
def clipped_zscores(x: torch.Tensor) -> torch.Tensor:
    """Row z-scores clipped to [-2, 2], from `torch.var_mean` (unbiased): one op with two
    results, whose meta is a tuple."""
    out = torch.empty_like(x)
    for tm in hl.tile(x.size(0)):
        row = x[tm, :].to(torch.float32)
        var, mean = torch.var_mean(row, dim=-1, keepdim=True)
        out[tm, :] = torch.clamp((row - mean) * torch.rsqrt(var + 1e-3), -2.0, 2.0).to(x.dtype)
    return out


@helion.kernel(static_shapes=True)
def twin_row_sums(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Row sums of x and of max(x, x): computed alike, CSE merges them and the func returns
    one buffer twice, on which `buffer-results-to-out-params` died (found by the generator,
    on a single row: the grid of one program is promoted to the func)."""
    first = torch.zeros([x.size(0)], dtype=x.dtype, device=x.device)
    second = torch.zeros([x.size(0)], dtype=x.dtype, device=x.device)
    for tm in hl.tile(x.size(0)):
        row = x[tm, :]
        first[tm] = row.sum(-1)
        second[tm] = torch.maximum(row, row).sum(-1)
    return first, second


@helion.kernel(static_shapes=True)
def nearest_rows(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x[idx[tn], tc] with indices past either end of x: each reads the nearest row, as in
    Helion's reference mode (which clamps them; eager PyTorch would wrap or raise)."""
    out = torch.empty([idx.size(0), x.size(1)], dtype=x.dtype, device=x.device)
    for tn, tc in hl.tile([idx.size(0), x.size(1)]):
        out[tn, tc] = x[idx[tn], tc]
    return out


@helion.kernel(static_shapes=True)
def shift_right(x: torch.Tensor, k: int) -> torch.Tensor:
    """out[tile.index + k] = x[tile]: index arithmetic on a tile that runs past `out` in the
    last tiles. Those lanes write nothing, as in reference mode's stores (unchecked code
    wrote past the buffer and corrupted the heap). Not checked against reference mode: it
    clamps those lanes onto the last element and writes its old value back over the new."""
    out = torch.zeros_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile.index + k] = x[tile]
    return out


@helion.kernel(static_shapes=True)
def blocks_on_diagonal(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """out[rows[tm], tm.index, arange(n)] = x[tm, :] per column of the tile: three 1-D tensor
    indices (a cartesian product) with tiles that divide the extent, so the lanes are only
    the indices' own bounds and must be broadcast over the whole index space."""
    m, n = x.size()
    n = hl.specialize(n)
    out = torch.zeros([m, m, n], dtype=x.dtype, device=x.device)
    for tm in hl.tile(m, block_size=4):
        cols = hl.arange(n)
        row = x[tm, :]
        hl.store(out, [rows[tm], tm.index, cols], row[:, None, :].expand(row.size(0), row.size(0), n))
    return out


@helion.kernel(static_shapes=True)
def segment_column_sums(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Column sums of packed segments, gathered at `tile.index + start` with a data-dependent
    start: the `:` over 5 columns is 8 lanes wide, and lanes past column 4 are off (they
    read past the row, and past the tensor on its last row, before)."""
    b, d = offsets.size(0) - 1, x.size(1)
    out = torch.zeros([b, d], dtype=x.dtype, device=x.device)
    for seg in hl.grid(b):
        start = offsets[seg]
        acc = hl.zeros([d], dtype=torch.float32)
        for tile in hl.tile(offsets[seg + 1] - start):
            acc = acc + torch.sum(x[tile.index + start, :], dim=0)
        out[seg, :] = acc
    return out


@helion.kernel(static_shapes=True)
def row_means_from(x: torch.Tensor, first: int) -> torch.Tensor:
    """torch.mean without a dim over a row of 7 padded to 8 lanes, from row `first` on:
    the count is the row's length (it was the padded width)."""
    out = torch.zeros([x.size(0)], dtype=x.dtype, device=x.device)
    for i in hl.grid(first, x.size(0)):
        out[i] = torch.mean(x[i, :] * 0.5)
    return out


@helion.kernel(static_shapes=True)
def overwrite_last_column(x: torch.Tensor) -> torch.Tensor:
    """Two stores of one program into one tensor whose slices overlap (`out[t, 3:]`, then
    `out[t, -1]`): the second wins, as in Python. Two `parallel_insert_slice`s have no
    order, so such a grid runs its programs in sequence (the first won with block size 1)."""
    m, n = x.size()
    out = torch.zeros_like(x)
    for tile in hl.tile(m):
        out[tile, 3:] = x[tile, 3:] * 2.0
        out[tile, -1] = x[tile, 0]
    return out


@helion.kernel(static_shapes=True)
def signed_remainders(x: torch.Tensor, a: int, s: int) -> torch.Tensor:
    """Python's `%`, `//`, shifts and bit ops on int arguments on the device: -7 % 3 is 2
    (arith.remsi gave -1), -7 // 2 is -4."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] * (a % 3) + (a // 2) + (s >> 1) + (s & 6) + (s ^ 5)
    return out


@helion.kernel(static_shapes=True)
def signed_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """The two signed 4-bit halves of each int8, by shifts of tensors (`x << s >> s`, an
    arithmetic right shift): [m, n] int8 -> [m, n, 2] f32."""
    m, n = packed.size()
    out = torch.empty([m, n, 2], dtype=torch.float32, device=packed.device)
    for tm, tn in hl.tile([m, n]):
        b = packed[tm, tn]
        shift = hl.full([1], 4, dtype=torch.int8)
        out[tm, tn, 0] = ((b << shift) >> shift).to(torch.float32)
        out[tm, tn, 1] = (b >> shift).to(torch.float32)
    return out


# ------------------------------------------------------------------ inputs and references


def _two_acc_ref(x, y):
    shared = torch.sigmoid(x) * (x - y)
    return (shared + y).sum(1), (shared * 0.5).sum(1)


def _window_ref(x, lo, hi):
    out = torch.zeros_like(x)
    out[lo:hi] = x[lo:hi] * 2
    return out


def _strided_ref(x, first):
    out = torch.zeros_like(x)
    out[first::3] = -x[first::3]
    return out


def _alias_ref(x):
    t1 = torch.minimum(x, x * 2)
    t0 = t1
    for _ in range(2):
        t0 = t0 * 0.5 + t1
    return t1 * t0


def _keys(dtype: torch.dtype):
    return torch.randint(0, 7, (53,)), 7


def _mark_ref(keys, bins):
    return torch.ones(keys.size(0)), torch.bincount(keys, minlength=bins).float()


def _unit_dims(dtype: torch.dtype):
    return torch.randn(37, 21, dtype=dtype), torch.randn(37, 1, dtype=dtype), torch.randn(1, 21, dtype=dtype)


def _bias(dtype: torch.dtype):
    return torch.randn(40, 40, dtype=dtype), torch.randn(40, dtype=dtype), torch.randn(40, dtype=dtype)


def _gather_args(dtype: torch.dtype):
    return torch.randn(30, 20, dtype=dtype), torch.randint(0, 30, (13,)), torch.randint(0, 20, (11,))


def _head_ref(x):
    out = torch.zeros_like(x)
    out[:, :5] = x[:, :5] * 2
    return out, out[:, :5].sum(0)


def _paired_ref(x, base):
    return torch.stack([base[0].expand_as(x), x + 1], dim=-1)


def _zscores_ref(x):
    var, mean = torch.var_mean(x.float(), dim=-1, keepdim=True)
    return torch.clamp((x.float() - mean) * torch.rsqrt(var + 1e-3), -2.0, 2.0).to(x.dtype)


def _power_ref(x, w):
    return sum(w[k] * x**k for k in range(w.size(0)))


def _nearest_args(dtype: torch.dtype):
    return torch.randn(30, 20, dtype=dtype), torch.randint(-9, 40, (13,))


def _shift_ref(x, k):
    out = torch.zeros_like(x)
    out[k:] = x[:-k]
    return out


def _diagonal_ref(x, rows):
    out = torch.zeros(x.size(0), x.size(0), x.size(1), dtype=x.dtype)
    for s in range(0, x.size(0), 4):
        block = slice(s, s + 4)
        out[rows[block][:, None], torch.arange(x.size(0))[block][None, :]] = x[block][:, None, :]
    return out


def _segment_args(dtype: torch.dtype):
    return torch.randn(12, 6, dtype=dtype), torch.tensor([0, 2, 6, 9, 12]), 4


def _segment_ref(x, starts, n):
    out = torch.zeros_like(x)
    for begin, end in zip(starts[:-1].tolist(), starts[1:].tolist()):
        rows, cols = slice(begin, min(begin + 3, end)), slice(0, min(n, 5))
        out[rows, cols] = x[rows, cols] + 1
    return out


def _packed_args(dtype: torch.dtype):
    return torch.randn(23, 5, dtype=dtype), torch.tensor([0, 4, 4, 21, 23])


def _packed_ref(x, offsets):
    return torch.stack([x[a:b].sum(0) for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())])


def _overwrite_ref(x):
    out = torch.zeros_like(x)
    out[:, 3:] = x[:, 3:] * 2
    out[:, -1] = x[:, 0]
    return out


def _nibbles_ref(packed):
    return torch.stack([(packed << 4) >> 4, packed >> 4], dim=-1).float()


def _means_from_ref(x, first):
    out = (x * 0.5).mean(1)
    out[:first] = 0
    return out


EXAMPLES = [
    Example("two_accumulators", two_accumulators, tensors(randn(37, 300), randn(37, 300)), _two_acc_ref,
            (torch.float32,), (helion.Config(block_sizes=[8, 32]), helion.Config(block_sizes=[64, 16]))),
    Example("window_scale", window_scale, tensors(randn(100), 13, 70), _window_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[8]),)),
    Example("strided_rows", strided_rows, tensors(randn(50, 19), 4), _strided_ref, (torch.float32,),
            (helion.Config(block_sizes=[8]),)),
    Example("mark_and_count", mark_and_count, _keys, _mark_ref, (torch.float32,), (helion.Config(block_sizes=[64]),)),
    Example("add_and_keep_old", add_and_keep_old, tensors(randn(37), randn(37)), lambda c, i: (c + i, c),
            (torch.float32,), (helion.Config(block_sizes=[64]), helion.Config(block_sizes=[8]))),
    Example("scale_by_unit_dims", scale_by_unit_dims, _unit_dims, lambda x, r, c: x * r + c, (torch.float32,),
            (helion.Config(block_sizes=[8, 16]), helion.Config(block_sizes=[1, 2]))),
    Example("row_and_column_bias", row_and_column_bias, _bias, lambda x, r, c: x + r[:, None] - c[None, :],
            (torch.float32,), (helion.Config(block_sizes=[8, 16]), helion.Config(block_sizes=[128, 4])),
            reference_mode=False),
    Example("split_halves", split_halves, tensors(randn(45, 19)), lambda x: torch.cat([x[:22] + 1, x[22:] - 1]),
            (torch.float32,), (helion.Config(block_sizes=[32]),)),
    Example("last_row_and_column", last_row_and_column, tensors(randn(37, 21)), lambda x: (x[-1], x[:, -1]),
            (torch.float32,), (helion.Config(block_sizes=[8, 64]),)),
    Example("spread_row_means", spread_row_means, tensors(randn(37, 21)),
            lambda x: x.mean(1, keepdim=True).expand_as(x), (torch.float32,), (helion.Config(block_sizes=[8]),)),
    Example("square_of_alias", square_of_alias, tensors(randn(19, 37)), _alias_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[1, 2]),)),
    Example("every_third", every_third, tensors(randn(100)), lambda x: torch.where(torch.arange(100) % 3 == 1, x * 2, x),
            (torch.float32,)),
    Example("gather_grid", gather_grid, _gather_args, lambda t, r, c: t[r[:, None], c[None, :]], (torch.float32,),
            (helion.Config(block_sizes=[8, 4]),)),
    Example("head_columns", head_columns, tensors(randn(13, 7)), _head_ref, (torch.float32,),
            fixed_shapes=True),
    Example("segment_heads", segment_heads, _segment_args, _segment_ref, (torch.float32,)),
    Example("power_series", power_series, tensors(randn(37, 45), randn(4, 45)), _power_ref, (torch.float32,),
            (helion.Config(block_sizes=[8, 16]), helion.Config(block_sizes=[64, 4]))),
    Example("paired_with_base", paired_with_base, tensors(randn(19, 37), randn(3)), _paired_ref, (torch.float32,),
            (helion.Config(block_sizes=[8, 16]),)),
    Example("row_moments", row_moments, tensors(randn(37, 203)), lambda x: (x.mean(-1), x.var(-1)),
            (torch.float32,), (helion.Config(block_sizes=[8], reduction_loops=[32]),
                               helion.Config(block_sizes=[16], reduction_loops=[None]))),
    Example("dynamic_row_rms", dynamic_row_rms, tensors(randn(37, 100)), _row_rms_ref, (torch.float32,),
            (helion.Config(block_sizes=[4]), helion.Config(block_sizes=[2], reduction_loops=[32]))),
    Example("dynamic_column_peaks", dynamic_column_peaks, tensors(randn(100, 37)), lambda x: x.amax(0),
            (torch.float32,), (helion.Config(block_sizes=[16]), helion.Config(block_sizes=[8], reduction_loops=[16]))),
    Example("dynamic_centered_softmax", dynamic_centered_softmax, tensors(randn(37, 100), randn(100)),
            _centered_softmax_ref, (torch.float32,), (helion.Config(block_sizes=[1]),)),
    Example("halves_difference", halves_difference, tensors(randn(45, 19)), _halves_difference_ref,
            (torch.float32,), (helion.Config(block_sizes=[8]),)),
    Example("dynamic_row_gain", dynamic_row_gain, tensors(randn(37, 45), randn(37, 1), randn(1, 45)),
            lambda x, g, s: x * g + s, (torch.float32,),
            (helion.Config(block_sizes=[8, 16]), helion.Config(block_sizes=[1, 4]))),
    Example("dynamic_row_marks", dynamic_row_marks, tensors(randn(37, 45)), _row_marks_ref, (torch.float32,),
            (helion.Config(block_sizes=[8]), helion.Config(block_sizes=[1]))),
    Example("dynamic_row_tail", dynamic_row_tail, tensors(randn(37, 45)), _row_tail_ref, (torch.float32,),
            (helion.Config(block_sizes=[8]), helion.Config(block_sizes=[1], reduction_loops=[16]))),
    Example("dynamic_row_offsets", dynamic_row_offsets, tensors(randn(3, 9, 45), randn(3, 9)),
            lambda x, o: (x.float() - o.float()[:, :, None]).to(x.dtype), (torch.float32, torch.float16),
            (helion.Config(block_sizes=[1, 1, 1]), helion.Config(block_sizes=[1, 4, 16]))),
    Example("clipped_zscores", clipped_zscores, tensors(randn(37, 45)), _zscores_ref, (torch.float32, torch.float16),
            (helion.Config(block_sizes=[8]),)),
    Example("twin_row_sums", twin_row_sums, tensors(randn(1, 45)), lambda x: (x.sum(-1), x.sum(-1)), (torch.float32,),
            (helion.Config(block_sizes=[1], reduction_loops=[4]),)),
    Example("nearest_rows", nearest_rows, _nearest_args, lambda x, i: x[i.clamp(0, x.size(0) - 1)],
            (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[8, 8]), helion.Config(block_sizes=[4, 32]))),
    Example("shift_right", shift_right, tensors(randn(45), 5), _shift_ref, (torch.float32,),
            (helion.Config(block_sizes=[8]), helion.Config(block_sizes=[64])), reference_mode=False),
    Example("blocks_on_diagonal", blocks_on_diagonal, lambda dtype: (torch.randn(12, 16, dtype=dtype), torch.randperm(12)),
            _diagonal_ref,
            (torch.float32,)),
    Example("segment_column_sums", segment_column_sums, _packed_args, _packed_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[4]), helion.Config(block_sizes=[32]))),
    Example("row_means_from", row_means_from, tensors(randn(13, 7), 3), _means_from_ref, (torch.float32,)),
    Example("overwrite_last_column", overwrite_last_column, tensors(randn(13, 7)), _overwrite_ref, (torch.float32,),
            (helion.Config(block_sizes=[1]), helion.Config(block_sizes=[8]))),
    Example("signed_remainders", signed_remainders, tensors(randn(37), -7, 13),
            lambda x, a, s: x * (a % 3) + (a // 2) + (s >> 1) + (s & 6) + (s ^ 5), (torch.float32,)),
    Example("signed_nibbles", signed_nibbles, lambda dtype: (torch.randint(-128, 128, (19, 37), dtype=torch.int8),),
            _nibbles_ref, (torch.int8,), (helion.Config(block_sizes=[4, 64]),)),
]
