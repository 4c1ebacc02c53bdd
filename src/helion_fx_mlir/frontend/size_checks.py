"""Sizes a kernel of dynamic shapes assumes equal, checked on the host before each launch.

A row read whole (`cos[tile, :]`) under `static_shapes=False` is a tile as long as its
reduction dim, whose extent Helion takes from one tensor: other tensors that dim indexes
are assumed as long (Helion merged their `:` into one dim at the bind, where their sizes
were equal, and does not key its bound kernels by it). A call where one is not (a table of
one column beside rows of 129, which eager PyTorch would broadcast) read a shorter row,
and torch-mlir's assertion that elementwise operands agree aborted the caller's process.
Such pairs, recorded while lowering, are compared before each launch instead, with an
error naming both sizes and the kernel line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from helion_fx_mlir.errors import HelionMLIRError, source_line

if TYPE_CHECKING:
    from torch import fx

    from helion_fx_mlir.frontend.signature import KernelArgInfo


@dataclass(frozen=True)
class SizeCheck:
    """Two argument dims (argument position, dim) the code needs equal, and where."""

    first: tuple[int, int]
    second: tuple[int, int]
    where: str

    def to_json(self) -> list[Any]:
        return [list(self.first), list(self.second), self.where]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> SizeCheck:
        return cls((data[0][0], data[0][1]), (data[1][0], data[1][1]), data[2])


@dataclass(frozen=True)
class SizeRequirement:
    """Two symbolic sizes the code is generated for equal, and the node that needs it."""

    size: torch.SymInt
    extent: torch.SymInt
    node: fx.Node


def size_checks(
    requirements: Sequence[SizeRequirement], args: Sequence[KernelArgInfo]
) -> tuple[SizeCheck, ...]:
    """The requirements whose sizes are two arguments' dims (the others cannot be read on
    the host before the launch)."""
    dims = _argument_dims(args)
    checks: dict[tuple[tuple[int, int], tuple[int, int]], SizeCheck] = {}
    for req in requirements:
        a, b = dims.get(str(req.size)), dims.get(str(req.extent))
        if a is not None and b is not None and a != b:
            pair = (min(a, b), max(a, b))
            where = f"{source_line(req.node)} ({req.node.name})"
            checks.setdefault(pair, SizeCheck(*pair, where))
    return tuple(checks.values())


def check_sizes(
    name: str, checks: Sequence[SizeCheck], args: Sequence[KernelArgInfo], values: Sequence[Any]
) -> None:
    """Raise a clear error where a call's sizes break what the code assumes."""
    for check in checks:
        (i, d), (j, e) = check.first, check.second
        if values[i].shape[d] != values[j].shape[e]:
            raise HelionMLIRError(
                f"{name}: {args[i].name}.size({d}) is {values[i].shape[d]} and "
                f"{args[j].name}.size({e}) is {values[j].shape[e]}, but the kernel's code "
                f"reads them as one dim ({check.where}: static_shapes=False took them equal "
                "at the bind); other sizes there, or a size of 1 to broadcast, are not supported"
            )


def _argument_dims(args: Sequence[KernelArgInfo]) -> dict[str, tuple[int, int]]:
    """Each symbolic size an argument's dim has, by its expression's text: the first."""
    dims: dict[str, tuple[int, int]] = {}
    for position, arg in enumerate(args):
        for dim, size in enumerate(arg.shape if arg.is_tensor else ()):
            if isinstance(size, torch.SymInt):
                dims.setdefault(str(size), (position, dim))
    return dims
