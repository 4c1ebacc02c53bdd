"""A block sliced with a unit dim dropped and then put back is one slice that keeps it.

A batched matmul over one batch per program (`hl.tile([b, m, n])` with a batch block of 1)
arrives from torch-mlir as `expand_shape(extract_slice ... to tensor<64x64>)` into
`tensor<1x64x64>` for each operand, and its result goes back through `collapse_shape` into
a rank-reducing insert. The contraction rewrites that follow (`whole_contractions.py`,
`packed_operands.py`) read operands that are slices of their source; through the reshapes
they saw none, and the bmm read each K block of B a row at a time, 2 KB apart (rows a power
of two apart share a few cache sets). Upstream's reassociative reshape folding turns each
such pair into a slice (or insert) of the unit-dim shape. Measured on an AVX2 EPYC,
bmm 8x512^3 f32 in [1, 64, 64, 64] blocks on 2 threads: see `docs/performance.md`.
"""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import apply_script, patterns_script

FOLD_SCRIPT = patterns_script("tensor.reassociative_reshape_folding")


@register(
    "helion-fold-unit-dim-reshapes",
    "expand_shape of a rank-reducing slice -> one slice (and collapse + insert likewise)",
)
def fold_unit_dim_reshapes(module: ir.Module) -> None:
    """Fold unit-dim reshapes of slices and inserts into the slices and inserts."""
    with mlir_context():
        apply_script(module, FOLD_SCRIPT)
