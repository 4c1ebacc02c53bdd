"""A launch's packed arguments, written into one buffer by one `struct.pack_into`.

A JIT'd func's packed C interface takes `void**`: one pointer per argument, to the
argument's value; a memref's value is a pointer to its descriptor (allocated and aligned
pointers, offset, sizes, strides). Built as one ctypes object per pointer and descriptor,
they cost about 2.5 us per tensor, most of a small kernel's launch; packed, three tensors
take about 1 us. Each launch packs a buffer of its own, so launches of one kernel from
several threads share nothing.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

# The scalar arguments a func takes, as struct codes, each in a slot of 8 bytes: a kernel's
# f64 and i64 (index), and the f32 the roofline kernels take (padded to the word).
SCALAR_CODES = {torch.float64: "d", torch.int64: "q", torch.float32: "f4x"}
WORD = 8


@dataclass(frozen=True)
class ArgBlock:
    """The buffer's layout: the pointer array (one per argument, to its slot), the slots
    (a memref's descriptor address, or the scalar itself), then the descriptors."""

    ranks: tuple[int | None, ...]  # per argument: a memref's rank, None for a scalar
    layout: struct.Struct
    slots: tuple[int, ...]  # per argument: its slot's offset
    descriptors: tuple[int, ...]  # per argument: its descriptor's offset (0 for a scalar)
    buffer: type[ctypes.Array[ctypes.c_char]]

    @classmethod
    def of(cls, kinds: Sequence[int | torch.dtype]) -> ArgBlock:
        """`kinds`: per argument, a memref's rank or a scalar's dtype (in SCALAR_CODES)."""
        count = len(kinds)
        slots = tuple(WORD * (count + i) for i in range(count))
        codes, descriptors, offset = [], [], WORD * 2 * count
        for kind in kinds:
            if isinstance(kind, int):
                codes.append("Q")
                descriptors.append(offset)
                offset += WORD * (3 + 2 * kind)
            else:
                codes.append(SCALAR_CODES[kind])
                descriptors.append(0)
        memrefs = "".join("QQq" + "q" * 2 * kind for kind in kinds if isinstance(kind, int))
        layout = struct.Struct("<" + "Q" * count + "".join(codes) + memrefs)
        ranks = tuple(kind if isinstance(kind, int) else None for kind in kinds)
        return cls(ranks, layout, slots, tuple(descriptors), ctypes.c_char * layout.size)

    def pack(self, values: Sequence[Any]) -> ctypes.Array[ctypes.c_char]:
        """The arguments' buffer; its address is the `void**` the entry takes. A tensor
        must be contiguous, of the rank its memref has."""
        buffer = self.buffer()
        base = ctypes.addressof(buffer)
        fields = [base + slot for slot in self.slots]
        memrefs: list[int] = []
        for rank, value, descriptor in zip(self.ranks, values, self.descriptors, strict=True):
            if rank is None:
                fields.append(value)
                continue
            fields.append(base + descriptor)
            pointer = value.data_ptr()
            memrefs += (pointer, pointer, 0, *value.shape, *value.stride())
        self.layout.pack_into(buffer, 0, *fields, *memrefs)
        return buffer


def packed_entry(engine: Any, name: str) -> Callable[[int], None]:
    """An ExecutionEngine's func @name through its packed C interface, called with the
    address of a buffer `ArgBlock.pack` filled."""
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(f"_mlir_ciface_{name}"))
