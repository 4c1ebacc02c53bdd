"""Autotuning on the CPU with Helion's own search, and the tuned config's disk cache.

Helion's search (`LFBOTreeSearch` by default, `HELION_AUTOTUNER` picks another) drives
everything: the config space, the effort profiles, progress, the final re-timing of the
finalists. What the CPU needs from it is small: wall-clock timing (Helion's generic timer
for each candidate; there are no device events), the finalists re-timed in the steady
state kernels run in (`steady_interleaved_bench`), no precompile in forked children (our
compile runs in process; a config that fails to lower is skipped by the search's own
error handling), and a cache key that knows CPUs: Helion's local cache names only GPUs
and TPUs, so tuned configs are kept by `CPUAutotuneCache` under our cache root, keyed as
Helion keys them (kernel source, specialization, config space) plus the CPU and the
toolchain.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import statistics
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helion
from helion.autotuner import cache_classes
from helion.autotuner.base_cache import LooseAutotuneCacheKey
from helion.autotuner.benchmarking import iter_with_progress
from helion.autotuner.local_cache import LocalAutotuneCache

from helion_fx_mlir.frontend.lowering_context import KNOBS, TRITON_ONLY_KEYS
from helion_fx_mlir.host_cpu import cpu_model
from helion_fx_mlir.runtime import disk_cache
from helion_fx_mlir.runtime.backend import NAME

# Config keys that change Triton's code and not ours: the search leaves them out, and a
# config that sets them (one tuned for Triton) runs as if it did not. Helion strips such
# "common" keys from configs for backends that do not support them.
IGNORED_CONFIG_KEYS = TRITON_ONLY_KEYS | {
    "num_warps",
    "num_stages",
    "num_sm_multiplier",
    "maxnreg",
    "indexing",
    "atomic_indexing",
    "load_eviction_policies",
    "pid_type",
    "l2_groupings",
    "loop_orders",
}


def add_knobs(config_spec: Any) -> None:
    """Our knobs that change speed join the config space as tunables (a kernel's own
    tunable of the same name stays): the vector width (`passes/vector_width.py`)."""
    for key, fragment in KNOBS.items():
        config_spec.user_defined_tunables.setdefault(key, fragment)


class CPUAutotuneCache(LocalAutotuneCache):
    """Helion's local best-config cache, keyed for the CPU and kept under our cache root."""

    NAME = "helion_fx_mlir.CPUAutotuneCache"

    def _generate_key(self) -> LooseAutotuneCacheKey:
        kernel = self.kernel.kernel
        args = tuple(self.args)
        bound_key = kernel._create_bound_kernel_cache_key(
            self.kernel, args, kernel._base_specialization_key(args)
        )
        source = textwrap.dedent(inspect.getsource(kernel.fn))
        return LooseAutotuneCacheKey(
            specialization_key=bound_key.specialization_key,
            extra_results=bound_key.extra_results,
            compiler_seed_results=bound_key.compiler_seed_results,
            kernel_source_hash=hashlib.sha256(source.encode()).hexdigest(),
            hardware=f"{cpu_model()} {disk_cache.machine_id()[:16]}",
            runtime_name=f"helion-fx-mlir {disk_cache.toolchain_id()[:16]}",
            backend=self.kernel.env.backend.name,
            config_spec_hash=self.kernel.config_spec.cache_fingerprint_hash(
                advanced_controls_files=self.autotuner.settings.autotune_search_acf or None
            ),
            extra_cache_key=self.kernel.extra_cache_key(),
            best_of_k=self.autotuner.settings.autotune_best_of_k,
        )

    def _get_local_cache_path(self) -> Path:
        return disk_cache.cache_root() / "configs" / f"{self.key.stable_hash()}.best_config"


cache_classes[CPUAutotuneCache.NAME] = CPUAutotuneCache
# Helion's caches that cannot key a CPU, and the one that can in their place.
_CPU_CACHE_FOR = {"LocalAutotuneCache", "StrictLocalAutotuneCache"}


def prepare(bound_kernel: Any) -> None:
    """Settings the search needs on the CPU: configs compile in process, and tuned
    configs go to the CPU cache (a user's own cache class, e.g. a remote one, stays)."""
    settings = bound_kernel.settings
    settings.autotune_precompile = None
    if settings.autotune_cache in _CPU_CACHE_FOR:
        settings.autotune_cache = CPUAutotuneCache.NAME


EFFORTS = ("quick", "full")


def mlir_copy(kernel: Any, effort: str) -> Any:
    """The kernel on the `mlir` backend with this autotune effort, its other settings
    (static shapes, ...) and its `configs=` kept."""
    settings = dataclasses.replace(kernel.settings, backend=NAME, autotune_effort=effort)
    return helion.Kernel(kernel.fn, configs=kernel.configs, settings=settings)


def tune(kernel: Any, args: tuple[Any, ...], effort: str, force: bool = False) -> Any:
    """The best config Helion's search finds for any kernel on these arguments (searched
    as its `mlir_copy`), timing our compiled code; unless `force`, a config cached for
    this CPU is returned without searching."""
    return mlir_copy(kernel, effort).bind(args).autotune(args, force=force)


# The final re-timing: each config's calls timed back to back over about STEADY_MS a round.
STEADY_MS = 20.0
MAX_BATCH = 1000  # calls in one timed batch


def steady_interleaved_bench(
    fns: list[Callable[[], object]],
    *,
    repeat: int,
    desc: str | None = None,
    max_total_ms: float | None = None,
    **_: object,
) -> list[float]:
    """Helion's final re-timing of its finalists (median ms per call of each), in rounds as
    its generic timer takes them, but each config timed over a batch of back-to-back calls
    after one untimed call: the steady state `make bench` and a model's loop call it in.
    Timed one call at a time between the other finalists' calls, each found the caches as
    another left them, and a softmax whose stores bypass the cache won the search and ran
    10% slower than the default config in steady state."""
    first = [timed_ms(fn, 1) for fn in fns]
    batches = [calls_within(ms, STEADY_MS) for ms in first]
    if max_total_ms is not None:
        sweep = sum((batch + 1) * ms for batch, ms in zip(batches, first, strict=True))
        repeat = max(3, min(repeat, int(max_total_ms / max(sweep, 1e-3))))
    times: list[list[float]] = [[] for _ in fns]
    rounds = iter_with_progress(range(repeat), total=repeat, description=desc, enabled=bool(desc))
    for _ in rounds:
        for fn, batch, timings in zip(fns, batches, times, strict=True):
            fn()
            timings.append(timed_ms(fn, batch))
    return [statistics.median(timings) for timings in times]


def calls_within(first_ms: float, budget_ms: float) -> int:
    """Calls of a function whose first call took `first_ms` that fill about `budget_ms`
    (at least 1, at most MAX_BATCH)."""
    return max(1, min(MAX_BATCH, int(budget_ms / max(first_ms, 1e-3))))


def timed_ms(fn: Callable[[], object], calls: int) -> float:
    """ms per call of `calls` back-to-back calls (the bench's timing and the re-timing's)."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) * 1e3 / calls
