"""compile_kernel: JIT the lowered MLIR and run it from the kernel's own host code."""

from __future__ import annotations

import faulthandler
import functools
import inspect
import os
import pathlib
import subprocess
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import helion
import torch
from torch._inductor import inductor_prims

from helion_fx_mlir import host_cpu, processes
from helion_fx_mlir.errors import CodegenError, HelionMLIRError
from helion_fx_mlir.frontend.host_program import build_host_function, host_value
from helion_fx_mlir.frontend.lower import lower_kernel
from helion_fx_mlir.frontend.signature import RNG_SEEDS, KernelArgInfo
from helion_fx_mlir.frontend.size_checks import SizeCheck, check_sizes
from helion_fx_mlir.runtime import kernel_cache
from helion_fx_mlir.runtime.launch_args import ArgBlock, packed_entry
from helion_fx_mlir.runtime.threads import openmp_runtime, use_torch_threads


def _host_value(arg: KernelArgInfo, scope: dict[str, Any]) -> Any:
    if arg.host_size is not None:
        tensor, dim = arg.host_size
        return int(host_value(scope, tensor).size(dim))
    return host_value(scope, arg.name)


@dataclass
class Engine:
    """A compiled kernel func: inputs, then one caller-owned buffer per output. `entry` is
    its packed C interface (`void(void**)`: one pointer per argument); `code` keeps the
    machine code alive (the ExecutionEngine, or the library loaded from the disk cache)."""

    entry: Callable[[Any], None]
    code: Any
    name: str
    args: list[KernelArgInfo]
    outputs: list[KernelArgInfo]
    block_sizes: dict[int, int]  # by block id, for the host code's register_block_size
    in_place: list[int]  # per output: the input it is written into, or -1
    unused: set[str] = field(default_factory=set)  # arguments the kernel body never reads or writes
    size_checks: tuple[SizeCheck, ...] = ()  # argument dims each launch must find equal

    @functools.cached_property
    def own_args(self) -> list[int]:
        """Per output, the position of its own argument."""
        return [next(i for i, a in enumerate(self.args) if a.name == o.name) for o in self.outputs]

    @functools.cached_property
    def reads_other_buffers(self) -> bool:
        """Some result is another argument's buffer (an output equal to an input the kernel
        left as it was): it is read out before any copy into a host tensor overwrites that
        input."""
        return any(0 <= at != own for at, own in zip(self.in_place, self.own_args))

    @functools.cached_property
    def rng_seeds(self) -> int:
        return next(
            (arg.shape[0] for arg in self.args if arg.name == RNG_SEEDS and arg.is_tensor), 0
        )

    @functools.cached_property
    def arg_block(self) -> ArgBlock:
        """The launch's packed arguments: the func's, then a buffer per output not written
        into an input."""
        kinds = [len(a.shape) if a.is_tensor else a.dtype for a in self.args]
        kinds += [len(o.shape) for o, at in zip(self.outputs, self.in_place) if at < 0]
        return ArgBlock.of(kinds)

    def launch(self, scope: dict[str, Any]) -> None:
        """Run from the host code's variables; a kernel with random ops first draws its
        seeds from torch's generator, as Helion's host code and reference mode do."""
        if self.rng_seeds:
            scope = {**scope, RNG_SEEDS: inductor_prims.seeds(self.rng_seeds, torch.device("cpu"))}
        self.run(scope)

    def run(self, scope: dict[str, Any]) -> None:
        """Run on the host tensors named in `scope`. Outputs written in place land in the
        host tensors themselves (or their contiguous copies, copied back); the others in
        a buffer the call owns, copied into the host tensor."""
        inputs = [self._input(arg, _host_value(arg, scope)) for arg in self.args]
        if self.size_checks:
            check_sizes(self.name, self.size_checks, self.args, inputs)
        hosts = [host_value(scope, o.name) for o in self.outputs]
        outs = [
            inputs[at]
            if at >= 0
            else h
            if self._writable(o, h, inputs)
            else torch.empty(tuple(h.shape), dtype=o.dtype)
            for at, h, o in zip(self.in_place, hosts, self.outputs)
        ]
        buffers = [t for at, t in zip(self.in_place, outs) if at < 0]
        use_torch_threads()
        self.arg_block.launch(self.entry, [*inputs, *buffers])
        if self.reads_other_buffers:
            outs = [
                out.clone() if 0 <= at != own else out
                for out, at, own in zip(outs, self.in_place, self.own_args)
            ]
        for out, host in zip(outs, hosts):
            if out.data_ptr() != host.data_ptr():
                host.copy_(out)

    def _writable(self, output: KernelArgInfo, host: torch.Tensor, inputs: list[Any]) -> bool:
        """The host tensor can take the result itself: contiguous, of the result's dtype,
        its argument never read by the kernel, and no other input in its storage."""
        if output.name not in self.unused or not host.is_contiguous() or host.dtype != output.dtype:
            return False
        storage = host.untyped_storage().data_ptr()
        return not any(
            isinstance(t, torch.Tensor)
            and t is not host
            and t.untyped_storage().data_ptr() == storage
            for t in inputs
        )

    @staticmethod
    def _input(arg: KernelArgInfo, value: Any) -> Any:
        if not arg.is_tensor:
            return value
        if not isinstance(value, torch.Tensor) or not value.is_cpu:
            raise HelionMLIRError(f"argument '{arg.name}' must be a CPU tensor")
        return value.contiguous()


