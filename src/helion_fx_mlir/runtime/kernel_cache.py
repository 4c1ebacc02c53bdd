"""The disk cache of compiled kernels: a new process skips generation, lowering and LLVM.

An entry is the kernel's machine code as a shared library (the ExecutionEngine's object,
linked by the system's `cc`), with what calling it needs (`engine.json`: the func's
arguments, outputs and in-place results) and, for the backend's call path, the host
program. It is keyed by the kernel's whole source file (its helpers and constants live
there too), the argument signature, the settings that change the code, the config and
run-time checks, and `disk_cache`'s machine and toolchain. Kernels whose meaning is not
all in their file (closures, source Python cannot read) are not cached.

A kernel of dynamic shapes is keyed by more than its sizes' names: generating its code
settles some of them under guards (a size 1 a tile indexes broadcasts; equal sizes may
merge), which key Helion's bound kernels in a process but cannot key a file. So the key
holds what those guards depend on, each symbolic size's value at bind time as 0, 1 or
more, and which of them were equal: binds that agree there generate the same code.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import inspect
import json
import os
import pathlib
import shutil
import subprocess
import warnings
from collections.abc import Callable
from typing import Any

import torch

from helion_fx_mlir.frontend.signature import KernelArgInfo
from helion_fx_mlir.runtime import disk_cache
from helion_fx_mlir.runtime.threads import openmp_runtime

KIND = "kernels"
FORMAT = 1
LIBRARY = "kernel.so"
META = "engine.json"
DISABLE_ENV = "HELION_FX_MLIR_DISK_CACHE"
# Settings that change the Device IR or our code; the rest (autotuning, printing) do not.
CODE_SETTINGS = (
    "index_dtype",
    "dot_precision",
    "fast_math",
    "static_shapes",
    "debug_dtype_asserts",
)


# Writes a kernel's machine code as an object file at the path given.
ObjectWriter = Callable[[pathlib.Path], None]


def enabled() -> bool:
    """`HELION_FX_MLIR_DISK_CACHE=0` turns the cache off (a linker is needed to fill it)."""
    return os.environ.get(DISABLE_ENV, "1") != "0" and linker_available()


def linker_available() -> bool:
    return _linker() is not None


@functools.cache
def _linker() -> str | None:
    return shutil.which("cc")


def kernel_fields(kernel: Any) -> dict[str, Any] | None:
    """What identifies the kernel's code: its name and source file; None when its meaning
    reaches outside the file (closure cells) or the file cannot be read."""
    fn = kernel.fn
    if fn.__closure__:
        return None
    try:
        source = pathlib.Path(inspect.getsourcefile(fn) or "").read_bytes()
    except (OSError, TypeError):
        return None
    settings = {name: str(getattr(kernel.settings, name, None)) for name in CODE_SETTINGS}
    return {
        "kernel": f"{fn.__module__}.{fn.__qualname__}",
        "source": hashlib.sha256(source).hexdigest(),
        "settings": settings,
    }


def engine_key(bound_kernel: Any, config: Any, bounds_checks: bool) -> str | None:
    """The key of a bound kernel's compiled code under a config, None if not cacheable."""
    fields = kernel_fields(bound_kernel.kernel)
    arguments = [_fake_arg(arg) for arg in bound_kernel.fake_args]
    if fields is None or None in arguments or not enabled():
        return None
    fields["arguments"] = arguments
    fields["size_classes"] = size_classes(bound_kernel.fake_args)
    fields["config"] = repr(config)
    fields["bounds_checks"] = bounds_checks
    fields["threads"] = torch.get_num_threads()  # the grids' groups are sized for them
    return disk_cache.entry_key(fields)


PLAIN = (bool, int, float, str, type(None), torch.dtype)


SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def size_classes(fake_args: Any) -> list[list[Any]]:
    """Per symbolic size or stride of the traced arguments (by name): its value at bind
    time as 0, 1 or "n" (more), and for "n" the first name of its class of equal values."""
    hints: dict[str, int] = {}
    for arg in fake_args:
        sizes = [*arg.shape, *arg.stride()] if isinstance(arg, torch.Tensor) else [arg]
        for size in sizes:
            if isinstance(size, torch.SymInt) and size.node.has_hint():
                hints.setdefault(str(size), int(size.node.hint))
    first: dict[int, str] = {}
    classes = []
    for name, hint in sorted(hints.items()):
        classes.append([name, hint] if hint < 2 else [name, "n", first.setdefault(hint, name)])
    return classes


