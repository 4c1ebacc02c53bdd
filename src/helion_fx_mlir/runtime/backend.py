"""Helion's `mlir` backend: `@helion.kernel(backend="mlir")` or `HELION_BACKEND=mlir`.

Helion's backend registry takes a `Backend` subclass: that gives the name, Triton's tracing
(the Device IR we lower is the one the Triton backend sees, so `codegen_name` stays
"triton") and the autotune hook. The registry has no hook for what a backend compiles to:
`BoundKernel.compile_config` always generates Triton source and imports it, and `to_code`
always prints Triton. Those two methods are wrapped, and only for kernels whose backend
is `mlir`: `compile_config` returns the kernel's host code launching our JIT'd device code
(`runtime.host_for_config`, what `compile_kernel` uses), `to_code` returns the MLIR.
Everything else (binding, argument checks, specialization, `set_config`, `configs=`,
Helion's caches and fast call paths) is Helion's own.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import torch
from helion._compiler.backend_registry import register_compiler_backend
from helion._compiler.triton.backend import TritonBackend

from helion_fx_mlir.errors import HelionMLIRError

NAME = "mlir"


class MLIRBackend(TritonBackend):
    """Traces as the Triton backend does; compiles through helion_fx_mlir to CPU code."""

    @property
    def name(self) -> str:
        return NAME

    @property
    def codegen_name(self) -> str:
        return "triton"

    def autotune(
        self, bound_kernel: Any, args: Sequence[object], *, force: bool = True, **kwargs: object
    ) -> Any:
        """No search on CPU yet: the kernel's first config, else the spec's default."""
        configs = bound_kernel.kernel.configs
        config = configs[0] if configs and not force else bound_kernel.config_spec.default_config()
        print(
            f"[helion-fx-mlir] {bound_kernel.kernel.name}: no CPU autotuning yet, using {config}",
            file=sys.stderr,
        )
        return config


def install(kernel_module: ModuleType) -> None:
    """Register the backend and wrap the two BoundKernel methods (once)."""
    register_compiler_backend(MLIRBackend)
    bound = kernel_module.BoundKernel
    if not getattr(bound.compile_config, "_mlir_backend", False):
        bound.compile_config = _for_mlir(bound.compile_config, _compile_config)
        bound.to_code = _for_mlir(bound.to_code, _to_code)


def _for_mlir(original: Callable[..., Any], ours: Callable[..., Any]) -> Callable[..., Any]:
    """`ours` for kernels of the mlir backend, Helion's method for every other."""

    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.env.backend.name != NAME:
            return original(self, *args, **kwargs)
        return ours(self, *args, **kwargs)

    method._mlir_backend = True  # type: ignore[attr-defined]
    return method


def _compile_config(
    bound: Any, config: Any = None, *, allow_print: bool = True
) -> Callable[..., Any]:
    """The host function for a config, compiled once per bound kernel and config."""
    from helion_fx_mlir.frontend.lowering_context import resolve_config
    from helion_fx_mlir.runtime.jit import host_for_config

    config = resolve_config(bound, config)
    if (host := bound._compile_cache.get(config)) is None:
        _check_device(bound)
        host = bound._compile_cache[config] = host_for_config(bound, config)
    return host


def _to_code(bound: Any, config: Any = None, **_options: Any) -> str:
    from helion_fx_mlir.frontend.lower import generate_mlir
    from helion_fx_mlir.frontend.lowering_context import resolve_config

    return generate_mlir(bound, config=resolve_config(bound, config))


def _check_device(bound: Any) -> None:
    device = bound.env.device
    if torch.device(device).type != "cpu":
        raise HelionMLIRError(
            f"{bound.kernel.name}: the mlir backend runs on the CPU; "
            f"the arguments are on '{device}' (move them with .cpu())"
        )
