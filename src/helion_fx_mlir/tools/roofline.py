"""The machine's limits, measured when the bench starts, so that each row says how close
ours and eager come to what the machine can do, not only how they compare to each other.

- FMA peak, f32 and (where the CPU has `avx512_bf16`) bf16 dot products: a kernel of ours,
  MLIR text below, lowered through the package's own grid-to-OpenMP passes and JIT'd for the
  host CPU as every kernel is. Each of torch's threads runs a loop of independent FMAs into
  12 accumulators of 16 f32 lanes (enough chains to hide the FMA latency, few enough to stay
  in registers): the figure is what our code generation reaches, not a datasheet's.
- Copy bandwidth: a 256 MB `dst.copy_(src)` into a preallocated tensor and `src.clone()`
  into a fresh one (the page faults a kernel pays for an output it allocates), bytes read
  and written counted.
- The memory limit of one kernel's tensors. A copy's rate at 256 MB bounds neither a
  kernel whose data stay in the caches (16 MB are read at 110-170 GB/s, 4-6x a 256 MB
  copy) nor one that only reads (a row sum has no pages to fault in). So each bound is
  measured on the kernel's own tensors, at their own sizes, and the limit is the longer of
  two. (a) Reading the inputs themselves (where their pages lie decides how much of them
  the caches keep: eager read one 64 MB input at 79 GB/s in one run and 31 in another) or
  writing the outputs into fresh tensors (`torch.empty(...).fill_`: pages fault in exactly
  when the kernel's own outputs' do), the longer of the two: they may overlap. Reading is
  the faster of a read kernel of ours (8 streams per thread, a vector accumulator each,
  repeated so that a launch is long: no per-call overhead on small tensors) and
  `torch.sum` (faster on some tensors). (b) Copying the bytes read into the bytes written:
  the largest input's first bytes, as many as the outputs hold, into a fresh tensor, by a
  copy kernel of ours (non-temporal stores, as our kernels store outputs) or `clone`, the
  faster; plus what is left to read or write at its rate in (a). A row kernel reading 16
  MB and writing 16 MB is held to a 16 MB copy (0.5-0.9 ms here), not to the 0.1 ms
  reading them from the caches takes.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

from helion_fx_mlir.host_cpu import amx_usable, cpu_flags, cpu_model, vector_registers
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.passes.pipelines import apply, run_pipeline
from helion_fx_mlir.runtime.jit import OPT_LEVEL, codegen_crashes
from helion_fx_mlir.runtime.launch_args import ArgBlock, packed_entry
from helion_fx_mlir.runtime.threads import openmp_runtime, use_torch_threads

MB = 1 << 20
COPY_BYTES = 256 * MB
# Writes are timed on at least this many bytes: below it torch's per-call overhead, not the
# memory, sets the time (and a kernel writing less is held back by the same overhead).
MIN_WRITE_BYTES = 1 * MB
# A read launch goes over at least this many bytes (its buffer `reps` times over).
READ_LAUNCH_BYTES = 64 * MB
LANES = 16


def fma_chains() -> int:
    """Independent FMA chains of the peak kernel: enough to cover the FMA latency of both
    pipes, few enough to stay in registers (each chain one 16-lane vector: one zmm, or two
    ymm). 12 on AVX-512's 32 registers, 6 on AVX2's 16, where 12 spill (measured on an
    AVX2 EPYC, 2 threads: 12 chains 82 GFLOP/s, 8 129, 6 163)."""
    return vector_registers() * 3 // 8


READ_STREAMS = 8


@dataclass(frozen=True)
class Lanes:
    """The element type of a kernel's vectors and accumulators, and how they add."""

    elem: str
    add: str

    @property
    def vec(self) -> str:
        return f"vector<{LANES}x{self.elem}>"


F32_LANES = Lanes("f32", "arith.addf")
# The read kernel sums any tensor's bytes as i32 words: no bit pattern is a NaN or a
# subnormal to it, and integer adds wrap.
I32_LANES = Lanes("i32", "arith.addi")
VEC = F32_LANES.vec


@dataclass(frozen=True)
class FmaKind:
    """One FMA instruction of the peak kernel: its MLIR and the flops it does."""

    operand: tuple[str, ...]  # lines defining %a, the multiplicand, from the f32 argument %x
    step: str  # accumulator {acc} -> its next value
    flops: int  # per instruction


