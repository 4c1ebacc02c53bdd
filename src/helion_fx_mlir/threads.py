"""The OpenMP runtime multi-threaded kernels call, and how many threads they use.

`convert-openmp-to-llvm` code calls `__kmpc_*` entry points, which torch's libgomp lacks;
the pinned `intel-openmp` wheel installs `libiomp5.so`, which has them. It is loaded once,
into the global symbol namespace so that JIT-compiled code resolves against it, and each
launch runs on `torch.get_num_threads()` threads, as eager PyTorch does. Its threads wait
for the next launch spinning 1 ms, then sleep (`KMP_BLOCKTIME=1` unless the user set it):
back-to-back launches need not wake sleeping threads, and by default they would spin for
200 ms, taking the cores from the user's own PyTorch work that follows.
"""

from __future__ import annotations

import ctypes
import functools
import os
import pathlib
import sys

import torch

from .errors import HelionMLIRError

OPENMP_LIBRARY = "libiomp5.so"


def openmp_library() -> pathlib.Path:
    """libiomp5.so in this environment's lib directory (where the wheel puts it)."""
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        path = pathlib.Path(prefix, "lib", OPENMP_LIBRARY)
        if path.exists():
            return path
    raise HelionMLIRError(f"no {OPENMP_LIBRARY} under {sys.prefix}/lib: install the pinned intel-openmp "
                          "(pip install -e .) for multi-threaded kernels")


@functools.cache
def openmp_runtime() -> ctypes.CDLL:
    os.environ.setdefault("KMP_BLOCKTIME", "1")  # ms; read when the runtime starts, at its first parallel region
    return ctypes.CDLL(str(openmp_library()), mode=ctypes.RTLD_GLOBAL)


_current = [0]


def use_torch_threads() -> None:
    """Kernels launched from now on use as many threads as eager PyTorch would."""
    wanted = torch.get_num_threads()
    if wanted != _current[0]:
        openmp_runtime().omp_set_num_threads(ctypes.c_int(wanted))
        _current[0] = wanted
