"""How to call a kernel's func: its arguments and outputs (no torch-mlir or Helion needed,
so that a kernel loaded from the disk cache never imports the frontend's machinery)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import helion
    import torch

    from helion_fx_mlir.frontend.size_checks import SizeCheck


# The func argument of a kernel with random ops: the seeds the host draws for each launch.
RNG_SEEDS = "rng_seeds"


@dataclass(frozen=True)
class KernelArgInfo:
    """One func argument: a host tensor (parameter or host-allocated) or a scalar."""

    name: str
    index: int
    is_tensor: bool
    dtype: torch.dtype
    shape: tuple[Any, ...]
    mlir_type: str
    ssa_name: str
    is_parameter: bool
    host_size: tuple[str, int] | None = None  # a size read on the host: (tensor variable, dim)


@dataclass(frozen=True)
class KernelSignature:
    """How to call the kernel's func: its name, its arguments (tensors, then scalars, in
    func order) and the tensors it returns; the config it was lowered for (resolved, so
    the host code runs with the same block sizes) and those block sizes."""

    name: str
    args: tuple[KernelArgInfo, ...]
    outputs: tuple[KernelArgInfo, ...]
    config: helion.Config
    block_sizes: dict[int, int]
    size_checks: tuple[SizeCheck, ...] = ()  # argument dims a launch must find equal
