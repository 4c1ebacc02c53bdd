"""Pass pipelines: resolve helion/loom ops, torch -> linalg, linalg -> LLVM."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from torch_mlir import ir, passmanager
from torch_mlir.dialects import arith

from helion_fx_mlir.errors import MLIRTextError, RewriteError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.input_checks import integer_value
from helion_fx_mlir.mlir.parse import format_diagnostic, located, parse_module
from helion_fx_mlir.mlir.walk import ops_named, ops_where
from helion_fx_mlir.passes.approximations import approximate_math
from helion_fx_mlir.passes.grid_groups import group_grid_programs
from helion_fx_mlir.passes.masked_chunks import split_masked_memory_ops
from helion_fx_mlir.passes.openmp_abi import define_openmp_entry_points
from helion_fx_mlir.passes.soft_bf16 import bf16_moves_as_i16, define_bf16_truncation
from helion_fx_mlir.passes.vectorize import (
    fold_accumulations,
    vectorize_copies,
    vectorize_tile_bodies,
    write_into_loop_carried,
)
from helion_fx_mlir.passes.whole_contractions import whole_k_contractions

TORCH_TO_LINALG = (
    "builtin.module(canonicalize,"
    "func.func(torch-decompose-complex-ops,convert-torch-to-tmtensor,convert-torch-to-linalg,"
    "convert-torch-to-scf,convert-torch-to-arith),"
    # canonicalize drops torch ops left dead by the conversion (list constants).
    "canonicalize,func.func(torch-finalizing-backend-type-conversion),canonicalize,cse)"
)
# Elementwise linalg ops are fused first: torch-mlir makes one linalg.generic per ATen op,
# and hundreds of separate loop nests (hl.rand's Philox) cost the JIT tens of seconds.
# one-shot-bufferize cannot take affine.for with tensor iter_args: lower-affine first; the
# canonicalize after it folds the copies bufferization leaves behind. The cse before it
# merges repeated reads of a loop-carried tile (`m_i` read for `m_new` and again for
# `alpha`), so none is left after the tile's in-place update, which would force a copy.
FUSE_ELEMENTWISE = "builtin.module(func.func(linalg-fold-unit-extent-dims,linalg-fuse-elementwise-ops),canonicalize,cse)"
# cse merges equal inits (two `hl.zeros` accumulators become one fill); `untie_shared_inits`
# splits them again before empty-tensor elimination, which runs in BUFFERIZE.
PREPARE_BUFFERS = "builtin.module(lower-affine,cse)"
BUFFERIZE = (
    "builtin.module(eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
    "function-boundary-type-conversion=identity-layout-map},canonicalize,cse,canonicalize,"
    # Temporaries of a loop body are allocated once, before the loop; it does not hoist out
    # of the grid's scf.forall, whose programs each need their own.
    "func.func(buffer-loop-hoisting))"
)
# Results that are their own input buffers (outputs written in place) are gone
# (`drop_in_place_results`). buffer-results-to-out-params makes the caller own every other
# output buffer (no leaks); refback-munge-memref-copy removes the JIT's need for
# libmlir_c_runner_utils.
_OUT_PARAMS = (
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref"
)
_TO_LOOPS = "func.func(refback-munge-memref-copy,convert-linalg-to-loops)"
# The grid's programs run on OpenMP threads (threads.py loads the runtime and sets their count).
_PARALLEL_GRID = "scf-forall-to-parallel,convert-scf-to-openmp"
# Vector ops: masks and multi-reductions first (row reductions stay lane-parallel), n-D
# transfers unrolled to 1-D, reductions reassociated, contractions as FMAs of outer products.
_LOOPS_TO_LLVM = (
    "func.func(lower-vector-mask,lower-vector-multi-reduction{lowering-strategy=inner-reduction}),"
    "convert-vector-to-scf{full-unroll=true},"
    "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "arith-expand{include-bf16=true},convert-math-to-llvm,convert-math-to-libm,"
    "convert-vector-to-llvm{reassociate-fp-reductions=true vector-contract-lowering=outerproduct},convert-ub-to-llvm,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-openmp-to-llvm,reconcile-unrealized-casts"
)
GRID_TO_OPENMP = f"builtin.module({_OUT_PARAMS},{_PARALLEL_GRID})"
BUFFERS_TO_LLVM = f"builtin.module({_TO_LOOPS},{_LOOPS_TO_LLVM})"

# With bounds checks, every memref access of the scalar loops, on one thread, is verified at
# run time: an out-of-bounds one prints the op and its kernel line, then aborts the process.
BUFFERS_TO_LLVM_CHECKED = f"builtin.module({_OUT_PARAMS},scf-forall-to-for,{_TO_LOOPS},generate-runtime-verification,{_LOOPS_TO_LLVM})"
# Module attribute: {func name: per result, the argument it is written into in place, or -1}.
IN_PLACE_RESULTS = "helion.in_place_results"
# Module attribute: {func name: the arguments its body never uses}. An output whose
# argument is unused can be written straight into the caller's tensor (no aliasing read).
UNUSED_ARGS = "helion.unused_args"


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


def _ops_in_dialect(module: ir.Module, dialect: str) -> list[ir.Operation]:
    return ops_where(module, lambda op: op.name.partition(".")[0] == dialect)


def resolve_helion_ops(module: ir.Module) -> None:
    """loom.get_symbol -> arith.constant from module attributes; helion.phi -> loop result."""
    attrs = module.operation.attributes
    with mlir_context(), ir.Location.unknown():
        for op in ops_named(module, "loom.get_symbol", "helion.phi"):
            if op.name == "helion.phi":
                op.results[0].replace_all_uses_with(op.operands[1])
            else:
                name = ir.StringAttr(op.attributes["name"]).value
                value = _symbol_value(op, attrs, f"loom.{name}")
                with ir.InsertionPoint(op), op.location:
                    const = arith.ConstantOp(ir.IndexType.get(), value)
                op.results[0].replace_all_uses_with(const.result)
            op.erase()


def _symbol_value(op: ir.Operation, attrs: ir.OpAttributeMap, key: str) -> int:
    """The integer module attribute a loom.get_symbol names, or a located error."""
    if key not in attrs:
        raise RewriteError(
            "resolve-symbols", [(op.location, f"no module attribute '{key}' for loom.get_symbol")]
        )
    value = integer_value(attrs[key])
    if value is None:
        raise RewriteError(
            "resolve-symbols", [(op.location, f"module attribute '{key}' is not an integer")]
        )
    return value


def _replace_each(
    module: ir.Module,
    names: set[str],
    wanted: Callable[[ir.Operation], bool],
    build: Callable[[ir.Operation], ir.Value],
) -> None:
    """Replace every op named in `names` that `wanted` accepts by the value `build` makes in its place."""
    with mlir_context():
        for op in ops_named(module, *names):
            if wanted(op):
                with ir.InsertionPoint(op), op.location:
                    value = build(op)
                op.results[0].replace_all_uses_with(value)
                op.erase()


def _conversion_types(op: ir.Operation) -> set[str]:
    """Source and result types of a scalar conversion (shaped types print as tensor<...>)."""
    return {str(op.operands[0].type), str(op.results[0].type)}


def _to_f32(x: ir.Value) -> ir.Value:
    f32 = ir.F32Type.get()
    if x.type == f32:
        return x
    return (arith.TruncFOp if str(x.type) == "f64" else arith.ExtFOp)(f32, x).result


def _from_f32(x: ir.Value, result: ir.Type) -> ir.Value:
    if x.type == result:
        return x
    return (arith.ExtFOp if str(result) == "f64" else arith.TruncFOp)(result, x).result


def split_half_conversions(module: ir.Module) -> None:
    """f64 <-> f16/bf16 as two steps through f32: the JIT has no __truncdfhf2-style
    runtime functions, while f32 <-> f16/bf16 lower natively (or via arith-expand)."""
    _replace_each(
        module,
        {"arith.truncf", "arith.extf"},
        lambda op: "f64" in _conversion_types(op) and bool(_conversion_types(op) & {"f16", "bf16"}),
        lambda op: _from_f32(_to_f32(op.operands[0]), op.results[0].type),
    )


def expand_fp8_extensions(module: ir.Module) -> None:
    """arith.extf from f8E4M3FN as integer bit manipulation, since LLVM has no fp8 type:
    normal numbers rebias the exponent (7 -> 127), subnormals are mant * 2^-9, S.1111.111 is NaN."""
    _replace_each(
        module,
        {"arith.extf"},
        lambda op: str(op.operands[0].type) == "f8E4M3FN",
        lambda op: _from_f32(_fp8_e4m3fn_to_f32(op.operands[0]), op.results[0].type),
    )


def _fp8_e4m3fn_to_f32(x: ir.Value) -> ir.Value:
    i8, i32, f32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32), ir.F32Type.get()
    const = lambda v: arith.ConstantOp(i32, v).result  # noqa: E731
    bits = arith.ExtUIOp(i32, arith.BitcastOp(i8, x).result).result
    sign = arith.ShRUIOp(bits, const(7)).result
    exp = arith.AndIOp(arith.ShRUIOp(bits, const(3)).result, const(15)).result
    mant = arith.AndIOp(bits, const(7)).result
    normal = arith.OrIOp(
        arith.OrIOp(
            arith.ShLIOp(sign, const(31)).result,
            arith.ShLIOp(arith.AddIOp(exp, const(120)).result, const(23)).result,
        ).result,
        arith.ShLIOp(mant, const(20)).result,
    ).result
    magnitude = arith.MulFOp(
        arith.UIToFPOp(f32, mant).result, arith.ConstantOp(f32, 2.0**-9).result
    ).result
    negative = arith.CmpIOp(arith.CmpIPredicate.ne, sign, const(0)).result
    subnormal = arith.SelectOp(negative, arith.NegFOp(magnitude).result, magnitude).result
    is_subnormal = arith.CmpIOp(arith.CmpIPredicate.eq, exp, const(0)).result
    value = arith.SelectOp(is_subnormal, subnormal, arith.BitcastOp(f32, normal).result).result
    is_nan = arith.CmpIOp(
        arith.CmpIPredicate.eq, arith.AndIOp(bits, const(127)).result, const(127)
    ).result
    return arith.SelectOp(is_nan, arith.ConstantOp(f32, float("nan")).result, value).result


def expand_fp8_truncations(module: ir.Module) -> None:
    """arith.truncf to f8E4M3FN as integer bit manipulation (LLVM has no fp8 type), rounding
    as PyTorch does: to nearest even, saturating at +-448 (inf too), NaN to NaN (sign kept),
    below 2^-6 to subnormals."""
    _replace_each(
        module,
        {"arith.truncf"},
        lambda op: str(op.results[0].type) == "f8E4M3FN",
        lambda op: (
            arith.BitcastOp(
                op.results[0].type, _f32_to_fp8_e4m3fn_bits(_to_f32(op.operands[0]))
            ).result
        ),
    )


def _f32_to_fp8_e4m3fn_bits(x: ir.Value) -> ir.Value:
    i8, i32, f32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32), ir.F32Type.get()
    const = lambda v: arith.ConstantOp(i32, v).result  # noqa: E731
    bits = arith.BitcastOp(i32, x).result
    sign = arith.AndIOp(bits, const(-(1 << 31))).result
    magnitude = arith.XOrIOp(bits, sign).result
    # Subnormal range: adding 2^14 (exponent 141) leaves the rounded fp8 mantissa in the low bits.
    denorm = const(141 << 23)
    shifted = arith.AddFOp(
        arith.BitcastOp(f32, magnitude).result, arith.BitcastOp(f32, denorm).result
    ).result
    subnormal = arith.SubIOp(arith.BitcastOp(i32, shifted).result, denorm).result
    # Normal range: rebias the exponent (127 -> 7), round the 20 dropped bits to nearest even.
    odd = arith.AndIOp(arith.ShRUIOp(magnitude, const(20)).result, const(1)).result
    rounded = arith.AddIOp(
        arith.AddIOp(magnitude, const(((7 - 127) << 23) + 0x7FFFF)).result, odd
    ).result
    normal = arith.ShRUIOp(rounded, const(20)).result
    is_subnormal = arith.CmpIOp(arith.CmpIPredicate.ult, magnitude, const(121 << 23)).result
    finite = arith.MinUIOp(
        arith.SelectOp(is_subnormal, subnormal, normal).result, const(0x7E)
    ).result
    is_nan = arith.CmpIOp(arith.CmpIPredicate.ugt, magnitude, const(0x7F800000)).result
    value = arith.SelectOp(is_nan, const(0x7F), finite).result
    with_sign = arith.OrIOp(value, arith.ShRUIOp(sign, const(24)).result).result
    return arith.TruncIOp(i8, with_sign).result


def reject_tm_tensor_ops(module: ir.Module) -> None:
    """torch-mlir lowers a few ATen ops (sort, cumsum, scatter, ...) to tm_tensor ops, which
    one-shot-bufferize cannot handle: say so at the kernel line rather than mid-pipeline."""
    with mlir_context():
        found = [
            op
            for op in _ops_in_dialect(module, "tm_tensor")
            if op.parent.name.partition(".")[0] != "tm_tensor"
        ]
    if found:
        raise RewriteError(
            "linalg-to-llvm",
            [
                (
                    op.location,
                    f"torch-mlir lowers this ATen op to {op.name}, which the CPU pipeline cannot "
                    "bufferize; it has no lowering here",
                )
                for op in found
            ],
        )


INTEGER_DIVISIONS = {
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.ceildivui",
}


def guard_integer_division(module: ir.Module) -> None:
    """Integer division and remainder by a divisor that is not a constant divide by 1 where
    it is 0: x86 traps on it (SIGFPE ends the user's process), and padded tile lanes hold 0.
    Eager PyTorch raises there; the lanes that divide by 0 get an unspecified value."""
    with mlir_context():
        for op in ops_named(module, *INTEGER_DIVISIONS):
            divisor = op.operands[1]
            if not isinstance(divisor.owner, ir.OpView) or divisor.owner.name != "arith.constant":
                with ir.InsertionPoint(op), op.location:
                    zero = arith.ConstantOp(divisor.type, 0).result
                    one = arith.ConstantOp(divisor.type, 1).result
                    is_zero = arith.CmpIOp(arith.CmpIPredicate.eq, divisor, zero).result
                    safe = arith.SelectOp(is_zero, one, divisor).result
                    guarded = ir.Operation.create(
                        op.name, results=[op.results[0].type], operands=[op.operands[0], safe]
                    )
                op.results[0].replace_all_uses_with(guarded.results[0])
                op.erase()


# A lowering step: a textual pass pipeline or a rewrite through the bindings.
PipelineStep = str | Callable[[ir.Module], None]


# linalg on tensors -> vector ops, before bufferizing: accumulations fold before fusion
# (baddbmm's `acc * alpha + mm` is still `acc + mm` there) and after it (addmm's form).
VECTORIZE_STEPS: tuple[PipelineStep, ...] = (
    fold_accumulations,
    FUSE_ELEMENTWISE,
    fold_accumulations,
    whole_k_contractions,
    write_into_loop_carried,
    vectorize_tile_bodies,
)


def untie_shared_inits(module: ir.Module) -> None:
    """Each use of an init (a tensor written only from constants: `tensor.empty`, a fill, or
    its vectorized form) gets its own copy of it.

    One-shot bufferization misses a conflict when one init feeds two results that two
    `parallel_insert_slice`s of one `scf.forall` write to different outputs: after empty-tensor
    elimination both results share the first output's slice, and the first insert overwrites
    the second result before it is copied (two equal accumulators returned the first one twice).
    A fresh init per use has one writer, so no such alias exists; the copies cost what the
    copies bufferization would make cost (an empty tensor is no memory)."""
    with mlir_context():
        for op in ops_where(module, lambda op: _fresh_init_dest(op) is not None):
            uses = [(use.owner, use.operand_number) for use in op.results[0].uses]
            for owner, index in uses[1:]:
                owner.operands[index] = _copy_init(op)


def _fresh_init_dest(op: ir.Operation) -> list[int] | None:
    """The operand positions an init op writes into (none for `tensor.empty`), or None when
    the op is not an init."""
    if len(op.results) != 1 or not isinstance(op.results[0].type, ir.RankedTensorType):
        return None
    if op.name == "tensor.empty":
        return []
    if op.name in ("linalg.fill", "vector.transfer_write"):
        dests = [1]
    elif op.name == "scf.for" and _only_writes(op):
        dests = [3]
    else:
        return None
    return dests if all(_is_fresh_init(op.operands[i]) for i in dests) else None


def _is_fresh_init(value: ir.Value) -> bool:
    return (
        isinstance(value.owner, ir.Operation | ir.OpView)
        and _fresh_init_dest(value.owner.operation) is not None
    )


def _only_writes(loop: ir.Operation) -> bool:
    """A loop that fills its one tensor: its body reads no tensor."""
    body = loop.regions[0].blocks[0]
    return len(loop.results) == 1 and all(
        op.name in ("vector.transfer_write", "scf.yield") or op.name.startswith("arith.")
        for op in body.operations
    )


def _copy_init(op: ir.Operation) -> ir.Value:
    """A copy of the init op and of the inits it writes into, placed beside the original."""
    with ir.InsertionPoint(op):
        copy = op.clone()
    for index in _fresh_init_dest(op) or []:
        copy.operands[index] = _copy_init(op.operands[index].owner.operation)
    return copy.results[0]


# The steps of bufferization: equal inits merged, split per use, then buffers.
BUFFERIZE_STEPS: tuple[PipelineStep, ...] = (PREPARE_BUFFERS, untie_shared_inits, BUFFERIZE)


# Folds the grids' trip counts (block sizes are constants after resolve_helion_ops) without
# canonicalization's patterns (see promote_single_program_grids).
FOLD_CONSTANTS = "builtin.module(func.func(sccp))"
DYNAMIC = -(2**63)  # ShapedType::kDynamic in static index arrays


def promote_single_program_grids(module: ir.Module) -> None:
    """An scf.forall of one program becomes its body, each parallel_insert_slice an
    insert_slice into the result so far. MLIR's canonicalizer does this too, but pairs the
    i-th insert with the i-th result: a program storing twice into one tensor
    (`dst[:32, t] = ...; dst[32:, t] = ...`) lost the second store (upstream's own
    mlir-opt asserts on it)."""
    with mlir_context():
        for grid in ops_named(module, "scf.forall"):
            if _one_program(grid):
                _promote(grid)


def _one_program(grid: ir.Operation) -> bool:
    attrs = grid.attributes
    lower, upper, step = (
        list(ir.DenseI64ArrayAttr(attrs[k]))
        for k in ("staticLowerBound", "staticUpperBound", "staticStep")
    )
    dynamic = iter(grid.operands[: sum(b == DYNAMIC for b in lower + upper + step)])
    if any(b == DYNAMIC for b in lower + step) or any(b not in (1, DYNAMIC) for b in upper):
        return False
    return all(b == 1 or _constant_index(next(dynamic)) == 1 for b in upper)


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return integer_value(owner.attributes["value"])


def _promote(grid: ir.Operation) -> None:
    body = grid.regions[0].blocks[0]
    rank = len(ir.DenseI64ArrayAttr(grid.attributes["staticUpperBound"]))
    inits = list(grid.operands[len(grid.operands) - len(grid.results) :])
    with ir.InsertionPoint(grid), grid.location:
        zero = arith.ConstantOp(ir.IndexType.get(), 0).result
    for iv in list(body.arguments)[:rank]:
        iv.replace_all_uses_with(zero)
    for shared, init in zip(list(body.arguments)[rank:], inits):
        shared.replace_all_uses_with(init)
    current = list(inits)
    ops = list(body.operations)
    for op in ops[:-1]:
        op.move_before(grid)
    for insert in list(ops[-1].regions[0].blocks[0].operations):
        at = inits.index(insert.operands[1])
        with ir.InsertionPoint(grid), insert.location:
            current[at] = ir.Operation.create(
                "tensor.insert_slice",
                results=[current[at].type],
                operands=[insert.operands[0], current[at], *insert.operands[2:]],
                attributes={
                    name: insert.attributes[name]
                    for name in (
                        "operandSegmentSizes",
                        "static_offsets",
                        "static_sizes",
                        "static_strides",
                    )
                },
            ).result
    for result, value in zip(grid.results, current):
        result.replace_all_uses_with(value)
    grid.erase()


def linalg_steps() -> tuple[PipelineStep, ...]:
    """Kernel MLIR -> linalg on tensors."""
    return (resolve_helion_ops, FOLD_CONSTANTS, promote_single_program_grids, TORCH_TO_LINALG)


def llvm_steps(bounds_checks: bool = False) -> tuple[PipelineStep, ...]:
    """Kernel MLIR -> LLVM dialect: linalg, then the rewrites LLVM needs, then the pipeline."""
    rewrites = (
        reject_tm_tensor_ops,
        guard_integer_division,
        split_half_conversions,
        expand_fp8_extensions,
        expand_fp8_truncations,
        emit_c_interface,
    )
    if bounds_checks:  # runtime verification checks memref accesses on scalar loops
        return (
            *linalg_steps(),
            *rewrites,
            FUSE_ELEMENTWISE,
            *BUFFERIZE_STEPS,
            drop_in_place_results,
            clone_repeated_results,
            BUFFERS_TO_LLVM_CHECKED,
            bf16_moves_as_i16,
            split_masked_memory_ops,
            define_bf16_truncation,
        )
    return (
        *linalg_steps(),
        *rewrites,
        *VECTORIZE_STEPS,
        *BUFFERIZE_STEPS,
        drop_in_place_results,
        clone_repeated_results,
        vectorize_copies,
        approximate_math,
        group_grid_programs,
        stack_program_buffers,
        GRID_TO_OPENMP,
        inline_alloca_scopes,
        BUFFERS_TO_LLVM,
        define_openmp_entry_points,
        bf16_moves_as_i16,
        split_masked_memory_ops,
        define_bf16_truncation,
    )


# A grid program's own buffers up to this size live on its thread's stack (see stack_program_buffers).
MAX_STACK_BUFFER = 64 * 1024
MAX_STACK_PER_PROGRAM = 256 * 1024


def stack_program_buffers(module: ir.Module) -> None:
    """A grid program's temporaries (static buffers allocated in the body of the scf.forall,
    not inside its loops) become stack buffers: with tens of thousands of small programs,
    malloc and free per program cost more than the work. After the grid becomes OpenMP,
    `inline_alloca_scopes` moves them to the start of the parallel region, one per thread,
    reused by the programs that thread runs one after another."""
    with mlir_context():
        for grid in ops_named(module, "scf.forall"):
            budget = MAX_STACK_PER_PROGRAM
            for op in list(grid.regions[0].blocks[0].operations):
                size = _static_bytes(op) if op.name == "memref.alloc" else None
                if size is None or size > MAX_STACK_BUFFER or size > budget:
                    continue
                budget -= size
                with ir.InsertionPoint(op), op.location:
                    alloca = ir.Operation.create(
                        "memref.alloca",
                        results=[op.results[0].type],
                        attributes={name: op.attributes[name] for name in op.attributes},
                        operands=[],
                    )
                op.results[0].replace_all_uses_with(alloca.results[0])
                op.erase()


def _static_bytes(alloc: ir.Operation) -> int | None:
    """The byte size of a static-shaped alloc with no dynamic sizes or symbols, else None."""
    memref = ir.MemRefType(alloc.results[0].type)
    width = getattr(memref.element_type, "width", None)
    if alloc.operands or not memref.has_static_shape or not isinstance(width, int) or width % 8:
        return None
    return math.prod(memref.shape) * width // 8


def inline_alloca_scopes(module: ir.Module) -> None:
    """convert-scf-to-openmp wraps each program of the grid in memref.alloca_scope, whose
    region must stay one block, which convert-scf-to-cf breaks. So each scope's body is
    inlined into the parallel loop, and its stack buffers (`stack_program_buffers`) move to
    the start of the enclosing omp.parallel region: one per thread, not one per program."""
    with mlir_context():
        for scope in ops_named(module, "memref.alloca_scope"):
            body = list(scope.regions[0].blocks[0].operations)
            *inlined, terminator = body
            region_start = (
                _parallel_region_start(scope)
                if any(op.name == "memref.alloca" for op in body)
                else None
            )
            for op in inlined:
                if op.name == "memref.alloca":
                    op.move_before(region_start)
                else:
                    op.move_before(scope)
            for result, value in zip(scope.results, terminator.operands):
                result.replace_all_uses_with(value)
            scope.erase()


def _parallel_region_start(op: ir.Operation) -> ir.Operation:
    """The first op of the omp.parallel region around `op` (where per-thread buffers go)."""
    parent = op.parent
    while parent is not None and parent.name != "omp.parallel":
        parent = parent.parent
    if parent is None:
        raise RewriteError(
            "openmp", [(op.location, "a stack buffer outside an OpenMP parallel region")]
        )
    return parent.regions[0].blocks[0].operations[0]


def drop_in_place_results(module: ir.Module) -> None:
    """After bufferization: results that are argument buffers (outputs bufferized in
    place) are dropped from each func, and recorded in IN_PLACE_RESULTS (per result, the
    argument or -1), so that the runtime passes no out buffer for them and copies nothing."""
    found, unused = {}, {}
    with mlir_context():
        for func in ops_named(module, "func.func"):
            if len(func.regions[0].blocks) == 1:
                name = ir.StringAttr(func.attributes["sym_name"]).value
                in_place = _drop_arg_results(func)
                _drop_call_results(module, name, in_place)
                found[name] = ir.DenseI64ArrayAttr.get(in_place)
                args = func.regions[0].blocks[0].arguments
                unused[name] = ir.DenseI64ArrayAttr.get(
                    [i for i, a in enumerate(args) if not any(True for _ in a.uses)]
                )
        module.operation.attributes[IN_PLACE_RESULTS] = ir.DictAttr.get(found)
        module.operation.attributes[UNUSED_ARGS] = ir.DictAttr.get(unused)


def clone_repeated_results(module: ir.Module) -> None:
    """After bufferization: a buffer returned twice (two outputs computed alike, merged by
    CSE) is cloned for its second place; `buffer-results-to-out-params` crashes
    (SIGSEGV) on a func returning one buffer twice."""
    with mlir_context():
        for ret in ops_named(module, "func.return"):
            seen: set[ir.Value] = set()
            for i, value in enumerate(list(ret.operands)):
                if value in seen and isinstance(value.type, ir.MemRefType):
                    with ir.InsertionPoint(ret), ret.location:
                        ret.operands[i] = _copy_of(value)
                seen.add(value)


def _copy_of(buffer: ir.Value) -> ir.Value:
    """A new buffer holding `buffer`'s elements (memref.alloc + memref.copy; a
    bufferization.clone is folded away by the deallocation pipeline)."""
    ty = ir.MemRefType(buffer.type)
    index = ir.IndexType.get()
    sizes = []
    for d in range(ty.rank):
        if ty.is_dynamic_dim(d):
            at = ir.Operation.create(
                "arith.constant",
                results=[index],
                attributes={"value": ir.IntegerAttr.get(index, d)},
            )
            sizes.append(
                ir.Operation.create(
                    "memref.dim", results=[index], operands=[buffer, at.result]
                ).result
            )
    alloc = ir.Operation.create(
        "memref.alloc",
        results=[ty],
        operands=sizes,
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(sizes), 0])},
    )
    ir.Operation.create("memref.copy", results=[], operands=[buffer, alloc.result])
    return alloc.result


def _drop_call_results(module: ir.Module, callee: str, in_place: list[int]) -> None:
    """Calls of the func (a test harness's main) use the argument they passed instead."""
    for call in ops_named(module, "func.call"):
        if ir.FlatSymbolRefAttr(call.attributes["callee"]).value != callee:
            continue
        with ir.InsertionPoint(call), call.location:
            kept = [r for r, at in zip(call.results, in_place) if at < 0]
            new = ir.Operation.create(
                "func.call",
                results=[r.type for r in kept],
                operands=list(call.operands),
                attributes={"callee": call.attributes["callee"]},
            )
        replacements = iter(new.results)
        for result, at in zip(call.results, in_place):
            result.replace_all_uses_with(call.operands[at] if at >= 0 else next(replacements))
        call.erase()


def _drop_arg_results(func: ir.Operation) -> list[int]:
    block = func.regions[0].blocks[0]
    args, ret = list(block.arguments), list(block.operations)[-1]
    in_place = [next((i for i, a in enumerate(args) if a == v), -1) for v in ret.operands]
    kept = [v for v, at in zip(ret.operands, in_place) if at < 0]
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create("func.return", operands=kept)
    ret.erase()
    func_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(func_type.inputs, [v.type for v in kept])
    )
    return in_place