F32 = FmaKind(
    (f"%a = vector.broadcast %x : f32 to {VEC}",),
    f"vector.fma %a, %a, {{acc}} : {VEC}",
    2 * LANES,
)
# vdpbf16ps: per f32 lane, two bf16 products added into the accumulator.
BF16 = FmaKind(
    (
        "%xb = arith.truncf %x : f32 to bf16",
        "%a = vector.broadcast %xb : bf16 to vector<32xbf16>",
    ),
    f"x86.avx512.dot {{acc}}, %a, %a : vector<32xbf16> -> {VEC}",
    4 * LANES,
)

# The package's own grid lowering (scf.forall -> omp.parallel on torch's libgomp) runs
# first; then the LLVM conversions, with the x86 dialect's intrinsics enabled, which the
# kernels' pipeline does not need.
_GRID = ("helion-grid-to-openmp", "helion-inline-alloca-scopes")
_TO_LLVM = (
    "builtin.module(convert-scf-to-cf,convert-vector-to-llvm{enable-x86=true},"
    "convert-arith-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,"
    "convert-openmp-to-llvm,reconcile-unrealized-casts)"
)


def _names(prefix: str, count: int) -> list[str]:
    return [f"%{prefix}{i}" for i in range(count)]


def _loop(
    results: str,
    bounds: str,
    carried: list[str],
    inits: list[str],
    body: list[str],
    lanes: Lanes = F32_LANES,
) -> list[str]:
    """An scf.for carrying vector accumulators; `body` ends in its scf.yield."""
    types = ", ".join([lanes.vec] * len(carried))
    args = ", ".join(f"{a} = {i}" for a, i in zip(carried, inits))
    head = f"%{results}:{len(carried)} = scf.for {bounds} iter_args({args}) -> ({types}) {{"
    return [head, *(f"  {line}" for line in body), "}"]


def _yield(values: list[str], lanes: Lanes = F32_LANES) -> str:
    return f"scf.yield {', '.join(values)} : {', '.join([lanes.vec] * len(values))}"


def _store_sum(results: str, count: int, lanes: Lanes = F32_LANES) -> list[str]:
    """Every accumulator summed into out[t], so none of the work is dead code."""
    total, adds = f"%{results}#0", []
    for i in range(1, count):
        adds.append(f"%s{i} = {lanes.add} {total}, %{results}#{i} : {lanes.vec}")
        total = f"%s{i}"
    return [
        *adds,
        f"%e = vector.reduction <add>, {total} : {lanes.vec} into {lanes.elem}",
        f"memref.store %e, %out[%t] : memref<?x{lanes.elem}>",
    ]


def _func(signature: str, setup: list[str], program: list[str], out: str = "f32") -> str:
    """A func running `program` once per element t of %out (one per thread) on OpenMP."""
    lines = [
        f"func.func {signature} attributes {{llvm.emit_c_interface}} {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %n = memref.dim %out, %c0 : memref<?x{out}>",
        *(f"  {line}" for line in setup),
        "  scf.forall (%t) in (%n) {",
        *(f"    {line}" for line in program),
        "  }",
        "  return",
        "}",
    ]
    return "\n".join(lines)


def peak_kernel(kind: FmaKind, chains: int) -> str:
    """`@peak(out, iters, x)`: each program `iters` steps of `chains` independent FMAs.
    The accumulators start at different values, so LLVM cannot merge equal chains."""
    inits = [f"%z{i} = arith.constant dense<{i}.0> : {VEC}" for i in range(chains)]
    carried, stepped = _names("a", chains), _names("b", chains)
    steps = [f"{b} = {kind.step.format(acc=a)}" for a, b in zip(carried, stepped)]
    loop = _loop(
        "r", "%i = %c0 to %iters step %c1", carried, _names("z", chains), [*steps, _yield(stepped)]
    )
    return _func(
        "@peak(%out: memref<?xf32>, %iters: index, %x: f32)",
        [],
        [*kind.operand, *inits, *loop, *_store_sum("r", chains)],
    )


