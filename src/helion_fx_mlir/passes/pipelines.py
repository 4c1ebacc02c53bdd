"""Pipelines as lists of registered pass names, and the lowerings that run them."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from torch_mlir import ir, passmanager

from helion_fx_mlir.errors import MLIRTextError, RewriteError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import format_diagnostic, located, parse_module

# Imported for their @register and register_pipeline calls: PASSES is complete from here on.
from helion_fx_mlir.passes import (  # noqa: F401
    abi,
    accumulators,
    amx_tiles,
    approximations,
    bf16_dot,
    block_moves,
    buffers,
    column_parts,
    filled_tiles,
    float_conversions,
    grid_edges,
    grid_groups,
    helion_ops,
    independent_programs,
    index_reductions,
    masked_chunks,
    outer_reductions,
    packed_operands,
    partial_chunks,
    prefetch,
    reciprocal_divisions,
    reduction_streams,
    results,
    row_loops,
    safety_checks,
    selected_ifs,
    shared_masks,
    shared_strips,
    sliced_unit_dims,
    soft_bf16,
    streaming_stores,
    trim_padded_tiles,
    trimmed_accumulators,
    unit_batches,
    upstream,
    vector_width,
    vectorize,
    whole_contractions,
    x86_intrinsics,
)
from helion_fx_mlir.passes.registry import PASSES, Pass, PipelinePass

LINALG = (
    "helion-record-outputs",
    "helion-resolve-symbols",
    "helion-fold-constants",
    "helion-promote-single-program-grids",
    "helion-torch-to-linalg",
)
# The rewrites LLVM needs, on linalg on tensors.
_FOR_LLVM = (
    "helion-reject-tm-tensor-ops",
    "helion-guard-integer-division",
    "helion-split-half-conversions",
    "helion-narrow-ints-through-i32",
    "helion-expand-fp8-extensions",
    "helion-expand-fp8-truncations",
    "helion-emit-c-interface",
)
# linalg on tensors -> vector ops, before bufferizing: accumulations fold before fusion
# (baddbmm's `acc * alpha + mm` is still `acc + mm` there) and after it (addmm's form).
VECTORIZE = (
    "helion-fold-index-ranges",
    "helion-select-elementwise-ifs",
    "helion-split-grid-edges",
    "helion-peel-partial-chunks",
    "helion-fold-accumulations",
    "helion-copy-shared-masks",
    "helion-fuse-elementwise",
    "helion-fold-accumulations",
    "helion-trim-padded-accumulators",
    "helion-trim-padded-tiles",
    "helion-fold-unit-dim-reshapes",
    "helion-lane-parallel-index-reductions",
    "helion-whole-k-contractions",
    "helion-pack-contraction-operands",
    "helion-write-into-loop-carried",
    "helion-split-matmul-columns",
    "helion-vectorize-tile-bodies",
    "helion-interchange-row-loops",
    "helion-start-tiles-from-fills",
    "helion-combine-outer-reductions",
    "helion-split-reduction-streams",
    "helion-divide-by-reciprocals",
)
# On CPUs with AVX512_BF16: bf16 matmuls take their own schedule of dot products first
# (before the column split and the tile bodies).
_TILE_BODIES = VECTORIZE.index("helion-split-matmul-columns")
VECTORIZE_BF16_DOT = (
    *VECTORIZE[:_TILE_BODIES],
    "helion-bf16-dot-products",
    *VECTORIZE[_TILE_BODIES:],
)
# On CPUs with AMX: bf16 matmuls of whole tiles on AMX (amx_tiles.py), the rest as above.
VECTORIZE_AMX = (
    *VECTORIZE[:_TILE_BODIES],
    "helion-amx-pair-contractions",
    "helion-bf16-dot-products",
    *VECTORIZE[_TILE_BODIES:],
)
# Bufferization: unit dims kept in dynamic slices, equal inits merged, split per use, then
# buffers; results the runtime passes.
_BUFFERIZE = (
    "helion-keep-sliced-unit-dims",
    "helion-read-only-inputs",
    "helion-prepare-buffers",
    "helion-untie-shared-inits",
    "helion-bufferize",
    "helion-drop-in-place-results",
    "helion-clone-repeated-results",
)
# The LLVM dialect's fix-ups: soft bf16, masked memory ops LLVM handles.
_LLVM_FIXUPS = (
    "helion-bf16-arithmetic-in-f32",
    "helion-bf16-moves-as-i16",
    "helion-split-masked-memory-ops",
    "helion-define-bf16-truncation",
)
_AFTER_BUFFERIZE = (
    "helion-parallelize-independent-grids",
    "helion-vectorize-copies",
    "helion-prefetch-next-program",
    "helion-approximate-math",
    "helion-group-grid-programs",
    "helion-share-packed-strips",
    "helion-stack-program-buffers",
    "helion-grid-to-openmp",
    "helion-inline-alloca-scopes",
    "helion-stream-output-stores",
    "helion-x86-intrinsics",
    "helion-buffers-to-llvm",
    "helion-define-openmp-entry-points",
    *_LLVM_FIXUPS,
    "helion-limit-vector-width",
)
LLVM = (*LINALG, *_FOR_LLVM, *VECTORIZE, *_BUFFERIZE, *_AFTER_BUFFERIZE)
LLVM_BF16_DOT = (*LINALG, *_FOR_LLVM, *VECTORIZE_BF16_DOT, *_BUFFERIZE, *_AFTER_BUFFERIZE)
LLVM_AMX = (
    *LINALG,
    *_FOR_LLVM,
    *VECTORIZE_AMX,
    *_BUFFERIZE,
    "helion-amx-tile-contractions",
    *_AFTER_BUFFERIZE,
)
# Runtime verification checks memref accesses on scalar loops: nothing is vectorized.
LLVM_CHECKED = (
    *LINALG,
    *_FOR_LLVM,
    "helion-split-grid-edges",
    "helion-fuse-elementwise",
    *_BUFFERIZE,
    "helion-buffers-to-llvm-checked",
    *_LLVM_FIXUPS,
)


@dataclass(frozen=True)
class Pipeline:
    """A named list of passes, so that drivers (helion-opt) can run them one by one."""

    summary: str
    passes: tuple[str, ...]


def _checked(pipelines: dict[str, Pipeline]) -> dict[str, Pipeline]:
    """The pipelines, once every pass they name is known and no name is both."""
    for name, pipeline in pipelines.items():
        unknown = [p for p in pipeline.passes if p not in PASSES]
        if unknown or name in PASSES:
            raise ValueError(f"pipeline '{name}': unknown passes {unknown} or a pass's name")
    return pipelines


PIPELINES = _checked(
    {
        "helion-lower-to-linalg": Pipeline("kernel MLIR -> linalg on tensors", LINALG),
        "helion-vectorize": Pipeline(
            "linalg on tensors -> fused, register-tiled vector ops", VECTORIZE
        ),
        "helion-lower-to-llvm": Pipeline(
            "kernel MLIR -> LLVM dialect (as compile_kernel without AVX512_BF16)", LLVM
        ),
        "helion-lower-to-llvm-bf16-dot": Pipeline(
            "kernel MLIR -> LLVM dialect, bf16 matmuls as AVX512_BF16 dot products "
            "(as compile_kernel on such CPUs)",
            LLVM_BF16_DOT,
        ),
        "helion-lower-to-llvm-amx": Pipeline(
            "kernel MLIR -> LLVM dialect, bf16 matmuls of whole 16x32 tiles on AMX, the other "
            "bf16 matmuls as dot products (as compile_kernel on CPUs with AMX)",
            LLVM_AMX,
        ),
        "helion-lower-to-llvm-checked": Pipeline(
            "kernel MLIR -> LLVM dialect with run-time bounds checks", LLVM_CHECKED
        ),
    }
)


@functools.cache
def pass_manager(pipeline: str) -> passmanager.PassManager:
    """Parsed once per process: pipelines are reused across kernels."""
    with mlir_context():
        return passmanager.PassManager.parse(pipeline)


def run_pipeline(module: ir.Module, pipeline: str, stage: str) -> None:
    """Run a pipeline in place, turning MLIR failures into MLIRTextError."""
    with mlir_context():
        try:
            pass_manager(pipeline).run(module.operation)
        except ir.MLIRError as err:
            diags = [
                format_diagnostic(d, "<mlir>", module.operation.location)
                for d in err.error_diagnostics
            ]
            raise MLIRTextError(stage, diags or [str(err)]) from None


def run_pass(module: ir.Module, entry: Pass) -> None:
    """Run one registered pass in place; failures become MLIRTextError."""
    if isinstance(entry, PipelinePass):
        run_pipeline(module, entry.pipeline, entry.stage)
        return
    try:
        entry.rewrite(module)
    except RewriteError as err:
        raise MLIRTextError(err.stage, located(err.problems, "<mlir>")) from None


def apply(module: ir.Module, names: Sequence[str]) -> ir.Module:
    """Run the named passes in order, in place; helion-opt runs the same passes."""
    for name in names:
        run_pass(module, PASSES[name])
    return module


def to_linalg_module(module: ir.Module) -> ir.Module:
    return apply(module, LINALG)


def to_llvm_module(
    module: ir.Module, bounds_checks: bool = False, bf16_dots: bool = False, amx: bool = False
) -> ir.Module:
    """`bf16_dots`: bf16 matmuls as AVX512_BF16 dot products, `amx`: on AMX tiles where
    they fit (for CPUs that have them); the checked pipeline stays scalar."""
    if bounds_checks:
        return apply(module, LLVM_CHECKED)
    if amx:
        return apply(module, LLVM_AMX)
    return apply(module, LLVM_BF16_DOT if bf16_dots else LLVM)


def lower_to_linalg(mlir_text: str) -> str:
    """Kernel MLIR -> linalg-on-tensors text (no torch, helion or loom ops left)."""
    return str(to_linalg_module(parse_module(mlir_text)))


def lower_to_llvm(mlir_text: str) -> str:
    """Kernel MLIR -> LLVM-dialect text, ready for the JIT or mlir-translate."""
    return str(to_llvm_module(parse_module(mlir_text)))