# The stage an error names, per pass pipeline.
STAGES = {
    FOLD_CONSTANTS: "torch-to-linalg",
    TORCH_TO_LINALG: "torch-to-linalg",
    FUSE_ELEMENTWISE: "fuse-elementwise",
    PREPARE_BUFFERS: "bufferize",
    BUFFERIZE: "bufferize",
    GRID_TO_OPENMP: "grid-to-openmp",
    BUFFERS_TO_LLVM: "linalg-to-llvm",
    BUFFERS_TO_LLVM_CHECKED: "linalg-to-llvm",
}


def apply_steps(module: ir.Module, steps: tuple[PipelineStep, ...]) -> ir.Module:
    """Run the steps in place; helion-opt runs the same steps one by one."""
    for step in steps:
        if isinstance(step, str):
            run_pipeline(module, step, STAGES[step])
            continue
        try:
            step(module)
        except RewriteError as err:
            raise MLIRTextError(err.stage, located(err.problems, "<mlir>")) from None
    return module


def to_linalg_module(module: ir.Module) -> ir.Module:
    return apply_steps(module, linalg_steps())


def to_llvm_module(module: ir.Module, bounds_checks: bool = False) -> ir.Module:
    return apply_steps(module, llvm_steps(bounds_checks))


def lower_to_linalg(mlir_text: str) -> str:
    """Kernel MLIR -> linalg-on-tensors text (no torch, helion or loom ops left)."""
    return str(to_linalg_module(parse_module(mlir_text)))