AMX_TILE_FLOPS = 2 * 16 * 16 * 32  # one tdpbf16ps: 16x16 f32 outputs, 32 products each
# Unrolled rounds of 2x2 tile products between loading and storing the accumulators: each
# load and store costs about a tile product's time (a Sapphire Rapids core, 2x2 tiles in
# L1: 2.5 TFLOP/s at 16 rounds, 3.0 at 128, 3.5 at 256 and 512).
AMX_ROUNDS = 256


def amx_peak_kernel() -> str:
    """`@amx_peak(out, iters, x)`: each program `iters` steps of AMX_ROUNDS rounds of the
    2x2 accumulator tiles' products (`amx_tiles.py`'s schedule, its data in L1). A tile
    cannot be loop-carried, so each step loads the accumulators and stores them, rarely
    enough not to count."""
    acc, ab = "!x86.amx.tile<16x16xf32>", "!x86.amx.tile<16x32xbf16>"
    rows = [f"%c{16 * i}" for i in range(4)]
    setup = [
        *(f"{row} = arith.constant {16 * i} : index" for i, row in enumerate(rows) if i),
        "%xb = arith.truncf %x : f32 to bf16",
        "%row = vector.broadcast %xb : bf16 to vector<32xbf16>",
        "%ab = memref.alloca() : memref<16x32xbf16>",
        "scf.for %r = %c0 to %c16 step %c1 {",
        "  vector.store %row, %ab[%r, %c0] : memref<16x32xbf16>, vector<32xbf16>",
        "}",
        "%acc = memref.alloca() : memref<64x16xf32>",
        f"%zero = x86.amx.tile_zero : {acc}",
        *(f"x86.amx.tile_store %acc[{row}, %c0], %zero : memref<64x16xf32>, {acc}" for row in rows),
    ]
    step = [
        *(
            f"%in{i} = x86.amx.tile_load %acc[{row}, %c0] : memref<64x16xf32> into {acc}"
            for i, row in enumerate(rows)
        ),
        *(
            f"%t{i} = x86.amx.tile_load %ab[%c0, %c0] : memref<16x32xbf16> into {ab}"
            for i in range(4)
        ),
    ]
    current = [f"%in{i}" for i in range(4)]
    for r in range(AMX_ROUNDS):
        for i in range(4):
            operands = f"%t{i // 2}, %t{2 + i % 2}, {current[i]}"
            step.append(f"%p{r}_{i} = x86.amx.tile_mulf {operands} : {ab}, {ab}, {acc}")
            current[i] = f"%p{r}_{i}"
    step += [
        f"x86.amx.tile_store %acc[{row}, %c0], {tile} : memref<64x16xf32>, {acc}"
        for row, tile in zip(rows, current)
    ]
    program = [
        *setup,
        "scf.for %i = %c0 to %iters step %c1 {",
        *(f"  {line}" for line in step),
        "}",
        "%e = memref.load %acc[%c0, %c0] : memref<64x16xf32>",
        "memref.store %e, %out[%t] : memref<?xf32>",
    ]
    return _func("@amx_peak(%out: memref<?xf32>, %iters: index, %x: f32)", [], program)


def read_kernel(streams: int = READ_STREAMS) -> str:
    """`@read(out, src, reps)`: program t sums the t-th of len(out) equal parts of the i32
    words `src`, `reps` times over. Its part is read as `streams` equal runs side by side,
    one vector accumulator each: several streams per core keep more of memory's prefetches
    in flight than one (at 64-256 MB, 8 streams read 1.3x faster than one). Each run must
    be a whole number of vectors."""
    lanes = I32_LANES
    carried, inner, stepped = _names("a", streams), _names("p", streams), _names("b", streams)
    loads = []
    for i, (p, b) in enumerate(zip(inner, stepped)):
        loads += [
            f"%i{i} = arith.constant {i} : index",
            f"%d{i} = arith.muli %i{i}, %run : index",
            f"%o{i} = arith.addi %j, %d{i} : index",
            f"%v{i} = vector.load %src[%o{i}] : memref<?xi32>, {lanes.vec}",
            f"{b} = arith.addi {p}, %v{i} : {lanes.vec}",
        ]
    body = [*loads, _yield(stepped, lanes)]
    run = _loop("q", "%j = %start to %end step %lanes", inner, carried, body, lanes)
    again = [*run, _yield([f"%q#{i}" for i in range(streams)], lanes)]
    reps = _loop("r", "%rep = %c0 to %reps step %c1", carried, ["%zero"] * streams, again, lanes)
    return _func(
        "@read(%out: memref<?xi32>, %src: memref<?xi32>, %reps: index)",
        [
            f"%lanes = arith.constant {LANES} : index",
            f"%streams = arith.constant {streams} : index",
            f"%zero = arith.constant dense<0> : {lanes.vec}",
            "%len = memref.dim %src, %c0 : memref<?xi32>",
            "%part = arith.divui %len, %n : index",
            "%run = arith.divui %part, %streams : index",
        ],
        [
            "%start = arith.muli %t, %part : index",
            "%end = arith.addi %start, %run : index",
            *reps,
            *_store_sum("r", streams, lanes),
        ],
        out="i32",
    )


