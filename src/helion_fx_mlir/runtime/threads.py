"""The OpenMP runtime multi-threaded kernels run on, and how many threads they use.

Kernels run on torch's own libgomp (`passes/abi.py` maps the `__kmpc_*` calls MLIR's
OpenMP translation emits onto it), so a kernel and the eager operators around it share one
pool of threads: no second pool spins on the cores the other needs. The library is loaded
into the global symbol namespace, where JIT-compiled code resolves `GOMP_parallel`, and each
launch runs on `torch.get_num_threads()` threads, as eager PyTorch does.
"""

from __future__ import annotations

import ctypes
import functools
import pathlib
import threading

import torch

from helion_fx_mlir.errors import HelionMLIRError


def openmp_library() -> pathlib.Path:
    """The libgomp torch is linked against, in torch's lib directory."""
    found = sorted(pathlib.Path(torch.__file__).parent.joinpath("lib").glob("libgomp*.so*"))
    if not found:
        raise HelionMLIRError(
            "no libgomp in torch's lib directory: multi-threaded kernels need the OpenMP "
            "runtime of the pinned torch CPU wheel"
        )
    return found[0]


@functools.cache
def openmp_runtime() -> ctypes.CDLL:
    return ctypes.CDLL(str(openmp_library()), mode=ctypes.RTLD_GLOBAL)


_current = threading.local()


def use_torch_threads() -> None:
    """Kernels launched from this thread from now on use as many threads as eager PyTorch
    would (libgomp keeps the count per calling thread)."""
    wanted = torch.get_num_threads()
    if getattr(_current, "threads", 0) != wanted:
        openmp_runtime().omp_set_num_threads(ctypes.c_int(wanted))
        _current.threads = wanted
