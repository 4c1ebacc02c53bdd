"""Small value types the visitor and the lowering rules share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from helion_fx_mlir.errors import HelionMLIRError
from helion_fx_mlir.frontend.emitter import format_tensor_type, torch_dtype_to_mlir_element_type

# Half-precision floats: eager computes and accumulates them in f32.
HALVES = (torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class Value:
    """An SSA value and its MLIR type."""

    ssa: str
    type: str


@dataclass(frozen=True)
class TypedValue:
    """A value with its FX meta value (FakeTensor/SymInt), for ops built inside rules."""

    value: Value
    meta: Any


@dataclass(frozen=True)
class HostTensorRef:
    """A `_host_tensor` node: loads and stores read the tensor's current SSA value."""

    name: str


@dataclass(frozen=True)
class Tile:
    """The current tile of a block id, as Helion defines it: `width` lanes (the block
    size) starting at `offset`, of which the first `size` are in range; the others are
    masked. Each is an index SSA value or a literal."""

    offset: str | int
    size: str | int
    width: str | int
    end: str | int  # offset + size never passes it: the loop's end
    count: str | None = None  # how many tiles the loop has (`tile.count`)

    @property
    def padded(self) -> bool:
        """Whether some lanes may lie past the extent (a mask is needed)."""
        return self.size != self.width


@dataclass(frozen=True)
class LaneBound:
    """Which lanes of a value's dim are in range: those below `size`; for a jagged tile,
    those whose position (offset + lane) is below the parent tensor's element at the
    value's lanes of `parent_dims` (the dims of the parent's tiles)."""

    dim: int
    size: str | int
    parent: Value | None = None
    offset: str | int = 0
    parent_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class Slice:
    """One dimension of a load/store index: offset, in-range size (SSA or literal), kept
    or dropped."""

    offset: str | int
    size: str | int
    keep: bool
    stride: int = 1  # a strided slice (`x[1::3]`) steps through the tensor
    lane: str | int = 0  # the tile's first lane in the slice (a shifted tile's before it are off)


def mlir_type(val: Any) -> str:
    """The builtin MLIR type of an FX meta value (FakeTensor or SymInt)."""
    if isinstance(val, torch.Tensor):
        return format_tensor_type(val.shape, torch_dtype_to_mlir_element_type(val.dtype))
    if isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
        return "index"
    raise HelionMLIRError(f"no MLIR type for {type(val).__name__}")


def tensor_dims(mlir_tensor_type: str) -> list[str]:
    """'tensor<4x?xf32>' -> ['4', '?']."""
    return mlir_tensor_type[len("tensor<") : -1].split("x")[:-1]


def element_type(mlir_tensor_type: str) -> str:
    """'tensor<4x?xf32>' -> 'f32'."""
    return mlir_tensor_type[len("tensor<") : -1].rsplit("x", maxsplit=1)[-1]