def lower_to_llvm(mlir_text: str) -> str:
    """Kernel MLIR -> LLVM-dialect text, ready for the JIT or mlir-translate."""
    return str(to_llvm_module(parse_module(mlir_text)))


def emit_c_interface(module: ir.Module) -> None:
    """Mark every func for a C interface: ExecutionEngine.invoke needs it."""
    with mlir_context():
        for op in module.body.operations:
            if op.operation.name == "func.func":
                op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


@dataclass(frozen=True)
class NamedPipeline:
    """The steps of a lowering, so that drivers (helion-opt) can run them one by one."""

    description: str
    steps: tuple[PipelineStep, ...]


NAMED_PIPELINES: dict[str, NamedPipeline] = {
    "helion-resolve-symbols": NamedPipeline(
        "loom.get_symbol -> constants from module attributes, helion.phi -> loop result",
        (resolve_helion_ops,),
    ),
    "helion-lower-to-linalg": NamedPipeline(
        "kernel MLIR -> linalg on tensors (to_linalg_module)", linalg_steps()
    ),
    "helion-vectorize": NamedPipeline(
        "linalg on tensors -> fused, register-tiled vector ops (schedules.py)", VECTORIZE_STEPS
    ),
    "helion-approximate-math": NamedPipeline(
        "math.exp/exp2/log/tanh/erf -> polynomials in arith and math.fma (approximations.py)",
        (approximate_math,),
    ),
    "helion-lower-to-llvm": NamedPipeline(
        "kernel MLIR -> LLVM dialect (to_llvm_module)", llvm_steps()
    ),
}