# LLVM has no fp8 types: f8E4M3FN conversions are expanded to integer ops
# (passes.float_conversions); E5M2 has no CPU code generation here.
NO_CPU_CODEGEN = {torch.float8_e5m2}


# A cached kernel of dynamic shapes whose code generation settled input sizes under
# guards (a size 1 a tile indexes broadcasts): those guards key Helion's bound kernels in
# a process (a call with another size there binds a kernel of its own), so a process
# loading the code generates it again, in the frontend only, for them.
GUARDED = "size_guards"
USES_AMX = "uses_amx"  # its code multiplies AMX tiles (see amx_tiles.py)


def jit(bound_kernel: Any, config: helion.Config, bounds_checks: bool = False) -> Engine:
    """The kernel's compiled code for a config: from the disk cache, else generate ->
    lower to LLVM -> ExecutionEngine (and into the cache)."""
    openmp_runtime()  # compiled code resolves GOMP_* and omp_* against it
    key = kernel_cache.engine_key(bound_kernel, config, bounds_checks)
    cached = kernel_cache.load(key) if key is not None else None
    # Code on AMX tiles runs only once this process holds the tile state (else SIGILL).
    if cached is not None and (not cached.meta.get(USES_AMX) or host_cpu.amx_usable()):
        if cached.meta.get(GUARDED):
            lower_kernel(bound_kernel, config)  # the guards again: no passes, no LLVM
        return engine_from_cache(cached)
    engine, write_object, uses_amx = _compile(bound_kernel, config, bounds_checks)
    if key is not None:
        meta = {**_engine_meta(engine), GUARDED: _size_guards(bound_kernel), USES_AMX: uses_amx}
        kernel_cache.store(key, write_object, meta)
    return engine


def _size_guards(bound_kernel: Any) -> bool:
    return not bound_kernel.settings.static_shapes and bool(bound_kernel._guarded_input_facts())


def _compile(
    bound_kernel: Any, config: helion.Config, bounds_checks: bool
) -> tuple[Engine, kernel_cache.ObjectWriter, bool]:
    """Generate, lower and JIT (MLIR's bindings load here: a cached kernel never needs them);
    with what writes the machine code as an object file, for the disk cache, and whether
    the code uses AMX tiles."""
    from helion_fx_mlir.mlir.context import mlir_context
    from helion_fx_mlir.passes.amx_tiles import has_amx_tiles
    from helion_fx_mlir.passes.results import IN_PLACE_RESULTS, UNUSED_ARGS

    # debug info: diagnostics from any pass point at kernel lines
    text, signature = lower_kernel(bound_kernel, config, debug_info=True)
    name, args = signature.name, list(signature.args)
    unsupported = sorted({str(a.dtype) for a in args if a.dtype in NO_CPU_CODEGEN})
    if unsupported:
        raise HelionMLIRError(
            f"{name}: {', '.join(unsupported)} tensors lower to linalg (generate_mlir, "
            "lower_to_linalg) but have no CPU code generation: LLVM has no fp8 float types"
        )
    probe = any(a.dtype == torch.bfloat16 for a in args)
    with tempfile.TemporaryDirectory(prefix="helion-fx-mlir-") as workdir:
        module, opt_level, obj = _lowered(text, name, bounds_checks, probe, pathlib.Path(workdir))
        with mlir_context():
            in_place = list(module.operation.attributes[IN_PLACE_RESULTS][name])
            unused = {args[i].name for i in module.operation.attributes[UNUSED_ARGS][name]}
            uses_amx = has_amx_tiles(module)
        code, entry, write_object = _probed_code(obj, name) or _execution_engine(
            module, name, opt_level
        )
    engine = Engine(
        entry,
        code,
        name,
        args,
        list(signature.outputs),
        signature.block_sizes,
        in_place,
        unused,
        signature.size_checks,
    )
    return engine, write_object, uses_amx


