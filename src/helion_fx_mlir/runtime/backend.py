"""Helion's `mlir` backend: `@helion.kernel(backend="mlir")` or `HELION_BACKEND=mlir`.

Helion's backend registry takes a `Backend` subclass: that gives the name, Triton's tracing
(the Device IR we lower is the one the Triton backend sees, so `codegen_name` stays
"triton") and the autotune hook. The registry has no hook for what a backend compiles to:
`BoundKernel.compile_config` always generates Triton source and imports it, and `to_code`
always prints Triton. Those two methods are wrapped, and only for kernels whose backend
is `mlir`: `compile_config` returns the kernel's host code launching our JIT'd device code
(`runtime.host_for_config`, what `compile_kernel` uses), `to_code` returns the MLIR.
Everything else (binding, argument checks, specialization, `set_config`, `configs=`,
Helion's caches and fast call paths, the autotuner's search) is Helion's own; the
backend gives the search CPU timers and a CPU cache (`runtime/autotune.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import torch
from helion import exc
from helion._compiler.backend_registry import register_compiler_backend
from helion._compiler.triton.backend import TritonBackend
from helion.autotuner.benchmarking import do_bench_generic

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

    def supports_config_key(self, key: str) -> bool:
        """Triton's knobs leave the config space: they do not change our code."""
        from helion_fx_mlir.runtime.autotune import IGNORED_CONFIG_KEYS

        return key not in IGNORED_CONFIG_KEYS and super().supports_config_key(key)

    def supports_precompile(self) -> bool:
        """Configs compile in process: no Triton compile to fork, hang or crash."""
        return False

    def get_do_bench(self) -> Callable[..., float | tuple[float, ...]]:
        """Wall-clock timing: CPU kernels have no device events."""
        return do_bench_generic

    def get_interleaved_bench(self) -> Callable[..., list[float]]:
        """The finalists' re-timing, each in its steady state (`autotune.py`)."""
        from helion_fx_mlir.runtime.autotune import steady_interleaved_bench

        return steady_interleaved_bench

    def classify_autotune_exception(self, err: BaseException) -> str | None:
        """A config we cannot lower or compile is skipped with a warning; anything else
        is Helion's to judge."""
        return "warn" if isinstance(err, HelionMLIRError) else None

    def autotune(
        self, bound_kernel: Any, args: Sequence[object], *, force: bool = True, **kwargs: object
    ) -> Any:
        """Helion's search (or its `configs=`, or `autotune_effort="none"`'s default
        config), timing our JIT'd code, the best config cached for this CPU."""
        from helion_fx_mlir.runtime.autotune import prepare

        prepare(bound_kernel)
        try:
            return super().autotune(bound_kernel, args, force=force, **kwargs)
        except exc.InvalidConfig as err:
            raise _our_error(err) from None


def _our_error(err: BaseException) -> BaseException:
    """Our error behind Helion's "reference config failed" (a kernel no config of which
    lowers): it names the node, its target and the kernel line."""
    cause: BaseException | None = err
    while cause is not None and not isinstance(cause, HelionMLIRError):
        cause = cause.__cause__ or cause.__context__
    return cause or err


def install(kernel_module: ModuleType) -> None:
    """Register the backend and wrap BoundKernel's init and its two methods and the
    kernel's call (once)."""
    register_compiler_backend(MLIRBackend)
    bound = kernel_module.BoundKernel
    if not getattr(bound.compile_config, "_mlir_backend", False):
        bound.__init__ = _with_our_knobs(bound.__init__)
        bound.compile_config = _for_mlir(bound.compile_config, _compile_config)
        bound.to_code = _for_mlir(bound.to_code, _to_code)
        kernel = kernel_module.Kernel
        kernel.__call__ = _kernel_call(kernel.__call__)


def _with_our_knobs(helion_init: Callable[..., None]) -> Callable[..., None]:
    """A kernel of the mlir backend, once bound, has our knobs in its config space, and
    the search's CPU seeds (`runtime/seeds.py`), which register at the first bind: when
    `install` runs, Helion is still importing."""

    @functools.wraps(helion_init)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        _register_seeds()
        helion_init(self, *args, **kwargs)
        if self.env.backend.name == NAME:
            from helion_fx_mlir.runtime.autotune import add_knobs

            add_knobs(self.env.config_spec)

    return init


@functools.cache
def _register_seeds() -> None:
    from helion_fx_mlir.runtime.seeds import register

    register(NAME)


def _kernel_call(helion_call: Callable[..., Any]) -> Callable[..., Any]:
    """A kernel of the mlir backend first looks for its call in the disk cache
    (`runtime/launchers.py`): a new process then skips binding it."""

    @functools.wraps(helion_call)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.settings.backend != NAME:
            return helion_call(self, *args, **kwargs)
        from helion_fx_mlir.runtime.launchers import call as launch

        return launch(self, helion_call, args, kwargs)

    return call


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