def copy_kernel() -> str:
    """`@copy(out, src, dst)`: program t copies the t-th of len(out) equal parts of the i32
    words `src` into `dst`, a vector at a time, with non-temporal stores (as our kernels
    store their outputs: no read of each written line first). Each part must be a whole
    number of vectors and `dst` 64-byte aligned."""
    vec = I32_LANES.vec
    return _func(
        "@copy(%out: memref<?xi32>, %src: memref<?xi32>, %dst: memref<?xi32>)",
        [
            f"%lanes = arith.constant {LANES} : index",
            "%len = memref.dim %src, %c0 : memref<?xi32>",
            "%part = arith.divui %len, %n : index",
        ],
        [
            "%start = arith.muli %t, %part : index",
            "%end = arith.addi %start, %part : index",
            "scf.for %j = %start to %end step %lanes {",
            f"  %v = vector.load %src[%j] : memref<?xi32>, {vec}",
            f"  vector.store %v, %dst[%j] {{nontemporal = true}} : memref<?xi32>, {vec}",
            "}",
        ],
        out="i32",
    )


def compile_module(text: str, name: str, probe: bool = False) -> ExecutionEngine | None:
    """One of our kernels JIT'd for the host CPU. With `probe`, LLVM first generates its
    code in a forked child (as `jit` does for bf16): None if it cannot, instead of an abort
    that would end the bench."""
    with mlir_context():
        module = ir.Module.parse(text)
    apply(module, _GRID)
    run_pipeline(module, _TO_LLVM, "roofline")
    apply(module, ["helion-define-openmp-entry-points"])
    if probe and codegen_crashes(module, name, OPT_LEVEL):
        return None
    openmp_runtime()
    with mlir_context():
        return ExecutionEngine(module, opt_level=OPT_LEVEL)


_SCALARS = {int: torch.int64, float: torch.float32}


def kernel_entry(engine: ExecutionEngine, name: str) -> Callable[..., float]:
    """@name of one of our kernels as a Python call on tensors (memrefs), ints (index) and
    floats (f32), packed as every kernel's launch is (`ArgBlock`); it returns the seconds
    the JIT'd code ran."""
    entry = packed_entry(engine, name)

    def call(*args: Any) -> float:
        kinds = [a.dim() if isinstance(a, torch.Tensor) else _SCALARS[type(a)] for a in args]
        packed = ArgBlock.of(kinds).pack(args)
        use_torch_threads()
        start = time.perf_counter()
        entry(ctypes.addressof(packed))
        return time.perf_counter() - start

    return call


def _launch(engine: ExecutionEngine, name: str, out: torch.Tensor, *args: Any) -> float:
    """Seconds of one launch on torch's threads (`out`: a sum per thread, checked finite
    when it is a float)."""
    seconds = kernel_entry(engine, name)(out, *args)
    if out.is_floating_point() and not torch.isfinite(out).all():
        raise RuntimeError(f"the roofline kernel @{name} computed {out.tolist()}")
    return seconds


def fma_peak(kind: FmaKind, seconds: float = 0.05, repeats: int = 5) -> float | None:
    """GFLOP/s of the peak kernel on torch's threads, best of `repeats` launches of about
    `seconds` each; None when LLVM cannot generate the kernel for this CPU."""
    engine = _peak_engine(kind)
    if engine is None:
        return None
    return _gflops(engine, "peak", fma_chains() * kind.flops, 1 << 16, seconds, repeats)


