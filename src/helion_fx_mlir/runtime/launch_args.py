"""A launch's packed arguments, written into one buffer by one `struct.pack_into`.

A JIT'd func's packed C interface takes `void**`: one pointer per argument, to the
argument's value; a memref's value is a pointer to its descriptor (allocated and aligned
pointers, offset, sizes, strides). Built as one ctypes object per pointer and descriptor,
they cost about 2.5 us per tensor, most of a small kernel's launch; packed, three tensors
take about 1 us. The pointers only depend on where the buffer lies, so each thread keeps
a buffer whose pointers are written once, and a launch writes the values alone: launches
from several threads share nothing, and a launch that finds its thread's buffer taken (a
signal handler's, between another launch's packing and its call) packs a buffer of its own.
"""

from __future__ import annotations

import ctypes
import itertools
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

# The scalar arguments a func takes, as struct codes, each in a slot of 8 bytes: a kernel's
# f64 and i64 (index), and the f32 the roofline kernels take (padded to the word).
SCALAR_CODES = {torch.float64: "d", torch.int64: "q", torch.float32: "f4x"}
WORD = 8


@dataclass(frozen=True)
class ArgBlock:
    """The buffer's layout: the pointer array (one per argument, to its slot), the memrefs'
    slots (each its descriptor's address), then what each launch writes: the scalars'
    slots (the scalar itself) and the descriptors."""

    ranks: tuple[int | None, ...]  # per argument: a memref's rank, None for a scalar
    addresses: tuple[int, ...]  # the pointer array and the memrefs' slots, from the start
    head: int  # where the values start: past the pointer array and the memrefs' slots
    values: struct.Struct  # the scalars, then the descriptors
    buffer: type[ctypes.Array[ctypes.c_char]]
    _threads: threading.local = field(default_factory=threading.local, compare=False)

    @classmethod
    def of(cls, kinds: Sequence[int | torch.dtype]) -> ArgBlock:
        """`kinds`: per argument, a memref's rank or a scalar's dtype (in SCALAR_CODES)."""
        ranks = tuple(kind if isinstance(kind, int) else None for kind in kinds)
        memrefs = [rank for rank in ranks if rank is not None]
        scalars = [SCALAR_CODES[kind] for kind in kinds if not isinstance(kind, int)]
        values = struct.Struct(
            "<" + "".join(scalars) + "".join("QQq" + "q" * 2 * rank for rank in memrefs)
        )
        head = WORD * (len(ranks) + len(memrefs))
        sizes = [WORD * (3 + 2 * rank) for rank in memrefs]
        descriptors = list(itertools.accumulate(sizes, initial=head + WORD * len(scalars)))[:-1]
        memref_slots = iter(range(WORD * len(ranks), head, WORD))
        scalar_slots = iter(range(head, head + WORD * len(scalars), WORD))
        slots = [next(scalar_slots if rank is None else memref_slots) for rank in ranks]
        size = head + values.size
        return cls(ranks, (*slots, *descriptors), head, values, ctypes.c_char * size)

    def pack(self, values: Sequence[Any]) -> ctypes.Array[ctypes.c_char]:
        """A buffer of its own holding the arguments; its address is the `void**` the entry
        takes. A tensor must be contiguous, of the rank its memref has."""
        buffer = self._new_buffer()
        self._write(buffer, values)
        return buffer

    def launch(self, entry: Callable[[int], None], values: Sequence[Any]) -> None:
        """`entry` called with the arguments packed into this thread's buffer, taken for
        the launch (a launch that finds it taken packs its own)."""
        taken = self._threads.__dict__.pop("buffer", None)
        buffer = self._new_buffer() if taken is None else taken
        try:
            self._write(buffer, values)
            entry(ctypes.addressof(buffer))
        finally:
            self._threads.buffer = buffer

    def _new_buffer(self) -> ctypes.Array[ctypes.c_char]:
        """A buffer with its pointer array and memref slots written."""
        buffer = self.buffer()
        base = ctypes.addressof(buffer)
        struct.pack_into(f"<{len(self.addresses)}Q", buffer, 0, *(base + a for a in self.addresses))
        return buffer

    def _write(self, buffer: ctypes.Array[ctypes.c_char], values: Sequence[Any]) -> None:
        scalars: list[Any] = []
        memrefs: list[int] = []
        extend = memrefs.extend
        for rank, value in zip(self.ranks, values, strict=True):
            if rank is None:
                scalars.append(value)
                continue
            pointer = value.data_ptr()
            extend((pointer, pointer, 0))
            extend(value.shape)
            extend(value.stride())
        self.values.pack_into(buffer, self.head, *scalars, *memrefs)


def packed_entry(engine: Any, name: str) -> Callable[[int], None]:
    """An ExecutionEngine's func @name through its packed C interface, called with the
    address of a buffer `ArgBlock.pack` filled."""
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(f"_mlir_ciface_{name}"))
