"""Facts about Device IR graphs the emitter needs before it walks them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from helion.language import _tracing_ops, atomic_ops, memory_ops, reduce_ops, scan_ops, tile_ops
from torch import fx

# Which positional args of a control-flow op are graph ids of its sub-graphs.
SUBGRAPH_ARGS: dict[object, tuple[int, ...]] = {
    _tracing_ops._for_loop: (0,),
    _tracing_ops._for_loop_step: (0,),
    _tracing_ops._if: (1, 2),
    _tracing_ops._while_loop: (0, 1),
    reduce_ops._reduce: (0,),
    scan_ops._associative_scan: (0,),
}
# Atomics read and write, so a grid containing one is never an scf.forall.
ATOMIC_OPS = (
    atomic_ops.atomic_add,
    atomic_ops.atomic_max,
    atomic_ops.atomic_min,
    atomic_ops.atomic_and,
    atomic_ops.atomic_or,
    atomic_ops.atomic_xor,
    atomic_ops.atomic_xchg,
    atomic_ops.atomic_cas,
)
STORE_OPS = (memory_ops.store, *ATOMIC_OPS)
LOAD_OPS = (memory_ops.load, *ATOMIC_OPS)


def subgraph_ids(node: fx.Node) -> list[int]:
    """Graph ids a node calls into (loop bodies, branches, combine functions)."""
    if node.op != "call_function":
        return []
    return [node.args[i] for i in SUBGRAPH_ARGS.get(node.target, ()) if node.args[i] is not None]


def _has_tensor_index(index: object) -> bool:
    """A gather or scatter: a tensor entry other than a tile shifted the same way in every
    program (two programs' lanes then never meet)."""
    return isinstance(index, (list, tuple)) and any(
        isinstance(e, fx.Node)
        and isinstance(e.meta.get("val"), torch.Tensor)
        and not ((shifted := shifted_tile(e)) is not None and shifted.invariant)
        for e in index
    )


@dataclass(frozen=True)
class ShiftedTile:
    """An index entry `tile.index + k` (or `- k`): the tile's lanes moved by `sign` * k, an
    int, a host scalar or a 0-d integer tensor (a segment's start, loaded per program)."""

    block: fx.Node  # the tile's block-size node
    shift: int | fx.Node
    sign: int = 1

    @property
    def invariant(self) -> bool:
        """An int or a symbol (a host scalar, a block size): the same in every program."""
        return isinstance(self.shift, int) or self.shift.target is _tracing_ops._get_symnode

    @property
    def key(self) -> tuple[int, int | str]:
        """Equal for two entries that shift the same tile's lanes the same way."""
        return (self.sign, self.shift if isinstance(self.shift, int) else self.shift.name)


SHIFTS = {torch.ops.aten.add.Tensor: 1, torch.ops.aten.sub.Tensor: -1}


def shifted_tile(entry: object) -> ShiftedTile | None:
    """`tile.index + k`, `k + tile.index` or `tile.index - k`, with k an int, a symbol (an
    int argument, a block size) or a 0-d int32/int64 tensor, else None."""
    if not isinstance(entry, fx.Node) or entry.target not in SHIFTS or len(entry.args) != 2:
        return None
    if entry.kwargs.get("alpha", 1) != 1:
        return None
    base, shift = entry.args
    if SHIFTS[entry.target] == 1 and _is_tile_index(shift):
        base, shift = shift, base
    if not _is_tile_index(base) or not _is_scalar(shift):
        return None
    return ShiftedTile(base.args[0], shift, SHIFTS[entry.target])


def _is_tile_index(node: object) -> bool:
    return isinstance(node, fx.Node) and node.target is tile_ops.tile_index


def _is_scalar(value: object) -> bool:
    if isinstance(value, int):
        return not isinstance(value, bool)
    if not isinstance(value, fx.Node):
        return False
    val = value.meta.get("val")
    if isinstance(val, torch.Tensor):
        return val.dim() == 0 and val.dtype in (torch.int32, torch.int64)
    return value.target is _tracing_ops._get_symnode and isinstance(val, torch.SymInt)


def host_tensor_name(node: object) -> str | None:
    """The host variable name behind a `_host_tensor` node, else None."""
    if isinstance(node, fx.Node) and node.target is _tracing_ops._host_tensor:
        return node.args[0]
    return None


def _disjoint(a: fx.Node, b: fx.Node) -> bool:
    """Whether two stores into one tensor write apart: along some dim both subscripts are
    static (ints, slices of ints) and share no index (`out[0, t]` and `out[1, t]`)."""
    shape = a.args[0].meta["val"].shape
    entries = [[e for e in node.args[1] if e is not None] for node in (a, b)]
    for dim, extent in enumerate(shape):
        r0, r1 = (_static_range(e[dim] if dim < len(e) else slice(None), extent) for e in entries)
        if r0 is not None and r1 is not None and _apart(r0, r1):
            return True
    return False


def _apart(r0: range, r1: range) -> bool:
    """Whether two ranges share no index (contiguous ones by their ends; strided ones by
    walking the shorter)."""
    if not r0 or not r1:
        return True
    if r0.step == r1.step == 1:
        return r0.stop <= r1.start or r1.stop <= r0.start
    short, other = sorted((r0, r1), key=len)
    return not any(i in other for i in short)


def _static_range(entry: object, extent: object) -> range | None:
    """The indices a subscript entry selects along a dim of static `extent`, if static."""
    if not isinstance(extent, int):
        return None
    if isinstance(entry, int):
        return range(entry % extent, entry % extent + 1) if -extent <= entry < extent else range(0)
    if isinstance(entry, slice) and all(
        isinstance(x, int | None) for x in (entry.start, entry.stop, entry.step)
    ):
        return range(*entry.indices(extent))
    return None


@dataclass
class GraphFacts:
    """Per-graph (transitively through sub-graphs) stores, loads and host tensors."""

    graphs: Sequence[Any]
    stores: dict[int, set[str]] = field(default_factory=dict)
    loads: dict[int, set[str]] = field(default_factory=dict)
    nested_stores: dict[int, set[str]] = field(default_factory=dict)

    def nodes(self, graph_id: int) -> Iterator[fx.Node]:
        return iter(self.graphs[graph_id].graph.nodes)

    def reachable(self, roots: Sequence[int]) -> list[int]:
        """Graph ids reachable from the roots, in walk order (orphans left out)."""
        order: list[int] = []
        stack = list(reversed(roots))
        while stack:
            gid = stack.pop()
            if gid in order:
                continue
            order.append(gid)
            for node in self.nodes(gid):
                stack.extend(reversed(subgraph_ids(node)))
        return order

    def analyze(self, graph_id: int) -> None:
        """Fill stores/loads for a graph and everything it calls."""
        if graph_id in self.stores:
            return
        stores, loads, nested = set(), set(), set()
        for node in self.nodes(graph_id):
            name = host_tensor_name(node.args[0]) if node.args else None
            if node.target in STORE_OPS and name:
                stores.add(name)
            if node.target in LOAD_OPS and name:
                loads.add(name)
            for sub in subgraph_ids(node):
                self.analyze(sub)
                stores |= self.stores[sub]
                loads |= self.loads[sub]
                nested |= self.stores[sub]
        self.stores[graph_id], self.loads[graph_id], self.nested_stores[graph_id] = (
            stores,
            loads,
            nested,
        )

    def host_tensor_nodes(self, graph_ids: Sequence[int]) -> Iterator[fx.Node]:
        for gid in graph_ids:
            for node in self.nodes(gid):
                if host_tensor_name(node):
                    yield node

    def access_nodes(self, root_id: int) -> list[fx.Node]:
        """Every load, store and atomic in the graph and the graphs it calls."""
        return [
            node
            for gid in self.reachable([root_id])
            for node in self.nodes(gid)
            if node.target in STORE_OPS or node.target in LOAD_OPS
        ]

    def is_parallel(self, root_id: int) -> bool:
        """A grid can be an scf.forall when every store sits in the root graph itself, is
        a tile (not a scatter), two stores into one tensor provably write apart (the order
        of two `parallel_insert_slice`s is unspecified: `out[t, 3:]` then `out[t, -1]` must
        run in order), and no stored tensor is read back: each program then writes a
        disjoint tile."""
        self.analyze(root_id)
        stores = self.stores[root_id]
        store_nodes = [n for n in self.nodes(root_id) if n.target in STORE_OPS]
        scatters = any(_has_tensor_index(n.args[1]) for n in store_nodes)
        apart = all(
            _disjoint(a, b)
            for i, a in enumerate(store_nodes)
            for b in store_nodes[i + 1 :]
            if host_tensor_name(a.args[0]) == host_tensor_name(b.args[0])
        )
        return (
            not self.nested_stores[root_id]
            and not (stores & self.loads[root_id])
            and not scatters
            and apart
        )
