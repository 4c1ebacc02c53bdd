"""RuleContext: what a lowering rule sees of the lowering, as JAX's `LoweringRuleContext`.

A rule receives one for its node and returns the node's value; the visitor binds it. The
state rules share (host tensors' current values, tiles, regions, the scf.forall's parallel
inserts) is read and changed only through the named methods here, never through the visitor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from typing import Any, Protocol

import torch
from torch import fx

from helion_fx_mlir.errors import mlir_location
from helion_fx_mlir.frontend.emitter import MLIRBuilder
from helion_fx_mlir.frontend.lowering_context import KernelArgInfo, LoopInfo
from helion_fx_mlir.frontend.values import LaneBound, Tile, TypedValue, Value

# (loop, begin, end[, step]) per dimension of a loop nest.
LoopBounds = Sequence[tuple[Any, ...]]
# Block id -> (parent tensor of per-row ends, the block ids of its dims).
JaggedParents = Mapping[int, tuple[Value, list[int | None]]]


class Lowering(Protocol):
    """The services a RuleContext forwards to (the visitor implements them)."""

    builder: MLIRBuilder

    def value(self, arg: Any) -> Value: ...
    def meta(self, node: fx.Node) -> Any: ...
    def bound(self, arg: Any) -> Any: ...
    def static_meta(self, val: Any) -> Any: ...
    def lower_graph(self, graph_id: int, inputs: Sequence[Value] = ()) -> list[Any]: ...
    def region(self) -> AbstractContextManager[None]: ...
    def host_tensor(self, name: str) -> Value: ...
    def host_tensors(self) -> dict[str, Value]: ...
    def set_host_tensors(self, values: Mapping[str, Value]) -> None: ...
    def add_parallel_insert(self, line: str) -> bool: ...
    def jagged_tiles(self, parents: JaggedParents) -> AbstractContextManager[None]: ...
    def graph(self, graph_id: int) -> Any: ...
    def stored_tensors(self, *graph_ids: int) -> list[str]: ...
    def origin(self, expr: Any) -> Any: ...
    def tensor_arg(self, name: str) -> KernelArgInfo: ...
    def loop_info(self, block_id: int) -> LoopInfo: ...
    def is_jagged_tile(self, block_id: int) -> bool: ...
    def extent(self, size: Any) -> Any: ...
    def tile_of(self, arg: Any) -> Tile | None: ...
    def tile(self, arg: Any) -> Tile: ...
    def active_tile(self, block_id: int) -> Tile: ...
    def looped_tile(self, size: Any) -> Tile | None: ...
    def masked_dims(self, val: Any) -> list[LaneBound]: ...
    def block_id_of(self, size: Any) -> int | None: ...
    def size_is_one(self, size: Any, block_id: int, load: bool) -> bool: ...
    def require_extent(self, size: Any, block_id: int, node: fx.Node) -> None: ...
    def block_value(self, block_id: int) -> str: ...
    def configured_block_size(self, block_id: int) -> str: ...
    def index_value(self, arg: Any) -> str: ...
    def condition(self, expr: Any) -> str: ...
    def predicate(self, value: Any) -> str: ...
    def scalar_arg(self, name: str, ty: str = "f64") -> str: ...
    def scalar_arg_as_index(self, name: str) -> str: ...
    def scalar_float(self, val: torch.SymFloat) -> str: ...
    def host_size(self, tensor: str, dim: int) -> str: ...
    def coerce(self, value: Value, ty: str) -> Value: ...
    def convert(self, value: TypedValue, dtype: torch.dtype, name: str) -> TypedValue: ...
    def unrounded_sum(self, value: Value) -> Value | None: ...
    def torch_call(self, name: str, target: Any, *args: Any, **kwargs: Any) -> TypedValue: ...
    def emit_torch_op(
        self, name: str, target: Any, args: Sequence[Any], kwargs: dict[str, Any], result: Any
    ) -> Any: ...
    def aten_compute(self, node: fx.Node) -> Any: ...
    def emit_loop_nest(
        self,
        kind: str,
        bounds: LoopBounds,
        iter_names: Sequence[str],
        inits: Sequence[Value],
        body: Callable[[list[Value]], list[Value]],
    ) -> list[Value]: ...
    def emit_scf_for(
        self,
        name: str,
        lower: str,
        upper: str,
        inits: Sequence[TypedValue],
        body: Callable[[str, list[TypedValue]], list[TypedValue]],
    ) -> list[TypedValue]: ...


class RuleContext:
    """One node's view of the lowering: the node, its operands, meta and location, the
    emitter, and named methods for the state rules share."""

    def __init__(self, node: fx.Node, lowering: Lowering) -> None:
        self.node = node
        self._lowering = lowering
        self.builder = lowering.builder

    # ------------------------------------------------------------ the node
    @cached_property
    def operands(self) -> Any:
        """The node's args with each node replaced by the value bound to it (None if none)."""
        return fx.node.map_arg(self.node.args, self.bound)

    @cached_property
    def result_meta(self) -> Any:
        """The node's meta value with block-size dims at their configured widths."""
        return self._lowering.meta(self.node)

    @property
    def location(self) -> str | None:
        return mlir_location(self.node.meta.get("location"))

    # ---------------------------------------------------------- node values
    def value(self, arg: Any) -> Value:
        """The SSA value bound to a node (an error if it has none)."""
        return self._lowering.value(arg)

    def meta(self, node: fx.Node) -> Any:
        """A node's meta value with block-size dims at their configured widths."""
        return self._lowering.meta(node)

    def typed(self, node: fx.Node) -> TypedValue:
        return TypedValue(self.value(node), self.meta(node))

    def bound(self, arg: Any) -> Any:
        """Whatever is bound to a node (value, host tensor ref, list...), or None."""
        return self._lowering.bound(arg)

    def static_meta(self, val: Any) -> Any:
        return self._lowering.static_meta(val)

    # ------------------------------------------------- regions and sub-graphs
    def lower_graph(self, graph_id: int, inputs: Sequence[Value] = ()) -> list[Any]:
        """Lower a sub-graph here; its placeholders take `inputs`; returns its outputs."""
        return self._lowering.lower_graph(graph_id, inputs)

    @contextmanager
    def region(self) -> Iterator[None]:
        """An indented region whose torch_c bridges do not leak out of it."""
        with self._lowering.region():
            yield

    # ------------------------------------------------------- shared state
    def host_tensor(self, name: str) -> Value:
        """A host tensor's current SSA value."""
        return self._lowering.host_tensor(name)

    def host_tensors(self) -> dict[str, Value]:
        """A copy of every host tensor's current value (to restore it after a branch)."""
        return self._lowering.host_tensors()

    def set_host_tensors(self, values: Mapping[str, Value]) -> None:
        """Host tensors' new current values (after a store or a loop carrying them)."""
        self._lowering.set_host_tensors(values)

    def add_parallel_insert(self, line: str) -> bool:
        """Inside scf.forall, queue a store for its in_parallel block; False outside."""
        return self._lowering.add_parallel_insert(line)

    def jagged_tiles(self, parents: JaggedParents) -> AbstractContextManager[None]:
        """Mark blocks as jagged tiles (bounded per row by a parent tensor) inside a loop."""
        return self._lowering.jagged_tiles(parents)

    # ---------------------------------------------------------- kernel facts
    def graph(self, graph_id: int) -> Any:
        """A Device IR graph info (its `.graph`, block ids, branch outputs...)."""
        return self._lowering.graph(graph_id)

    def stored_tensors(self, *graph_ids: int) -> list[str]:
        """Host tensors stored in any of these graphs, in func-argument order."""
        return self._lowering.stored_tensors(*graph_ids)

    def origin(self, expr: Any) -> Any:
        return self._lowering.origin(expr)

    def tensor_arg(self, name: str) -> KernelArgInfo:
        return self._lowering.tensor_arg(name)

    def loop_info(self, block_id: int) -> LoopInfo:
        return self._lowering.loop_info(block_id)

    def is_jagged_tile(self, block_id: int) -> bool:
        return self._lowering.is_jagged_tile(block_id)

    def extent(self, size: Any) -> Any:
        return self._lowering.extent(size)

    # ---------------------------------------------------------------- tiles
    def tile_of(self, arg: Any) -> Tile | None:
        """The tile a block-size SymInt (or its node) denotes, else None."""
        return self._lowering.tile_of(arg)

    def tile(self, arg: Any) -> Tile:
        """The tile a block-size SymInt (or its node) denotes: an error if it is none."""
        return self._lowering.tile(arg)

    def active_tile(self, block_id: int) -> Tile:
        """The current tile of a block: an error outside its loop."""
        return self._lowering.active_tile(block_id)

    def looped_tile(self, size: Any) -> Tile | None:
        return self._lowering.looped_tile(size)

    def masked_dims(self, val: Any) -> list[LaneBound]:
        return self._lowering.masked_dims(val)

    def block_id_of(self, size: Any) -> int | None:
        return self._lowering.block_id_of(size)

    def size_is_one(self, size: Any, block_id: int, load: bool) -> bool:
        """Whether a tensor dim a tile indexes has size 1 (Helion broadcasts it); a
        symbolic size is settled for a load under a guard that keys the bound kernel."""
        return self._lowering.size_is_one(size, block_id, load)

    def require_extent(self, size: Any, block_id: int, node: fx.Node) -> None:
        """A dim of `size` read whole as block `block_id`'s symbolic extent: each launch
        checks they agree (frontend/size_checks.py)."""
        self._lowering.require_extent(size, block_id, node)

    def block_value(self, block_id: int) -> str:
        return self._lowering.block_value(block_id)

    def configured_block_size(self, block_id: int) -> str:
        """The loom.get_symbol value of a block size the config sets."""
        return self._lowering.configured_block_size(block_id)

    # ------------------------------------------------------ scalars, indices
    def index_value(self, arg: Any) -> str:
        """An index SSA value for an int, a SymInt (or its node) or a sympy expression."""
        return self._lowering.index_value(arg)

    def as_index(self, value: str | int) -> str:
        return self.builder.index(value) if isinstance(value, int) else value

    def tensor_dim(self, value: Value, dim: int) -> str:
        return self.builder.tensor_dim(value.ssa, value.type, dim)

    def condition(self, expr: Any) -> str:
        """An i1 SSA value computing a SymBool's sympy expression."""
        return self._lowering.condition(expr)

    def predicate(self, value: Any) -> str:
        """An i1 SSA value with Python's truth of a bool, a scalar or a 0-d tensor."""
        return self._lowering.predicate(value)

    def scalar_arg(self, name: str, ty: str = "f64") -> str:
        return self._lowering.scalar_arg(name, ty)

    def scalar_arg_as_index(self, name: str) -> str:
        return self._lowering.scalar_arg_as_index(name)

    def scalar_float(self, val: torch.SymFloat) -> str:
        return self._lowering.scalar_float(val)

    def host_size(self, tensor: str, dim: int) -> str:
        return self._lowering.host_size(tensor, dim)

    # --------------------------------------------------------- torch ops
    def coerce(self, value: Value, ty: str) -> Value:
        """tensor.cast between static and dynamic forms of the same tensor type."""
        return self._lowering.coerce(value, ty)

    def convert(self, value: TypedValue, dtype: torch.dtype, name: str) -> TypedValue:
        return self._lowering.convert(value, dtype, name)

    def unrounded_sum(self, value: Value) -> Value | None:
        """The f32 sum an f16/bf16 sum's value was rounded from, if it is one."""
        return self._lowering.unrounded_sum(value)

    def torch_call(self, name: str, target: Any, *args: Any, **kwargs: Any) -> TypedValue:
        """One torch op on nodes or TypedValues, imported through torch-mlir."""
        return self._lowering.torch_call(name, target, *args, **kwargs)

    def emit_torch_op(
        self, name: str, target: Any, args: Sequence[Any], kwargs: dict[str, Any], result: Any
    ) -> Any:
        return self._lowering.emit_torch_op(name, target, args, kwargs, result)

    def aten_compute(self) -> Any:
        """The node as an ATen/prims op through torch-mlir (rules fall back to it)."""
        return self._lowering.aten_compute(self.node)

    # --------------------------------------------------------------- loops
    def emit_loop_nest(
        self,
        kind: str,
        bounds: LoopBounds,
        iter_names: Sequence[str],
        inits: Sequence[Value],
        body: Callable[[list[Value]], list[Value]],
    ) -> list[Value]:
        """One loop per dimension (affine.for or scf.for) with its tile, carrying `inits`."""
        return self._lowering.emit_loop_nest(kind, bounds, iter_names, inits, body)

    def emit_scf_for(
        self,
        name: str,
        lower: str,
        upper: str,
        inits: Sequence[TypedValue],
        body: Callable[[str, list[TypedValue]], list[TypedValue]],
    ) -> list[TypedValue]:
        """A plain scf.for [lower, upper) carrying `inits`."""
        return self._lowering.emit_scf_for(name, lower, upper, inits, body)