def _execution_engine(
    module: Any, name: str, opt_level: int
) -> tuple[Any, Callable[[Any], None], kernel_cache.ObjectWriter]:
    """The module JIT'd in this process: the engine, its entry and its object writer."""
    from torch_mlir.execution_engine import ExecutionEngine

    from helion_fx_mlir.mlir.context import mlir_context

    with mlir_context():
        engine = ExecutionEngine(module, opt_level=opt_level)
    return engine, packed_entry(engine, name), lambda path: engine.dump_to_object_file(str(path))


def _probed_code(
    obj: pathlib.Path | None, name: str
) -> tuple[Any, Callable[[Any], None], kernel_cache.ObjectWriter] | None:
    """The code the codegen probe generated, linked and loaded; None where there is none,
    or no linker (the code is then generated again, in this process)."""
    if obj is None or not obj.is_file() or not kernel_cache.linker_available():
        return None
    try:
        code = kernel_cache.load_object(obj, name)
    except (OSError, subprocess.CalledProcessError):
        return None
    return code, code.entry, _writer(obj.read_bytes())


def _writer(data: bytes) -> kernel_cache.ObjectWriter:
    def write(path: pathlib.Path) -> None:
        path.write_bytes(data)

    return write


def _lowered(
    text: str, name: str, bounds_checks: bool, probe: bool, workdir: pathlib.Path
) -> tuple[Any, int, pathlib.Path | None]:
    """The kernel in the LLVM dialect, the opt level to generate its code at and, for a
    probed kernel, the object file the probe generated. On a CPU with AMX, bf16 matmuls of
    whole tiles run on it; on one with AVX512_BF16, (the other) bf16 matmuls become its dot
    products. Probed are bf16 kernels and kernels of a vector width other than the
    default: LLVM first generates the code in a forked child, which keeps it. Where the
    child dies, the kernel is lowered again without AMX, then without the dot products,
    then at the default width (with a warning), then probed at -O0; where LLVM dies there
    too, a CodegenError says so (LLVM would abort this process)."""
    from helion_fx_mlir.mlir.parse import parse_module
    from helion_fx_mlir.passes.amx_tiles import has_amx_tiles
    from helion_fx_mlir.passes.bf16_dot import has_bf16_dots
    from helion_fx_mlir.passes.pipelines import to_llvm_module
    from helion_fx_mlir.passes.vector_width import drop_vector_width, vector_width

    source = parse_module(text)  # the first lowering's; each later one parses its own
    narrow = vector_width(source) is not None
    for default_width in [False, True] if narrow else [False]:
        for amx, bf16_dots in [(False, False)] if bounds_checks else _bf16_matmuls(probe):
            kernel = source if source is not None else parse_module(text)
            source = None
            if default_width:
                drop_vector_width(kernel)
            _for_this_host(kernel)
            module = to_llvm_module(kernel, bounds_checks, bf16_dots, amx)
            if not (probe or narrow):
                return module, OPT_LEVEL, None
            obj = workdir / "kernel.o"
            if not codegen_crashes(module, name, OPT_LEVEL, obj):
                if default_width:
                    warnings.warn(_WIDE_AGAIN.format(name=name), stacklevel=4)
                return module, OPT_LEVEL, obj
            if not (has_amx_tiles(module) or has_bf16_dots(module)):
                break
    if codegen_crashes(module, name, 0, obj):
        raise CodegenError(name)
    return module, 0, obj