def amx_peak(seconds: float = 0.05, repeats: int = 5) -> float | None:
    """GFLOP/s of AMX bf16 tile products on torch's threads, as `fma_peak`; None where the
    process has no AMX tiles or LLVM cannot generate the kernel."""
    engine = _amx_engine() if amx_usable() else None
    if engine is None:
        return None
    return _gflops(engine, "amx_peak", 4 * AMX_ROUNDS * AMX_TILE_FLOPS, 1 << 8, seconds, repeats)


def _gflops(
    engine: ExecutionEngine, name: str, flops: int, probe: int, seconds: float, repeats: int
) -> float:
    """GFLOP/s of a peak kernel doing `flops` a step: best of `repeats` launches of about
    `seconds`, sized by a launch of `probe` steps."""
    out = torch.zeros(torch.get_num_threads())
    _launch(engine, name, out, probe, 1e-3)  # the first launch starts threads, resolves symbols
    first = _launch(engine, name, out, probe, 1e-3)
    iters = max(probe, int(probe * seconds / max(first, 1e-6)))
    best = min(_launch(engine, name, out, iters, 1e-3) for _ in range(repeats))
    return torch.get_num_threads() * iters * flops / best / 1e9


@functools.cache
def _peak_engine(kind: FmaKind) -> ExecutionEngine | None:
    return compile_module(peak_kernel(kind, fma_chains()), "peak", probe=kind is not F32)


@functools.cache
def _amx_engine() -> ExecutionEngine | None:
    return compile_module(amx_peak_kernel(), "amx_peak", probe=True)


@functools.cache
def _read_engine() -> ExecutionEngine:
    engine = compile_module(read_kernel(), "read")
    assert engine is not None  # i32 loads and adds compile on every target
    return engine