def _fake_arg(arg: Any) -> Any:
    """A traced argument as its dtype, sizes and strides (symbolic ones by name), a
    symbolic scalar by name (the code takes its value at run time: `eps` of a norm), or a
    plain value by its repr; None for anything else (a callable's captures may be
    compiled into the code, and its repr does not name them)."""
    if isinstance(arg, torch.Tensor):
        return [str(arg.dtype), [str(s) for s in arg.shape], [str(s) for s in arg.stride()]]
    if isinstance(arg, SYMBOLIC):
        return [type(arg).__name__, str(arg)]
    if isinstance(arg, PLAIN):
        return [type(arg).__name__, repr(arg)]
    return None


@dataclasses.dataclass(frozen=True)
class CompiledCode:
    """What a cached kernel's call needs: the library's packed entry and the func's shape."""

    library: ctypes.CDLL
    meta: dict[str, Any]

    @property
    def entry(self) -> Callable[[Any], None]:
        name = self.meta["name"]
        packed = self.library[f"_mlir__mlir_ciface_{name}"]
        packed.restype, packed.argtypes = None, [ctypes.c_void_p]
        return packed

    def args(self, key: str) -> list[KernelArgInfo]:
        return [_arg_from_json(arg) for arg in self.meta[key]]


def load(key: str) -> CompiledCode | None:
    """The entry's library and metadata; None on a miss. A corrupt or stale entry (an
    unreadable file, a library that does not load, an older format) is removed, with one
    line of warning, and the kernel compiled again."""
    entry = disk_cache.cache_root() / KIND / key
    if not entry.is_dir():
        return None
    try:
        meta = json.loads((entry / META).read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')}, expected {FORMAT}")
        openmp_runtime()  # the library's GOMP_* symbols resolve against it
        code = CompiledCode(ctypes.CDLL(str(entry / LIBRARY)), meta)
        code.entry  # noqa: B018  # the symbol must be there
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as err:
        warnings.warn(
            f"helion-fx-mlir: cache entry {entry} is unusable ({err}); compiling again",
            stacklevel=2,
        )
        disk_cache.discard(entry)
        return None
    return code


def load_object(obj: pathlib.Path, name: str) -> CompiledCode:
    """The kernel `name` from an object file LLVM wrote (linked beside it, then loaded)."""
    library = obj.with_suffix(".so")
    _link(obj, library)
    openmp_runtime()
    return CompiledCode(ctypes.CDLL(str(library)), {"name": name})


def store(key: str, write_object: ObjectWriter, meta: dict[str, Any]) -> None:
    """Publish the kernel's machine code (linked into a shared library) and metadata.
    A failure to write leaves the kernel running from memory, with one warning."""

    def write(directory: pathlib.Path) -> None:
        write_object(directory / "kernel.o")
        _link(directory / "kernel.o", directory / LIBRARY)
        (directory / "kernel.o").unlink()
        (directory / META).write_text(json.dumps({"format": FORMAT, **meta}, indent=1))

    try:
        disk_cache.publish(KIND, key, write)
    except (OSError, subprocess.CalledProcessError) as err:
        warnings.warn(f"helion-fx-mlir: could not cache a compiled kernel ({err})", stacklevel=2)


def _link(obj: pathlib.Path, library: pathlib.Path) -> None:
    """A shared library of the JIT's object. Its code is position dependent (LLVM's large
    code model): the loader relocates it, which `-z notext` allows without a warning. Its
    calls bind to its own functions (`-Bsymbolic`): the kernel's func has the kernel's
    name, and the entry of a kernel named `tanh` called libm's, loaded before it."""
    linker = _linker()
    assert linker is not None
    subprocess.run(
        [linker, "-shared", "-Wl,-z,notext", "-Wl,-Bsymbolic", "-o", str(library), str(obj)],
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )


def arg_to_json(arg: KernelArgInfo) -> dict[str, Any]:
    fields = dataclasses.asdict(arg)
    fields["dtype"] = str(arg.dtype).removeprefix("torch.")
    fields["shape"] = [s if isinstance(s, int) else str(s) for s in arg.shape]
    return fields


def _arg_from_json(fields: dict[str, Any]) -> KernelArgInfo:
    dtype = getattr(torch, fields["dtype"])
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"not a dtype: {fields['dtype']}")
    host_size = tuple(fields["host_size"]) if fields["host_size"] is not None else None
    return KernelArgInfo(
        **{**fields, "dtype": dtype, "shape": tuple(fields["shape"]), "host_size": host_size}
    )