def _bf16_matmuls(bf16_args: bool) -> list[tuple[bool, bool]]:
    """(AMX, dot products) for bf16 matmuls, best first, as far as this host has them (AMX's
    pipeline gives the matmuls its tiles do not take dot products: `amx_usable` implies
    them); AMX only for kernels of bf16 tensors (only they ask for the tile state)."""
    from helion_fx_mlir.passes.bf16_dot import host_has_bf16_dot

    tiers = [(False, True), (False, False)] if host_has_bf16_dot() else [(False, False)]
    return [(True, True), *tiers] if bf16_args and host_cpu.amx_usable() else tiers


def _for_this_host(kernel: Any) -> None:
    """Record on the module what the passes take from the host: its vector registers, the
    threads, whether stores stream, and the largest operand copy."""
    from helion_fx_mlir.passes.grid_groups import target_threads
    from helion_fx_mlir.passes.packed_operands import target_pack_limit
    from helion_fx_mlir.passes.streaming_stores import target_streaming_stores
    from helion_fx_mlir.passes.vector_width import target_vector_registers

    target_vector_registers(kernel, host_cpu.vector_registers())
    target_threads(kernel, torch.get_num_threads())
    target_streaming_stores(kernel, host_cpu.streaming_stores_pay())
    target_pack_limit(kernel, host_cpu.large_pack_bytes())


_WIDE_AGAIN = (
    "helion-fx-mlir: {name}: LLVM cannot generate the code of this config's vector width; "
    "it runs with 512-bit vectors (the default)"
)


def _engine_meta(engine: Engine) -> dict[str, Any]:
    """What `engine_from_cache` needs besides the machine code, as JSON."""
    return {
        "name": engine.name,
        "args": [kernel_cache.arg_to_json(a) for a in engine.args],
        "outputs": [kernel_cache.arg_to_json(a) for a in engine.outputs],
        "block_sizes": [[block, size] for block, size in engine.block_sizes.items()],
        "in_place": engine.in_place,
        "unused": sorted(engine.unused),
        "size_checks": [check.to_json() for check in engine.size_checks],
    }


def engine_from_cache(code: kernel_cache.CompiledCode) -> Engine:
    meta = code.meta
    return Engine(
        code.entry,
        code.library,
        meta["name"],
        code.args("args"),
        code.args("outputs"),
        {int(block): int(size) for block, size in meta["block_sizes"]},
        [int(i) for i in meta["in_place"]],
        set(meta["unused"]),
        tuple(SizeCheck.from_json(check) for check in meta["size_checks"]),
    )


# LLVM's -O2: our passes vectorize and tile before LLVM sees the code, so -O3 made no kernel
# faster on the bench and took 1.6 times as long to generate code (docs/performance.md).
OPT_LEVEL = 2
CODEGEN_PROBE_TIMEOUT_S = 120


def codegen_crashes(
    module: Any, name: str, opt_level: int, obj: pathlib.Path | None = None
) -> bool:
    """Whether LLVM dies generating code for the module, found in a forked child, which
    writes the code it generated to `obj` (so the parent need not generate it again).
    LLVM's X86 backend aborts on some bf16 code at -O1 and up ("Cannot select" a bf16
    store); in the user's process that would end it, so bf16 kernels are probed first, at
    -O0 where LLVM cannot compile them optimized."""

    from torch_mlir.execution_engine import ExecutionEngine

    from helion_fx_mlir.mlir.context import mlir_context

    def generate_code() -> int:
        # LLVM's abort is the answer here, not news: silence it and faulthandler's dump
        # (pytest's writes to a copy of stderr, which the dup2 does not reach).
        faulthandler.disable()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        with mlir_context():
            engine = ExecutionEngine(module, opt_level=opt_level)
            engine.raw_lookup(f"_mlir_ciface_{name}")
            if obj is not None:
                engine.dump_to_object_file(str(obj))
        return 0

    ended = processes.wait(processes.fork(generate_code), CODEGEN_PROBE_TIMEOUT_S)
    return ended.timed_out or ended.code != 0


# (id(bound kernel), config, bounds checks, threads) -> (bound kernel, engine); holding the kernel
# keeps its id unique.
_ENGINES: dict[tuple[int, str, bool, int], tuple[Any, Engine]] = {}


