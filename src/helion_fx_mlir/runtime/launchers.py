"""The backend's first call of a kernel in a new process, without binding it.

Binding a kernel (Helion's tracing into Device IR) costs 0.1 s to seconds per argument
signature, in every process, even when the compiled code comes from the disk cache. A
launcher entry records what one call needed beyond the compiled code: for a kernel, its
exact argument signature (dtypes, sizes, strides, scalar values: stricter than any
specialization Helion makes) and its settings, the config it ran (given, default, or
found by the autotuner) and the host program. A new process making the same call loads
both entries and calls the host program directly; any other call takes Helion's own
path, which fills the entries. Within a process, the host function a signature's first
call found (loaded, or the one Helion compiled) serves its later calls.
"""

from __future__ import annotations

import json
import pathlib
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import helion
import torch
from helion.runtime.settings import RefMode

from helion_fx_mlir.frontend.host_program import HostProgram, build_host_function
from helion_fx_mlir.runtime import disk_cache, kernel_cache
from helion_fx_mlir.runtime.jit import engine_from_cache
from helion_fx_mlir.runtime.kernel_cache import PLAIN

KIND = "launchers"
FORMAT = 1
FILE = "launcher.json"


@dataclass
class _KernelLaunchers:
    """Per kernel and process: what identifies its code on disk (None: not cacheable),
    the host functions for exact signatures (loaded from the disk, or Helion's compiled
    one after its first call), the signatures already tried, and the kernel's reset
    generation they belong to (`kernel.reset()` drops them, as it drops Helion's)."""

    fields: dict[str, Any] | None
    generation: int = 0
    hosts: dict[tuple[Any, ...], Callable[..., Any]] = field(default_factory=dict)
    tried: set[tuple[Any, ...]] = field(default_factory=set)


_KERNELS: weakref.WeakKeyDictionary[Any, _KernelLaunchers] = weakref.WeakKeyDictionary()


def call(kernel: Any, helion_call: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
    """`kernel(*args, **kwargs)`: the host function of this exact signature, else its first
    call (`_first_call`). A process's later calls of a signature take its host function
    directly: Helion's dispatch checks, the disk cache's switch (an environment lookup)
    and the signature's tried set are for first calls only."""
    state = _state(kernel)
    if not _launchable(kernel, state):
        return helion_call(kernel, *args, **kwargs)
    args = tuple(kernel.normalize_args(*args, **kwargs)) if kwargs else args
    signature = _plain_signature(args)
    if signature is None:
        return helion_call(kernel, *args)
    if (host := state.hosts.get(signature)) is not None:
        return host(*args)
    if signature in state.tried:
        return helion_call(kernel, *args)
    return _first_call(kernel, helion_call, state, args, signature)


def _state(kernel: Any) -> _KernelLaunchers:
    """The kernel's launchers in this process, emptied when the kernel was reset."""
    state = _KERNELS.get(kernel)
    generation = getattr(kernel, "_reset_generation", 0)
    if state is None or state.generation != generation:
        state = _KERNELS[kernel] = _KernelLaunchers(kernel_cache.kernel_fields(kernel), generation)
    return state


def _plain_signature(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The call's thread count (code is compiled for the threads that run it:
    `passes/grid_groups.py`) and signature, where every argument is one a launcher takes:
    a plain CPU tensor not recording gradients (its dtype, sizes and strides) or a plain
    scalar (its type and value). Anything else (autograd, tensor subclasses, callables)
    gives None: it goes Helion's way. One pass: it runs on every call."""
    signature: list[Any] = [torch.get_num_threads()]
    for arg in args:
        if type(arg) is torch.Tensor:
            if arg.requires_grad or not arg.is_cpu:
                return None
            signature.append((arg.dtype, arg.shape, arg.stride()))
        elif isinstance(arg, PLAIN):
            signature.append((type(arg), arg))
        else:
            return None
    return tuple(signature)


def _first_call(
    kernel: Any,
    helion_call: Callable[..., Any],
    state: _KernelLaunchers,
    args: tuple[Any, ...],
    signature: tuple[Any, ...],
) -> Any:
    """A signature's first call in this process: its launcher from the disk cache, else
    Helion's own call (recorded for the next process), whose compiled host function then
    serves this process's later calls."""
    state.tried.add(signature)
    key = _launcher_key(kernel, state, signature) if kernel_cache.enabled() else None
    if key is not None and (host := _load(kernel, key)) is not None:
        state.hosts[signature] = host
        return host(*args)
    result = helion_call(kernel, *args)
    if key is not None:
        _record(kernel, args, key)
    if (host := kernel.bind(args)._run) is not None:
        state.hosts[signature] = host
    return result


def _launchable(kernel: Any, state: _KernelLaunchers) -> bool:
    """Cacheable code, the kernel compiled (not run as PyTorch, not traced by Dynamo), and
    no re-tuning asked for."""
    settings = kernel.settings
    return (
        state.fields is not None
        and settings.ref_mode == RefMode.OFF
        and not settings.force_autotune
        and not torch.compiler.is_compiling()
    )


def _launcher_key(kernel: Any, state: _KernelLaunchers, signature: tuple[Any, ...]) -> str:
    assert state.fields is not None
    return disk_cache.entry_key(
        {
            **state.fields,
            "signature": repr(signature[1:]),
            "configs": [repr(config) for config in kernel.configs],
            "autotune_effort": str(kernel.settings.autotune_effort),
            "threads": signature[0],
        }
    )


def _load(kernel: Any, key: str) -> Callable[..., Any] | None:
    """The host function of a recorded launcher, or None (a miss, or an entry whose
    compiled kernel is gone: it is recorded again)."""
    entry = disk_cache.cache_root() / KIND / key
    if not entry.is_dir():
        return None
    try:
        fields = json.loads((entry / FILE).read_text())
        if fields.get("format") != FORMAT:
            raise ValueError(f"format {fields.get('format')}, expected {FORMAT}")
        code = kernel_cache.load(fields["engine"])
        if code is None:
            disk_cache.discard(entry)
            return None
        engine = engine_from_cache(code)
        program = HostProgram.from_json(fields["host"], kernel.fn)
        config = helion.Config.from_json(fields["config"])
        return build_host_function(program, engine.launch, config, engine.block_sizes)
    except (OSError, ValueError, KeyError, TypeError, ImportError, SyntaxError) as err:
        warnings.warn(
            f"helion-fx-mlir: cache entry {entry} is unusable ({err}); compiling again",
            stacklevel=3,
        )
        disk_cache.discard(entry)
        return None


def _record(kernel: Any, args: tuple[Any, ...], key: str) -> None:
    """Record the call Helion just made: its bound kernel (Helion's cache: no new trace),
    the config it ran, the compiled kernel's entry and the host program."""
    from helion_fx_mlir.frontend.lowering_context import resolve_config

    bound = kernel.bind(args)
    if bound._config is None:
        return
    config = resolve_config(bound, bound._config)
    engine = kernel_cache.engine_key(bound, config, False)
    program = HostProgram.of(bound.host_function)
    if engine is None or program.fn is not kernel.fn or not program.portable():
        return
    if not (disk_cache.cache_root() / kernel_cache.KIND / engine).is_dir():
        return
    launcher = {
        "format": FORMAT,
        "engine": engine,
        "config": config.to_json(),
        "host": program.to_json(),
    }

    def write(directory: pathlib.Path) -> None:
        (directory / FILE).write_text(json.dumps(launcher, indent=1))

    try:
        disk_cache.publish(KIND, key, write)
    except OSError as err:
        warnings.warn(f"helion-fx-mlir: could not cache a kernel launcher ({err})", stacklevel=3)