@functools.cache
def _copy_engine() -> ExecutionEngine:
    engine = compile_module(copy_kernel(), "copy")
    assert engine is not None  # i32 loads and stores compile on every target
    return engine


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _aligned(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor, or a contiguous copy where it is strided or not 64-byte aligned (our
    kernels' vector loads and stores take whole aligned vectors)."""
    if not tensor.is_contiguous() or tensor.data_ptr() % 64:
        return tensor.clone(memory_format=torch.contiguous_format)
    return tensor


def _words(tensor: torch.Tensor, nbytes: int) -> torch.Tensor:
    """The tensor's first `nbytes` as i32 words, in place."""
    return tensor.reshape(-1).view(torch.uint8)[:nbytes].view(torch.int32)


def _best_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """The fastest of `repeats` calls after one warm-up: a limit is the best the machine
    did, and a neighbour on the machine only ever slows a call down."""
    fn()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@dataclass(frozen=True)
class Reader:
    """Times reading one tensor, where it lies in memory (the placement of its pages
    changes how much of it the caches keep): our read kernel over its bytes as i32 words,
    all its whole steps (each thread a whole number of runs), `reps` times per launch; and
    `torch.sum` over the tensor itself. A tensor smaller than one step stands in as a step
    of zeros."""

    tensor: torch.Tensor
    words: torch.Tensor
    reps: int

    @classmethod
    def of(cls, tensor: torch.Tensor) -> Reader:
        tensor = _aligned(tensor)
        step = 4 * LANES * READ_STREAMS * torch.get_num_threads()
        whole = _nbytes(tensor) // step * step
        words = _words(tensor, whole) if whole else torch.zeros(step // 4, dtype=torch.int32)
        return cls(tensor, words, max(1, READ_LAUNCH_BYTES // _nbytes(words)))

    def kernel_seconds(self, repeats: int) -> float:
        """Our kernel's best time per pass of `repeats` launches, scaled to the tensor's bytes."""
        out = torch.zeros(torch.get_num_threads(), dtype=torch.int32)
        launch = functools.partial(_launch, _read_engine(), "read", out, self.words, self.reps)
        per_byte = _best_seconds(launch, repeats) / self.reps / _nbytes(self.words)
        return per_byte * _nbytes(self.tensor)

    def seconds(self, repeats: int) -> float:
        """The least time reading the whole tensor took: the faster of our kernel and
        `torch.sum` (as fast or faster on some large tensors; far slower on small ones,
        where its per-call overhead is the time), each the best of `repeats`."""
        return min(self.kernel_seconds(repeats), _best_seconds(self.tensor.sum, repeats))


def read_gbs(nbytes: int, repeats: int = 5) -> float:
    """GB/s of reading a tensor of `nbytes` (Reader), on torch's threads."""
    return nbytes / Reader.of(torch.ones(nbytes // 4)).seconds(repeats) / 1e9


def copy_gbs(nbytes: int = COPY_BYTES, fresh: bool = False, repeats: int = 5) -> float:
    """GB/s (bytes read + written) of copying `nbytes` into a preallocated tensor, or with
    `fresh` into a new one (`clone`)."""
    src = torch.ones(nbytes // 4)
    dst = torch.empty_like(src)
    copy: Callable[[], Any] = src.clone if fresh else functools.partial(dst.copy_, src)
    return 2 * nbytes / _best_seconds(copy, repeats) / 1e9


def _fill_fresh(numel: int) -> torch.Tensor:
    return torch.empty(numel).fill_(1.0)


@dataclass(frozen=True)
class Copier:
    """Times copying the first bytes of a kernel's largest input into a fresh tensor (as
    the kernel's own output is allocated): the faster of our copy kernel (non-temporal
    stores) and `clone` (torch's copy), over the bytes both the input and the outputs
    hold. A copy of the words the kernel reads into the memory it writes is work no
    kernel moving those bytes avoids."""

    words: torch.Tensor

    @classmethod
    def of(cls, inputs: Sequence[torch.Tensor], write_bytes: int) -> Copier | None:
        """None when the bytes in common are too few to time (below MIN_WRITE_BYTES)."""
        source = max(inputs, key=_nbytes, default=None)
        if source is None:
            return None
        source = _aligned(source)
        step = 4 * LANES * torch.get_num_threads()
        common = min(_nbytes(source), write_bytes) // step * step
        return cls(_words(source, common)) if common >= MIN_WRITE_BYTES else None

    def kernel_seconds(self, repeats: int) -> float:
        """Our copy kernel's best time, each launch into a fresh tensor."""
        out = torch.zeros(torch.get_num_threads(), dtype=torch.int32)
        engine = _copy_engine()
        return _best_seconds(
            lambda: _launch(engine, "copy", out, self.words, torch.empty_like(self.words)),
            repeats,
        )

    def seconds(self, repeats: int) -> float:
        return min(self.kernel_seconds(repeats), _best_seconds(self.words.clone, repeats))


@dataclass(frozen=True)
class Movement:
    """One kernel's tensors: a reader per input, per output the f32 elements to allocate
    and fill (at least MIN_WRITE_BYTES) with the output's share of them, and a copier of
    the bytes its inputs and outputs have in common."""

    reads: tuple[Reader, ...]
    writes: tuple[tuple[int, float], ...]
    copy: Copier | None
    read_bytes: int
    write_bytes: int

    @classmethod
    def of(cls, inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor]) -> Movement:
        sizes = [max(_nbytes(t), MIN_WRITE_BYTES) for t in outputs]
        writes = tuple((size // 4, _nbytes(t) / size) for t, size in zip(outputs, sizes))
        read_bytes, write_bytes = sum(map(_nbytes, inputs)), sum(map(_nbytes, outputs))
        copy = Copier.of(inputs, write_bytes)
        return cls(tuple(map(Reader.of, inputs)), writes, copy, read_bytes, write_bytes)

    def best_ms(self, repeats: int = 3) -> float:
        """The least time moving the tensors takes, each part at the best of `repeats`:
        the longer of reading every input and writing every output into a fresh tensor
        (reads and writes may overlap), and of copying the bytes read into the bytes
        written, what is left of either read or written at its own rate (a kernel that
        reads a row and writes it moves at best at a copy's rate)."""
        read = sum(reader.seconds(repeats) for reader in self.reads)
        write = sum(
            share * _best_seconds(functools.partial(_fill_fresh, numel), repeats)
            for numel, share in self.writes
        )
        bound = max(read, write)
        if self.copy is not None:
            common = _nbytes(self.copy.words)
            rest = read * (1 - common / self.read_bytes) + write * (1 - common / self.write_bytes)
            bound = max(bound, self.copy.seconds(repeats) + rest)
        return bound * 1e3


@dataclass(frozen=True)
class Limits:
    """What the machine can do, on the bench's thread count."""

    cpu: str
    threads: int
    f32_gflops: float
    bf16_gflops: float | None
    bf16_unit: str  # what the bf16 peak was measured on (AMX, vdpbf16ps), or why there is none
    copy_bytes: int
    read_gbs: float
    copy_gbs: float
    fresh_copy_gbs: float

    def peak_gflops(self, dtype: torch.dtype) -> float:
        """The FMA peak a contraction of `dtype` operands is held to: bf16 dot products
        where measured, else f32."""
        if dtype == torch.bfloat16 and self.bf16_gflops is not None:
            return self.bf16_gflops
        return self.f32_gflops

    def best(self, other: Limits) -> Limits:
        """Each limit the higher of two measurements: a busy neighbour only ever lowers one."""
        bf16 = [g for g in (self.bf16_gflops, other.bf16_gflops) if g is not None]
        return dataclasses.replace(
            self,
            f32_gflops=max(self.f32_gflops, other.f32_gflops),
            bf16_gflops=max(bf16) if bf16 else None,
            read_gbs=max(self.read_gbs, other.read_gbs),
            copy_gbs=max(self.copy_gbs, other.copy_gbs),
            fresh_copy_gbs=max(self.fresh_copy_gbs, other.fresh_copy_gbs),
        )

    def header(self) -> str:
        bf16 = (
            f"{self.bf16_gflops:.1f} GFLOP/s ({self.bf16_unit})"
            if self.bf16_gflops is not None
            else self.bf16_unit
        )
        return (
            f"machine: {self.cpu}, {self.threads} thread(s); FMA peak f32 "
            f"{self.f32_gflops:.1f} GFLOP/s, bf16 {bf16}; {self.copy_bytes // MB} MB: read "
            f"{self.read_gbs:.1f} GB/s, copy {self.copy_gbs:.1f} GB/s preallocated, "
            f"{self.fresh_copy_gbs:.1f} GB/s fresh (read + written)"
        )


def peak_gflops(dtype: torch.dtype, seconds: float = 0.02, repeats: int = 2) -> float:
    """The peak a contraction of `dtype` operands is held to, measured now: bf16 on AMX
    tiles or dot products where the CPU has them (`_bf16_peak`), else f32 FMAs."""
    if dtype == torch.bfloat16:
        bf16, _ = _bf16_peak(seconds, repeats)
        if bf16 is not None:
            return bf16
    f32 = fma_peak(F32, seconds, repeats)
    assert f32 is not None  # f32 FMAs compile on every target
    return f32


def _bf16_peak(fma_seconds: float, repeats: int) -> tuple[float | None, str]:
    """The bf16 peak of the unit our bf16 matmuls use here (AMX tiles, else `vdpbf16ps`),
    and that unit's name; or None and why there is none."""
    if (peak := amx_peak(fma_seconds, repeats)) is not None:
        return peak, "AMX"
    if "avx512_bf16" not in cpu_flags():
        return None, "unavailable (no avx512_bf16)"
    peak = fma_peak(BF16, fma_seconds, repeats)
    return peak, "vdpbf16ps" if peak is not None else "unavailable (LLVM cannot compile vdpbf16ps)"


def measure(copy_bytes: int = COPY_BYTES, fma_seconds: float = 0.05, repeats: int = 5) -> Limits:
    """The machine's limits on torch's current thread count."""
    f32 = peak_gflops(torch.float32, fma_seconds, repeats)
    bf16, unit = _bf16_peak(fma_seconds, repeats)
    return Limits(
        cpu=cpu_model(),
        threads=torch.get_num_threads(),
        f32_gflops=f32,
        bf16_gflops=bf16,
        bf16_unit=unit,
        copy_bytes=copy_bytes,
        read_gbs=read_gbs(copy_bytes, repeats),
        copy_gbs=copy_gbs(copy_bytes, fresh=False, repeats=repeats),
        fresh_copy_gbs=copy_gbs(copy_bytes, fresh=True, repeats=repeats),
    )


# For small inputs (`--sizes small`, tests): 16 MB buffers, 10 ms FMA launches.
QUICK_MEASURE: dict[str, Any] = {"copy_bytes": 16 * MB, "fma_seconds": 0.01, "repeats": 3}