def cached_engine(bound_kernel: Any, config: helion.Config, bounds_checks: bool = False) -> Engine:
    """JIT once per bound kernel (one argument signature), config, checking and thread
    count (`passes/grid_groups.py` sizes groups for it), per process."""
    key = (id(bound_kernel), repr(config), bounds_checks, torch.get_num_threads())
    if key not in _ENGINES:
        _ENGINES[key] = (bound_kernel, jit(bound_kernel, config, bounds_checks))
    return _ENGINES[key][1]


@dataclass
class CompiledKernel:
    """Callable like the Helion kernel: host code in Python, device code JIT-compiled.

    Each call binds the kernel (Helion caches binds per specialization, so a dynamic-shape
    kernel binds once for all shapes); each bound kernel is lowered and JIT'd once."""

    kernel: Any
    config: helion.Config | None
    bounds_checks: bool = False
    _hosts: dict[int, tuple[Any, Callable[..., Any]]] = field(default_factory=dict)
    _by_signature: dict[tuple[Any, ...], Callable[..., Any]] = field(default_factory=dict)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        required, defaults = self._positional or (0, None)
        if kwargs or defaults is None or not required <= len(args) <= len(defaults):
            args = tuple(self.kernel.normalize_args(*args, **kwargs))
        elif len(args) < len(defaults):
            args = (*args, *defaults[len(args) :])
        return self.host_for(args)(*args)

    @functools.cached_property
    def _positional(self) -> tuple[int, tuple[Any, ...]] | None:
        """How many parameters have no default, and each one's default: arguments given by
        position need no binding to the signature (Helion's `normalize_args`, several
        microseconds a call). None where the kernel takes *args or keyword-only ones."""
        params = list(self.kernel.signature.parameters.values())
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if not all(p.kind in positional for p in params):
            return None
        required = sum(p.default is inspect.Parameter.empty for p in params)
        return required, tuple(p.default for p in params)

    def host_for(self, args: tuple[Any, ...]) -> Callable[..., Any]:
        """The host function for these arguments; a signature seen before skips Helion's
        bind (tens of microseconds of specialization keys per call)."""
        signature = call_signature(args)
        host = self._by_signature.get(signature) if signature is not None else None
        if host is None:
            bound = self.kernel.bind(args)
            if id(bound) not in self._hosts:
                self.add(bound)
            host = self._hosts[id(bound)][1]
            if signature is not None:
                self._by_signature[signature] = host
        return host

    def add(self, bound_kernel: Any) -> None:
        from helion_fx_mlir.frontend.lowering_context import resolve_config

        host = host_for_config(
            bound_kernel, resolve_config(bound_kernel, self.config), self.bounds_checks
        )
        self._hosts[id(bound_kernel)] = (bound_kernel, host)


def host_for_config(
    bound_kernel: Any, config: helion.Config, bounds_checks: bool = False
) -> Callable[..., Any]:
    """The kernel's host code, launching the JIT'd device code of this (normalized) config:
    what `compile_kernel` and the `mlir` backend's `compile_config` both call."""
    engine = cached_engine(bound_kernel, config, bounds_checks)
    return build_host_function(
        bound_kernel.host_function, engine.launch, config, engine.block_sizes
    )


def call_signature(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What any specialization can depend on: each tensor's dtype, device, shape and
    strides, each other argument's type and value; None when an argument is not hashable.
    Built on every call of a compiled kernel, in one pass: `torch.Size` and `torch.device`
    key as they are (a shape's tuple and a device's type string cost more than the rest)."""
    key: list[Any] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            key.append((arg.dtype, arg.device, arg.shape, arg.stride()))
            continue
        try:
            hash(arg)
        except TypeError:
            return None
        key.append((type(arg), arg))
    return tuple(key)


def compile_kernel(
    bound_kernel: Any, *, config: helion.Config | None = None, bounds_checks: bool = False
) -> CompiledKernel:
    """A callable that runs the kernel's host code with the device part JIT-compiled.

    `bounds_checks` verifies every memory access at run time (MLIR's runtime verification):
    an out-of-bounds one prints the op and the kernel line, then aborts the process. For
    debugging kernels with data-dependent indices; it slows the kernel down."""
    compiled = CompiledKernel(bound_kernel.kernel, config, bounds_checks)
    compiled.add(bound_kernel)
    return compiled
