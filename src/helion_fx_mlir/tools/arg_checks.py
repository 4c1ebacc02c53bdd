"""Checks of a kernel's arguments before anything is generated, allocated or run.

A bad command line should fail in one line that says what is wrong with the arguments,
not deep in tracing, lowering or the allocator: the argument count against the kernel's
signature, the kernel's own host code (its asserts, its allocations) run on meta tensors,
Helion's errors reduced to their message and kernel line, and the memory `run` needs.
"""

from __future__ import annotations

import inspect
import os
import traceback
from collections.abc import Callable
from typing import Any

import helion
import torch

from helion_fx_mlir.errors import HelionMLIRError, SpecError
from helion_fx_mlir.frontend.host_program import build_host_function
from helion_fx_mlir.frontend.lowering_context import LoweringContext
from helion_fx_mlir.tools.specs import TensorSpec

# `helion-mlir run` holds the inputs three times: the originals, the kernel's copy and eager's.
RUN_COPIES = 3


def check_arity(kernel: Any, args: tuple[Any, ...]) -> None:
    """As many arguments as the kernel's signature takes (defaults may be left out)."""
    signature = inspect.signature(kernel.fn)
    try:
        signature.bind(*args)
    except TypeError as err:
        raise SpecError(f"{kernel.fn.__name__}{signature} got {len(args)} --args: {err}") from None


def bind(kernel: Any, args: tuple[Any, ...]) -> Any:
    """kernel.bind(args), Helion's errors as one line at the kernel line they point to."""
    check_arity(kernel, args)
    try:
        return kernel.bind(args)
    except helion.exc.Base as err:
        raise HelionMLIRError(helion_message(err)) from None


def helion_message(err: helion.exc.Base) -> str:
    """'file.py:LINE: message' without the multi-line context Helion appends."""
    text = str(err)
    message = text[: getattr(err, "base_msg_len", len(text))].strip() or type(err).__name__
    location = getattr(err, "location", None)
    if location is None or not getattr(location, "lineno", None):
        return message
    return f"{location.filename}:{location.lineno}: {message}"


def check_host_code(bound: Any, config: Any, args: tuple[Any, ...]) -> None:
    """Run the host code on meta tensors (no data, no memory, no launch): its asserts
    reject arguments that do not fit the kernel before anything is generated."""
    block_sizes = LoweringContext.from_bound_kernel(bound, config).block_size_values
    host = build_host_function(bound.host_function, lambda scope: None, config, block_sizes)
    meta = tuple(a.to("meta") if isinstance(a, torch.Tensor) else a for a in args)
    host_checked(host, bound.kernel.fn)(*meta)


def host_checked(host: Callable[..., Any], fn: Any) -> Callable[..., Any]:
    """The host function, its failing asserts as one line at the kernel's line."""

    def call(*args: Any) -> Any:
        try:
            return host(*args)
        except AssertionError as err:
            raise rejected(err, fn, "the kernel rejects these arguments") from None

    return call


def rejected(err: BaseException, fn: Any, what: str) -> HelionMLIRError:
    """`err`, raised while running the kernel's Python, as one line at the kernel's line."""
    if isinstance(err, helion.exc.Base):
        return HelionMLIRError(f"{what}: {helion_message(err)}")
    message = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return HelionMLIRError(f"{_host_line(err, fn.__code__.co_filename)}: {what}: {message}")


def _host_line(err: BaseException, source_file: str) -> str:
    """'file.py:LINE' of the innermost frame in the kernel's file."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == source_file]
    return f"{source_file}:{frames[-1].lineno}" if frames else source_file


def check_memory(specs: list[Any]) -> None:
    """The tensors `run` makes must fit in the memory this machine has available."""
    needed = RUN_COPIES * sum(s.nbytes for s in specs if isinstance(s, TensorSpec))
    available = available_memory()
    if needed > available:
        raise HelionMLIRError(
            f"the arguments need about {readable_bytes(needed)} under `run` ({RUN_COPIES} copies "
            f"of the inputs), more than the {readable_bytes(available)} of memory available"
        )


def available_memory() -> int:
    """MemAvailable from /proc/meminfo, else physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def readable_bytes(count: int) -> str:
    value, units = float(count), ["B", "KB", "MB", "GB", "TB", "PB", "EB"]
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f"{value:.1f} {units[0]}"
