"""Upstream pass pipelines, registered by name with the stage their failures report."""

from __future__ import annotations

from helion_fx_mlir.passes.registry import register_pipeline

# Folds the grids' trip counts (block sizes are constants after resolve_helion_ops) without
# canonicalization's patterns (see promote_single_program_grids).
register_pipeline(
    "helion-fold-constants",
    "sccp: fold the grids' trip counts without canonicalization's patterns",
    "builtin.module(func.func(sccp))",
    "torch-to-linalg",
)
register_pipeline(
    "helion-torch-to-linalg",
    "torch-mlir's conversions of torch ops to linalg, scf and arith on tensors",
    "builtin.module(canonicalize,"
    "func.func(torch-decompose-complex-ops,convert-torch-to-tmtensor,convert-torch-to-linalg,"
    "convert-torch-to-scf,convert-torch-to-arith),"
    # canonicalize drops torch ops left dead by the conversion (list constants).
    "canonicalize,func.func(torch-finalizing-backend-type-conversion),canonicalize,cse)",
    "torch-to-linalg",
)
# Guards a grid's lowering keeps for its indices (`i < m ? i : 0` on a row of hl.grid(m),
# a tile's size zeroed past the tensor) fold where the loops' bounds prove them, as
# integer range analysis finds: a guarded row index hid that each program of a grid writes
# rows of its own (`parallelize_independent_grids`), and a zeroed size made every store a
# masked copy.
register_pipeline(
    "helion-fold-index-ranges",
    "int-range-optimizations: fold index comparisons the loops' bounds decide",
    "builtin.module(func.func(int-range-optimizations),canonicalize)",
    "fuse-elementwise",
)
# Elementwise linalg ops are fused first: torch-mlir makes one linalg.generic per ATen op,
# and hundreds of separate loop nests (hl.rand's Philox) cost the JIT tens of seconds.
# one-shot-bufferize cannot take affine.for with tensor iter_args: lower-affine first; the
# canonicalize after it folds the copies bufferization leaves behind. The cse before it
# merges repeated reads of a loop-carried tile (`m_i` read for `m_new` and again for
# `alpha`), so none is left after the tile's in-place update, which would force a copy.
# scf-for-loop-canonicalization first folds a tile's size `min(block, n - i * block)` to the
# block where the loop's bounds prove every tile whole (a reduction loop whose chunk divides
# the row): its pad and dynamic slice go away, and with them a masked read into a
# temporary and a strided memref.copy (a runtime call) per chunk.
register_pipeline(
    "helion-fuse-elementwise",
    "fold whole tiles' sizes and unit dims, fuse elementwise linalg ops, canonicalize, cse",
    "builtin.module(func.func(scf-for-loop-canonicalization),canonicalize,"
    "func.func(linalg-fold-unit-extent-dims,linalg-fuse-elementwise-ops),canonicalize,cse)",
    "fuse-elementwise",
)
# cse merges equal inits (two `hl.zeros` accumulators become one fill); `untie_shared_inits`
# splits them again before empty-tensor elimination, which runs in helion-bufferize.
register_pipeline(
    "helion-prepare-buffers",
    "lower-affine and cse before bufferization",
    "builtin.module(lower-affine,cse)",
    "bufferize",
)
register_pipeline(
    "helion-bufferize",
    "empty-tensor elimination and one-shot bufferization, loop temporaries hoisted",
    "builtin.module(eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
    "function-boundary-type-conversion=identity-layout-map},canonicalize,cse,canonicalize,"
    # Temporaries of a loop body are allocated once, before the loop; it does not hoist out
    # of the grid's scf.forall, whose programs each need their own.
    "func.func(buffer-loop-hoisting))",
    "bufferize",
)
# Results that are their own input buffers (outputs written in place) are gone
# (`drop_in_place_results`). buffer-results-to-out-params makes the caller own every other
# output buffer (no leaks); refback-munge-memref-copy removes the JIT's need for
# libmlir_c_runner_utils.
_OUT_PARAMS = (
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    "buffer-deallocation-pipeline,convert-bufferization-to-memref"
)
_TO_LOOPS = "func.func(refback-munge-memref-copy,convert-linalg-to-loops)"
# The grid's programs run on OpenMP threads (threads.py loads the runtime and sets their count).
_PARALLEL_GRID = "scf-forall-to-parallel,convert-scf-to-openmp"
# Vector ops: masks and multi-reductions first (row reductions stay lane-parallel), n-D
# transfers unrolled to 1-D, reductions reassociated, contractions as FMAs of outer products,
# x86 dialect ops (bf16_dot.py's dot products) as their intrinsics.
_LOOPS_TO_LLVM = (
    "func.func(lower-vector-mask,lower-vector-multi-reduction{lowering-strategy=inner-reduction}),"
    "convert-vector-to-scf{full-unroll=true},"
    "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "arith-expand{include-bf16=true},convert-math-to-llvm,convert-math-to-libm,"
    "convert-vector-to-llvm{reassociate-fp-reductions=true vector-contract-lowering=outerproduct "
    "enable-x86=true},"
    "convert-ub-to-llvm,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-openmp-to-llvm,reconcile-unrealized-casts"
)
register_pipeline(
    "helion-grid-to-openmp",
    "results to out-params, buffers deallocated, the grid's scf.forall to OpenMP",
    f"builtin.module({_OUT_PARAMS},{_PARALLEL_GRID})",
    "grid-to-openmp",
)
register_pipeline(
    "helion-buffers-to-llvm",
    "linalg on buffers -> loops -> the LLVM dialect",
    f"builtin.module({_TO_LOOPS},{_LOOPS_TO_LLVM})",
    "linalg-to-llvm",
)
# With bounds checks, every memref access of the scalar loops, on one thread, is verified at
# run time: an out-of-bounds one prints the op and its kernel line, then aborts the process.
register_pipeline(
    "helion-buffers-to-llvm-checked",
    "bufferized kernel -> the LLVM dialect on one thread, memref accesses checked at run time",
    f"builtin.module({_OUT_PARAMS},scf-forall-to-for,{_TO_LOOPS},"
    f"generate-runtime-verification,{_LOOPS_TO_LLVM})",
    "linalg-to-llvm",
)
