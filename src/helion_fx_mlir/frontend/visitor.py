"""IRVisitor: walks Device IR graphs from the roots and emits MLIR through MLIRBuilder.

Dispatch goes through `dispatch.LOWERINGS`, a table from FX target to rule (rules live
in `rules/`, registered by `@lowers`), the way torch-mlir's importer and JAX's lowering
rules work. ATen/prims overloads without a rule of their own go to torch-mlir. A rule
gets a RuleContext for its node and returns the node's value, which the visitor binds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from typing import Any

import sympy
import torch
from helion._compiler.inductor_lowering import PointwiseLowering
from helion._compiler.variable_origin import BlockSizeOrigin, Origin
from helion.language import _tracing_ops
from torch import fx

from helion_fx_mlir.errors import HelionMLIRError, InternalError, LoweringError, mlir_location
from helion_fx_mlir.frontend import aten_import, symbols
from helion_fx_mlir.frontend.dispatch import LOWERINGS, Rule
from helion_fx_mlir.frontend.emitter import is_concrete_size, result_name, results_name
from helion_fx_mlir.frontend.lowering_context import (
    KernelArgInfo,
    LoopInfo,
    LoweringContext,
    RootInfo,
)
from helion_fx_mlir.frontend.rule_context import JaggedParents, LoopBounds, RuleContext
from helion_fx_mlir.frontend.rules import aten_compute
from helion_fx_mlir.frontend.values import (
    HALVES,
    LaneBound,
    Tile,
    TypedValue,
    Value,
    element_type,
    mlir_type,
    tensor_dims,
)
from helion_fx_mlir.mlir.attributes import (
    INDEPENDENT_PROGRAMS,
    STREAMING_STORES,
    STREAMING_STORES_KEY,
    VECTOR_WIDTH,
    VECTOR_WIDTH_KEY,
    VECTOR_WIDTHS,
)

# Sums eager accumulates in f32 for f16/bf16 inputs (their `dtype` argument unset).
WIDENED_SUMS = frozenset({torch.ops.aten.sum.dim_IntList})

# Ops that only move or pick values (or read uint8 as a mask): their uint8 operands are
# not widened to int32.
_aten = torch.ops.aten
VALUE_MOVES = frozenset(
    {
        torch.ops.prims.convert_element_type.default,
        _aten._to_copy.default,
        _aten.view.default,
        _aten._unsafe_view.default,
        _aten.reshape.default,
        _aten.permute.default,
        _aten.transpose.int,
        _aten.t.default,
        _aten.expand.default,
        _aten.slice.Tensor,
        _aten.select.int,
        _aten.squeeze.default,
        _aten.squeeze.dim,
        _aten.squeeze.dims,
        _aten.unsqueeze.default,
        _aten.clone.default,
        _aten.cat.default,
        _aten.stack.default,
        _aten.flip.default,
        _aten.index.Tensor,
        _aten.index_put.default,
        _aten.alias.default,
    }
)


class IRVisitor:
    """Emits one func for a bound kernel: grids, loops, slices and torch ops."""

    def __init__(self, ctx: LoweringContext) -> None:
        self.ctx = ctx
        self.builder = ctx.builder
        self.node_values: dict[fx.Node, Any] = {}
        self.tiles: dict[int, Tile] = {}
        self.tensor_state: dict[str, Value] = {}
        # inside scf.forall: the stores its in_parallel block makes
        self.parallel_inserts: list[str] | None = None
        self.block_size_ssa: dict[int, str] = {}
        # torch_c bridges visible in the current region and those enclosing it.
        self.bridges: list[dict[str, str]] = [{}]
        self.static_metas: dict[fx.Node, Any] = {}
        # hl.jagged_tile loops: block id -> (parent tensor of per-row ends, its dims' block ids).
        self.jagged_parents: dict[int, tuple[Value, list[int | None]]] = {}
        # f16/bf16 sums accumulated in f32: the rounded value's SSA -> the f32 sum
        self.wide_sums: dict[str, Value] = {}

    @contextmanager
    def region(self) -> Iterator[None]:
        """An indented region with its own torch_c bridges."""
        self.builder.push()
        self.bridges.append({})
        try:
            yield
        finally:
            self.bridges.pop()
            self.builder.pop()

    # ----------------------------------------------------------------- driver
    def lower(self) -> str:
        b, ctx = self.builder, self.ctx
        attrs = {"helion.kernel": f'"{ctx.kernel_name}"'}
        attrs |= {
            f"loom.block_size_{bid}": f"{v} : index"
            for bid, v in sorted(ctx.block_size_values.items())
        }
        if (width := ctx.config.config.get(VECTOR_WIDTH_KEY, VECTOR_WIDTHS[0])) != VECTOR_WIDTHS[0]:
            attrs[VECTOR_WIDTH] = f"{width} : i64"
        if (streams := ctx.config.config.get(STREAMING_STORES_KEY, "auto")) != "auto":
            attrs[STREAMING_STORES] = f"{int(streams == 'on')} : i64"
        b.location = mlir_location(ctx.bound_kernel.host_function.location)
        b.emit_module_start(attrs)
        outputs = ctx.output_args
        b.emit_func_start(
            ctx.kernel_name,
            [(a.ssa_name, a.mlir_type) for a in ctx.kernel_args],
            [a.mlir_type for a in outputs],
        )
        for arg in ctx.kernel_args:
            if arg.is_tensor:
                self.tensor_state[arg.name] = Value(arg.ssa_name, arg.mlir_type)
        for bid in sorted(ctx.block_size_values):
            ssa = b.fresh(f"block_size_{bid}")
            b.emit(f'{ssa} = "loom.get_symbol"() {{name = "block_size_{bid}"}} : () -> index')
            self.block_size_ssa[bid] = ssa
        for root in ctx.roots:
            self.visit_root(root)
        finals = [self.tensor_state[a.name] for a in outputs]
        b.emit_func_end([v.ssa for v in finals], [v.type for v in finals])
        b.emit_module_end()
        return b.text()

    def visit_root(self, root: RootInfo) -> None:
        """A grid: scf.forall when stores allow it, else a sequential scf.for nest."""
        self.builder.location = mlir_location(root.location) or self.builder.location
        stored = self.ctx.stored_tensors(root.graph_id)
        bounds = root.bounds(self.ctx.block_sizes)
        if self.ctx.facts.is_parallel(root.graph_id):
            self.emit_forall(root, bounds, stored)
        else:
            carried = [self.tensor_state[t] for t in stored]
            results = self.emit_loop_nest(
                "scf",
                bounds,
                [f"{t}_iter" for t in stored],
                carried,
                lambda names: self._visit_root_body(root, stored, names),
                self.ctx.independent_axes(root),
            )
            self.tensor_state.update(zip(stored, results))

    def _visit_root_body(
        self, root: RootInfo, stored: list[str], names: list[Value]
    ) -> list[Value]:
        self.tensor_state.update(zip(stored, names))
        self.lower_graph(root.graph_id)
        return [self.tensor_state[t] for t in stored]

    def emit_forall(
        self, root: RootInfo, bounds: list[tuple[LoopInfo, Any, Any]], stored: list[str]
    ) -> None:
        b = self.builder
        trips = [self.emit_trip_count(loop, begin, end) for loop, begin, end in bounds]
        ivs = [b.fresh(loop.iv_name.lstrip("%")) for loop, _, _ in bounds]
        outs = [Value(b.fresh(f"{t}_out"), self.tensor_state[t].type) for t in stored]
        result = b.fresh(f"{root.loops[0].name}_grid" if root.loops else "grid")
        head = f"scf.forall ({', '.join(ivs)}) in ({', '.join(trips)})"
        if outs:
            shared = ", ".join(
                f"{o.ssa} = {self.tensor_state[t].ssa}" for o, t in zip(outs, stored)
            )
            types = ", ".join(o.type for o in outs)
            head = f"{results_name(result, len(outs))} = {head} shared_outs({shared}) -> ({types})"
        b.emit(head + " {")
        with self.region():
            saved_tiles = dict(self.tiles)
            for (loop, begin, end), iv, trip in zip(bounds, ivs, trips):
                self.tiles[loop.block_id] = dataclasses.replace(
                    self.emit_tile(loop, iv, begin, end), count=trip
                )
            self.tensor_state.update(zip(stored, outs))
            self.parallel_inserts = []
            self.lower_graph(root.graph_id)
            b.emit("scf.forall.in_parallel {")
            b.push()
            for line in self.parallel_inserts:
                b.emit(line)
            b.pop()
            b.emit("}")
            self.parallel_inserts = None
            self.tiles = saved_tiles
        b.emit("}")
        for i, (t, o) in enumerate(zip(stored, outs)):
            self.tensor_state[t] = Value(result_name(result, i, len(outs)), o.type)

    # ------------------------------------------------------------- loop nests
    def emit_loop_nest(
        self,
        kind: str,
        bounds: LoopBounds,
        iter_names: Sequence[str],
        inits: Sequence[Value],
        body: Callable[[list[Value]], list[Value]],
        independent: AbstractSet[int] = frozenset(),
    ) -> list[Value]:
        """One loop per dimension (affine.for or scf.for) carrying `inits`; returns results.
        The loops of the `independent` block ids are marked as running their programs in
        any order (`helion-parallelize-independent-grids`)."""
        saved_tiles = dict(self.tiles)
        results = self._loop_level(kind, bounds, iter_names, list(inits), body, independent)
        self.tiles = saved_tiles
        return results

    def _loop_level(
        self,
        kind: str,
        bounds: LoopBounds,
        iter_names: Sequence[str],
        current: list[Value],
        body: Callable[[list[Value]], list[Value]],
        independent: AbstractSet[int],
    ) -> list[Value]:
        """The outermost loop of `bounds` with the others inside it; the body innermost."""
        if not bounds:
            return [self.coerce(y, c.type) for y, c in zip(body(current), current)]
        b = self.builder
        loop, begin, end, *step = bounds[0]
        trip = self.emit_trip_count(loop, begin, end, *step)
        iv = b.fresh(loop.iv_name.lstrip("%"))
        names = [b.fresh(n if len(bounds) == 1 else f"{n}_outer") for n in iter_names]
        result = b.fresh(f"{loop.name}_loop")
        carried = [(n, v.ssa, v.type) for n, v in zip(names, current)]
        b.open_for(kind, iv, trip, result, carried)
        with self.region():
            self.tiles[loop.block_id] = dataclasses.replace(
                self.emit_tile(loop, iv, begin, end, *step), count=trip
            )
            inner = [Value(n, v.type) for n, v in zip(names, current)]
            yields = self._loop_level(kind, bounds[1:], iter_names, inner, body, independent)
            b.loop_yield(kind, [(y.ssa, y.type) for y in yields])
        b.emit(f"}} {{{INDEPENDENT_PROGRAMS}}}" if loop.block_id in independent else "}")
        return [Value(result_name(result, i, len(current)), v.type) for i, v in enumerate(current)]

    def emit_scf_for(
        self,
        name: str,
        lower: str,
        upper: str,
        inits: Sequence[TypedValue],
        body: Callable[[str, list[TypedValue]], list[TypedValue]],
    ) -> list[TypedValue]:
        """A plain scf.for [lower, upper) carrying `inits`, for loops rules make themselves."""
        b = self.builder
        iv, result = b.fresh(f"{name}_iv"), b.fresh(f"{name}_loop")
        names = [b.fresh(f"{name}_carry") for _ in inits]
        carried = [(n, t.value.ssa, t.value.type) for n, t in zip(names, inits)]
        b.open_for("scf", iv, upper, result, carried, lower)
        with self.region():
            outs = body(
                iv, [TypedValue(Value(n, t.value.type), t.meta) for n, t in zip(names, inits)]
            )
            yields = [self.coerce(o.value, t.value.type) for o, t in zip(outs, inits, strict=True)]
            b.loop_yield("scf", [(y.ssa, y.type) for y in yields])
        b.emit("}")
        return [
            TypedValue(Value(result_name(result, i, len(inits)), t.value.type), t.meta)
            for i, t in enumerate(inits)
        ]

    def _bound(self, value: Any, symbols: list[str]) -> str:
        """An affine expression term for a loop bound: a literal, or a new symbol."""
        if isinstance(value, int):
            return str(value)
        symbols.append(self.index_value(value))
        return f"s{len(symbols) - 1}"

    def emit_trip_count(self, loop: LoopInfo, begin: Any, end: Any, step: Any = None) -> str:
        """ceildiv(end - begin, step); the step is the block size unless given."""
        syms = [self.block_value(loop.block_id)]
        lo, hi = self._bound(begin, syms), self._bound(end, syms)
        stride = "s0" if step is None else self._bound(step, syms)
        if isinstance(begin, int) and isinstance(end, int):
            extent = str(end - begin)
        else:
            extent = hi if lo == "0" else f"({hi} - {lo})"
        ssa = self.builder.fresh(f"{loop.name}_trips")
        sym_list = ", ".join(f"s{i}" for i in range(len(syms)))
        trips = f"affine_map<()[{sym_list}] -> ({extent} ceildiv {stride})>"
        self.builder.emit(f"{ssa} = affine.apply {trips}()[{', '.join(syms)}]")
        return ssa

    def emit_tile(self, loop: LoopInfo, iv: str, begin: Any, end: Any, step: Any = None) -> Tile:
        """Offset = begin + iv * step (step = block); `block` lanes, of which the first
        min(block, end - offset) are in range (all of them when the extent divides)."""
        b = self.builder
        width = self.ctx.block_size_values.get(loop.block_id)
        syms = [self.block_value(loop.block_id)]
        lo, hi = self._bound(begin, syms), self._bound(end, syms)
        stride = "s0" if step is None else self._bound(step, syms)
        sym_list = ", ".join(f"s{i}" for i in range(len(syms)))
        start = f"d0 * {stride}" if lo == "0" else f"d0 * {stride} + {lo}"
        remaining = f"{hi} - d0 * {stride}" if lo == "0" else f"{hi} - {lo} - d0 * {stride}"
        if isinstance(begin, int) and isinstance(end, int):
            remaining = f"{end - begin} - d0 * {stride}"
        offset, size = b.fresh(f"{loop.name}_offset"), b.fresh(f"{loop.name}_size")
        operands = f"({iv})[{', '.join(syms)}]"
        b.emit(f"{offset} = affine.apply affine_map<(d0)[{sym_list}] -> ({start})>{operands}")
        bound = end if isinstance(end, int) else syms[int(hi[1:])]
        if step is not None:
            width = 1
        elif (
            isinstance(begin, int)
            and isinstance(end, int)
            and isinstance(width, int)
            and (end - begin) % width == 0
        ):
            return Tile(offset, width, width, bound)
        b.emit(f"{size} = affine.min affine_map<(d0)[{sym_list}] -> (s0, {remaining})>{operands}")
        return Tile(offset, size, size if width is None else width, bound)

    # ---------------------------------------------------------- shared state
    def host_tensor(self, name: str) -> Value:
        return self.tensor_state[name]

    def host_tensors(self) -> dict[str, Value]:
        return dict(self.tensor_state)

    def set_host_tensors(self, values: Mapping[str, Value]) -> None:
        self.tensor_state.update(values)

    def add_parallel_insert(self, line: str) -> bool:
        if self.parallel_inserts is None:
            return False
        self.parallel_inserts.append(line)
        return True

    @contextmanager
    def jagged_tiles(self, parents: JaggedParents) -> Iterator[None]:
        self.jagged_parents.update(parents)
        try:
            yield
        finally:
            for block_id in parents:
                del self.jagged_parents[block_id]

    # ----------------------------------------------------------- kernel facts
    def graph(self, graph_id: int) -> Any:
        return self.ctx.graphs[graph_id]

    def stored_tensors(self, *graph_ids: int) -> list[str]:
        stored = {t for gid in graph_ids for t in self.ctx.stored_tensors(gid)}
        return [a.name for a in self.ctx.kernel_args if a.is_tensor and a.name in stored]

    def origin(self, expr: Any) -> Origin | None:
        return self.ctx.origin(expr)

    def dynamic_dim(self, symbol: Any) -> tuple[str, int] | None:
        return self.ctx.dynamic_dim(symbol)

    def tensor_arg(self, name: str) -> KernelArgInfo:
        return self.ctx.tensor_arg(name)

    def loop_info(self, block_id: int) -> LoopInfo:
        """An inner `hl.tile` loop's dimension."""
        return LoopInfo(
            block_id,
            self.ctx.loop_name(block_id),
            self.ctx.block_size_values.get(block_id),
            None,
            f"%iv_block{block_id}",
        )

    def is_jagged_tile(self, block_id: int) -> bool:
        return bool(self.ctx.bound_kernel.env.is_jagged_tile(block_id))

    def extent(self, size: Any) -> Any:
        return self.ctx.extent(size)

    def configured_block_size(self, block_id: int) -> str:
        if block_id not in self.block_size_ssa:
            raise HelionMLIRError(f"block {block_id} has no block size in this config")
        return self.block_size_ssa[block_id]

    # ------------------------------------------------------------ graph walk
    def lower_graph(self, graph_id: int, inputs: Sequence[Value] = ()) -> list[Any]:
        """Visit a graph's nodes; placeholders take `inputs`; returns the output values."""
        placeholders = iter(inputs)
        for node in self.ctx.graphs[graph_id].graph.nodes:
            if node.op == "placeholder":
                self.node_values[node] = next(placeholders)
            elif node.op == "output":
                return [
                    self.node_values.get(n) if isinstance(n, fx.Node) else n
                    for n in (node.args[0] or [])
                ]
            else:
                self.visit_node(node)
        return []

    def visit_node(self, node: fx.Node) -> None:
        """Bind the value the node's rule returns; its ops carry the node's kernel line."""
        cx = RuleContext(node, self)
        outer = self.builder.location
        self.builder.location = cx.location or outer
        try:
            self.node_values[node] = _lowered(cx)
        finally:
            self.builder.location = outer

    def bound(self, arg: Any) -> Any:
        """Whatever a node's rule returned (None for a non-node or an unvisited node)."""
        return self.node_values.get(arg) if isinstance(arg, fx.Node) else None

    def meta(self, node: fx.Node) -> Any:
        """The node's meta value with every block-size dim at its configured width: tile
        values have the static block shape (`tensor<16x128xf32>`), as in Helion."""
        if node not in self.static_metas:
            self.static_metas[node] = self._broadcast_wider(
                node, self.static_meta(node.meta.get("val"))
            )
        return self.static_metas[node]

    def _broadcast_wider(self, node: fx.Node, val: Any) -> Any:
        """A pointwise result as wide as its operands broadcast: a tile of block size 1
        times a tile of 32 (`w[order, c] * t` in `hl.tile(2, n, block_size=1)`) has the
        first operand's symbolic size in its meta, but reference mode and Triton broadcast."""
        if not isinstance(val, torch.Tensor) or not isinstance(
            node.meta.get("lowering"), PointwiseLowering
        ):
            return val
        shapes = [
            list(a.shape)
            for a in map(self.meta, node.all_input_nodes)
            if isinstance(a, torch.Tensor) and a.dim() == val.dim()
        ]
        if not all(isinstance(size, int) for shape in [list(val.shape), *shapes] for size in shape):
            return val
        try:
            wide = list(torch.broadcast_shapes(val.shape, *shapes))
        except RuntimeError:
            return val
        if wide == list(val.shape):
            return val
        with val.fake_mode:
            return torch.empty(wide, dtype=val.dtype)

    def static_meta(self, val: Any) -> Any:
        if isinstance(val, (list, tuple)):
            return type(val)(self.static_meta(x) for x in val)
        if not isinstance(val, torch.Tensor):
            return val
        shape = [self.static_size(s) for s in val.shape]
        if all(a is b for a, b in zip(shape, val.shape)):  # `==` would guard on SymInt hints
            return val
        with val.fake_mode:
            return torch.empty(shape, dtype=val.dtype)

    def static_size(self, size: Any) -> Any:
        """A SymInt of block sizes only, as an int (the configured widths); else as is."""
        if not isinstance(size, torch.SymInt):
            return size
        expr = size.node.expr
        widths = {}
        for sym in expr.free_symbols:
            origin = self.ctx.origin(sym)
            if (
                not isinstance(origin, BlockSizeOrigin)
                or origin.block_id not in self.ctx.block_size_values
            ):
                return size
            widths[sym] = self.ctx.block_size_values[origin.block_id]
        return int(expr.xreplace(widths))

    def value(self, arg: Any) -> Value:
        """The SSA value of a node argument."""
        found = self.node_values.get(arg) if isinstance(arg, fx.Node) else None
        if not isinstance(found, Value):
            raise HelionMLIRError(f"argument {arg} has no tensor value here")
        return found

    # -------------------------------------------------------------- symbols
    def index_value(self, arg: Any) -> str:
        """An index SSA value for an int, a SymInt node, a SymInt or a sympy expression."""
        if isinstance(arg, fx.Node):
            known = self.node_values.get(arg)
            if isinstance(known, Value) and known.type == "index":
                return known.ssa
            if (
                isinstance(known, Value)
                and tensor_dims(known.type) == []
                and known.type.startswith("tensor<")
            ):
                return self.extract_index(known, arg.name)
            arg = arg.meta["val"]
        if is_concrete_size(arg):
            return self.builder.index(arg)
        expr = arg.node.expr if isinstance(arg, torch.SymInt) else arg
        return symbols.emit_expr(self, sympy.sympify(expr))

    def extract_index(self, value: Value, name: str) -> str:
        """A 0-d integer tensor (a data-dependent loop bound) as an index."""
        elt = element_type(value.type)
        raw, ssa = self.builder.fresh(f"{name}_elt"), self.builder.fresh(f"{name}_index")
        self.builder.emit(f"{raw} = tensor.extract {value.ssa}[] : {value.type}")
        self.builder.emit(f"{ssa} = arith.index_cast {raw} : {elt} to index")
        return ssa

    def condition(self, expr: Any) -> str:
        return symbols.emit_condition(self, expr)

    def scalar_arg(self, name: str, ty: str = "f64") -> str:
        """A host scalar (kernel parameter or host variable, e.g. a block size computed from
        a tunable) as an `i64`/`f64` value: a func argument, added on first use and read
        from the host code's variables at launch."""
        arg = next((a for a in self.ctx.kernel_args if a.name == name and not a.is_tensor), None)
        if arg is None:
            ssa = self.builder.add_func_arg(name, ty)
            dtype = torch.float64 if ty == "f64" else torch.int64
            arg = KernelArgInfo(name, len(self.ctx.kernel_args), False, dtype, (), ty, ssa, False)
            self.ctx.kernel_args.append(arg)
        if arg.mlir_type == ty:
            return arg.ssa_name
        if ty == "f64":
            return self.builder.hoist(f"arith.sitofp {arg.ssa_name} : i64 to f64", f"{name}_f64")
        raise HelionMLIRError(
            f"'{name}' is a float on the host but is used as an integer on the device"
        )

    def arg_dim(self, name: str, dim: int) -> str:
        """Runtime size of a dynamic func-argument dim, read once at the top of the func."""
        arg = self.ctx.tensor_arg(name)
        return self.builder.hoist(
            f"tensor.dim {arg.ssa_name}, {self.builder.index(dim)} : {arg.mlir_type}",
            f"{name}_dim{dim}",
        )

    def host_size(self, tensor: str, dim: int) -> str:
        """A dynamic size of a host tensor that is no func argument (behind a view): an
        extra i64 argument, read from the tensor when the kernel is launched."""
        for arg in self.ctx.kernel_args:
            if arg.host_size == (tensor, dim):
                return self.builder.hoist(
                    f"arith.index_cast {arg.ssa_name} : i64 to index", f"{arg.name}_index"
                )
        ssa = self.builder.add_func_arg(f"{tensor}_size{dim}", "i64")
        name = ssa.lstrip("%")
        self.ctx.kernel_args.append(
            KernelArgInfo(
                name,
                len(self.ctx.kernel_args),
                False,
                torch.int64,
                (),
                "i64",
                ssa,
                False,
                (tensor, dim),
            )
        )
        return self.host_size(tensor, dim)

    def active_tile(self, block_id: int) -> Tile:
        if block_id not in self.tiles:
            raise HelionMLIRError(f"the tile of block {block_id} is used outside its loop")
        return self.tiles[block_id]

    def block_value(self, block_id: int) -> str:
        """The block's size: configured, or computed by the host code (a func argument);
        without one, the active tile's width, or a persistent rdim's extent."""
        if block_id in self.block_size_ssa:
            return self.block_size_ssa[block_id]
        if block_id in self.ctx.host_block_sizes:
            return self.index_value(self.ctx.host_block_sizes[block_id])
        if block_id in self.tiles:
            return self.as_index(self.tiles[block_id].width)
        info = self.ctx.block_sizes[block_id]
        if info.reduction:
            return self.index_value(info.size)
        raise HelionMLIRError(f"block {block_id} has no constant block size in this config")

    def as_index(self, value: str | int) -> str:
        return self.builder.index(value) if isinstance(value, int) else value

    def scalar_arg_as_index(self, name: str) -> str:
        arg = self.scalar_arg(name, "i64")
        return self.builder.hoist(f"arith.index_cast {arg} : i64 to index", f"{name}_index")

    def looped_tile(self, size: Any) -> Tile | None:
        """The tile of a block-size SymInt whose block has a loop here (e.g. a rolled rdim)."""
        if not isinstance(size, torch.SymInt):
            return None
        origin = self.ctx.origin(size.node.expr)
        return self.tiles.get(origin.block_id) if isinstance(origin, BlockSizeOrigin) else None

    def tile_of(self, arg: Any) -> Tile | None:
        """The tile a block-size SymInt (or a node of one) denotes: the active tile of its
        block, a persistent rdim's whole extent (padded to its width), or a block used as
        a plain size (every lane in range)."""
        val = arg.meta.get("val") if isinstance(arg, fx.Node) else arg
        if isinstance(arg, fx.Node) and arg.target is _tracing_ops._get_symnode and val == 1:
            return Tile(0, 1, 1, 1)  # the block var of an extent-1 axis is the literal 1
        if not isinstance(val, torch.SymInt):
            return None
        origin = self.ctx.origin(val.node.expr)
        if not isinstance(origin, BlockSizeOrigin):
            return None
        if origin.block_id in self.tiles:
            return self.tiles[origin.block_id]
        info = self.ctx.block_sizes[origin.block_id]
        width = self.ctx.block_size_values.get(origin.block_id)
        if info.reduction:
            extent = info.size if isinstance(info.size, int) else self.index_value(info.size)
            return Tile(0, extent, extent if width is None else width, extent)
        size = self.block_value(origin.block_id) if width is None else width
        return Tile(0, size, size, size)

    def tile(self, arg: Any) -> Tile:
        """The tile a block-size SymInt (or its node) denotes: an error if it is none."""
        tile = self.tile_of(arg)
        if tile is None:
            raise HelionMLIRError(f"{arg} is not the size of a tile here")
        return tile

    def masked_dims(self, val: Any) -> list[LaneBound]:
        """The bound of each dim of a tile value whose lanes may be padding (past the
        extent, or past a jagged row's end): read off the symbolic meta, whose dims are
        block-size SymInts."""
        shape = getattr(val, "shape", ())
        blocks = [self.block_id_of(size) for size in shape]
        found = []
        for dim, block_id in enumerate(blocks):
            if block_id is None or not (
                block_id in self.tiles or self.ctx.block_sizes[block_id].reduction
            ):
                continue
            tile = self.tile(shape[dim])
            if block_id in self.jagged_parents:
                parent, parent_blocks = self.jagged_parents[block_id]
                if any(b not in blocks for b in parent_blocks):
                    raise HelionMLIRError(
                        f"a jagged tile (block {block_id}) is used without its parent tile's dims"
                    )
                found.append(
                    LaneBound(
                        dim,
                        tile.size,
                        parent,
                        tile.offset,
                        tuple(blocks.index(b) for b in parent_blocks),
                    )
                )
            elif tile.padded:
                found.append(LaneBound(dim, tile.size))
        return found

    def size_is_one(self, size: Any, block_id: int, load: bool) -> bool:
        return self.ctx.size_is_one(size, block_id, load)

    def require_extent(self, size: Any, block_id: int, node: fx.Node) -> None:
        self.ctx.require_extent(size, block_id, node)

    def block_id_of(self, size: Any) -> int | None:
        """The block id whose size SymInt this is, else None."""
        if not isinstance(size, torch.SymInt):
            return None
        origin = self.ctx.origin(size.node.expr)
        return origin.block_id if isinstance(origin, BlockSizeOrigin) else None

    # -------------------------------------------------------------- casting
    def coerce(self, value: Value, ty: str) -> Value:
        """tensor.cast between static and dynamic forms of the same tensor type."""
        if value.type == ty:
            return value
        ssa = self.builder.fresh(f"{value.ssa.lstrip('%')}_cast")
        self.builder.emit(f"{ssa} = tensor.cast {value.ssa} : {value.type} to {ty}")
        return Value(ssa, ty)

    def convert(self, value: TypedValue, dtype: torch.dtype, name: str) -> TypedValue:
        """prims.convert_element_type when the dtype differs (stores cast, as Helion's do)."""
        if value.meta.dtype == dtype:
            return value
        return self.torch_call(
            f"{name}_cast", torch.ops.prims.convert_element_type.default, value, dtype
        )

    # ----------------------------------------------------------------- ATen
    def aten_compute(self, node: fx.Node) -> Any:
        """A node as an ATen/prims op through torch-mlir (the rule of overloads without one)."""
        return aten_compute(RuleContext(node, self))

    def emit_torch_op(
        self, name: str, target: Any, args: Sequence[Any], kwargs: dict[str, Any], result: Any
    ) -> Any:
        if target in WIDENED_SUMS and "dtype" not in kwargs and _half_operand(args[0]):
            return self._widened_sum(name, target, args, kwargs, result)
        if (
            target not in VALUE_MOVES
            and isinstance(result, torch.Tensor)
            and any(_unsigned_operand(a) for a in _leaves([*args, *kwargs.values()]))
        ):
            return self._unsigned_widened(name, target, args, kwargs, result)
        by_node: dict[object, aten_import.Operand] = {}

        def operand(arg: Any) -> Any:
            if isinstance(arg, TypedValue):
                key = arg.value.ssa
                if key not in by_node:
                    by_node[key] = aten_import.Operand(arg.meta, arg.value.ssa, arg.value.type)
                return by_node[key]
            if isinstance(arg, fx.Node) and isinstance(
                width := self.static_size(arg.meta.get("val")), int
            ):
                return width
            if isinstance(arg, fx.Node):
                # two nodes of one value (`t1 = t0` is a _new_var) are one operand: the
                # import names each operand after its bridged value
                value = self.node_values.get(arg)
                key = value.ssa if isinstance(value, Value) else arg
                if key not in by_node:
                    by_node[key] = self.torch_operand(arg)
                return by_node[key]
            if isinstance(arg, (list, tuple)):
                return type(arg)(operand(a) for a in arg)
            return arg

        op_args = [operand(a) for a in args]
        op_kwargs = {k: operand(v) for k, v in kwargs.items()}
        operands = list(by_node.values())
        imported = aten_import.import_aten(target, op_args, op_kwargs, operands, result)
        bridged = [self.to_torch(o, t) for o, t in zip(operands, imported.input_types, strict=True)]
        inlined = aten_import.inline(
            imported, bridged, name, self.builder.fresh, self.builder.reserve
        )
        for line in inlined.lines:
            self.builder.emit(line)
        results = result if isinstance(result, (list, tuple)) else [result]
        values = [
            self.from_torch(name, r, t, val)
            for r, t, val in zip(inlined.results, inlined.result_types, results, strict=True)
        ]
        return values if isinstance(result, (list, tuple)) else values[0]

    def _widened_sum(
        self, name: str, target: Any, args: Sequence[Any], kwargs: dict[str, Any], result: Any
    ) -> Value:
        """A sum of f16/bf16 accumulated in f32 and rounded once, as eager's: torch-mlir
        adds in the dtype, and a bf16 row of 8192 x 0.1 summed to 512 (eager 820)."""
        with result.fake_mode:
            wide = torch.empty_like(result, dtype=torch.float32)
        total = self.emit_torch_op(
            f"{name}_f32", target, args, {**kwargs, "dtype": wide.dtype}, wide
        )
        rounded = self.convert(TypedValue(total, wide), result.dtype, name).value
        self.wide_sums[rounded.ssa] = total
        return rounded

    def _unsigned_widened(
        self, name: str, target: Any, args: Sequence[Any], kwargs: dict[str, Any], result: Any
    ) -> Value:
        """The op on uint8 operands extended to int32, its result converted back to the
        op's dtype (mod 256 for a uint8 result, as eager wraps): torch-mlir extends ui8 with
        extsi/sitofp and divides, compares and takes abs signed, so a uint8 row of values
        >= 128 summed negative and `u8 * f32` read 200 as -56."""

        def widen(arg: Any) -> Any:
            if isinstance(arg, (list, tuple)):
                return type(arg)(widen(a) for a in arg)
            if not _unsigned_operand(arg):
                return arg
            typed = (
                arg if isinstance(arg, TypedValue) else TypedValue(self.value(arg), self.meta(arg))
            )
            return self.convert(typed, torch.int32, f"{name}_u8")

        wide = self.torch_call(
            name, target, *widen(list(args)), **{k: widen(v) for k, v in kwargs.items()}
        )
        return self.convert(wide, result.dtype, name).value

    def unrounded_sum(self, value: Value) -> Value | None:
        """The f32 sum an f16/bf16 sum's value was rounded from, if it is one: a rolled
        loop adds that to its f32 accumulator, rounding once after the last chunk."""
        return self.wide_sums.get(value.ssa)

    def torch_call(self, name: str, target: Any, *args: Any, **kwargs: Any) -> TypedValue:
        """One torch op inside a rule: operands are nodes or TypedValues; the result's
        meta comes from running the op on the operands' FakeTensors."""

        def meta(a: Any) -> Any:
            return (
                a.meta
                if isinstance(a, TypedValue)
                else self.meta(a)
                if isinstance(a, fx.Node)
                else a
            )

        fake = target(*fx.node.map_aggregate(args, meta), **fx.node.map_aggregate(kwargs, meta))
        return TypedValue(self.emit_torch_op(name, target, args, kwargs, fake), fake)

    def predicate(self, value: Any) -> str:
        """An i1 SSA value with Python's truth of a condition: a Python bool, a SymBool
        comparison, a number or a 0-d tensor (bool, or != 0 otherwise)."""
        b = self.builder
        if isinstance(value, bool):
            return b.constant("true" if value else "false", "i1", "true" if value else "false")
        if not isinstance(value, Value) or not (
            value.type in ("i1", "index", "f64")
            or (value.type.startswith("tensor<") and "x" not in value.type)
        ):
            raise HelionMLIRError(f"predicate {value} is not a scalar or a 0-d tensor")
        if value.type.startswith("tensor<"):
            item = b.fresh(f"{value.ssa.lstrip('%')}_cond")
            b.emit(f"{item} = tensor.extract {value.ssa}[] : {value.type}")
            value = Value(item, value.type[len("tensor<") : -1])
        if value.type == "i1":
            return value.ssa
        floating = value.type.startswith(("f", "bf"))
        zero, ssa = b.constant("0.0" if floating else "0", value.type, "zero"), b.fresh("truth")
        compare = "arith.cmpf une" if floating else "arith.cmpi ne"
        b.emit(f"{ssa} = {compare}, {value.ssa}, {zero} : {value.type}")
        return ssa

    def torch_operand(self, node: fx.Node) -> aten_import.Operand:
        """A node as an op operand (a block-size SymInt is the block's width, as a shape
        and as a number)."""
        val = self.meta(node)
        if isinstance(val, torch.Tensor):
            v = self.value(node)
            return aten_import.Operand(val, v.ssa, v.type)
        if isinstance(val, torch.SymInt):
            return aten_import.Operand(val, self.index_value(node), "index")
        if isinstance(val, torch.SymFloat):
            return aten_import.Operand(val, self.scalar_float(val), "f64")
        raise HelionMLIRError(f"operand {node.name} of type {type(val).__name__} is not supported")

    def scalar_float(self, val: torch.SymFloat) -> str:
        """An f64 value for a SymFloat: a scalar arg or an expression of them."""
        return symbols.emit_float_expr(self, sympy.sympify(val.node.expr))

    def to_torch(self, operand: aten_import.Operand, torch_type: str) -> str:
        """torch_c bridge of a builtin value, reused while it is in scope."""
        key = f"{operand.ssa}:{torch_type}"
        for scope in reversed(self.bridges):
            if key in scope:
                return scope[key]
        ssa = self._bridge(operand, torch_type)
        self.bridges[-1][key] = ssa
        return ssa

    def _bridge(self, operand: aten_import.Operand, torch_type: str) -> str:
        b = self.builder
        ssa = b.fresh(f"{operand.ssa.lstrip('%').split('#')[0]}_vt")
        if operand.mlir_type == "index":
            as_i64 = b.fresh(f"{operand.ssa.lstrip('%')}_i64")
            b.emit(f"{as_i64} = arith.index_cast {operand.ssa} : index to i64")
            b.emit(f"{ssa} = torch_c.from_i64 {as_i64}")
        elif operand.mlir_type == "f64":
            b.emit(f"{ssa} = torch_c.from_f64 {operand.ssa}")
        else:
            b.emit(
                f"{ssa} = torch_c.from_builtin_tensor {operand.ssa} "
                f": {operand.mlir_type} -> {torch_type}"
            )
        return ssa

    def from_torch(self, name: str, torch_ssa: str, torch_type: str, val: Any) -> Value:
        ty = mlir_type(val)
        ssa = self.builder.fresh(name)
        self.builder.emit(f"{ssa} = torch_c.to_builtin_tensor {torch_ssa} : {torch_type} -> {ty}")
        self.bridges[-1][f"{ssa}:{torch_type}"] = torch_ssa
        return Value(ssa, ty)


def _operand_dtype(arg: Any) -> torch.dtype | None:
    """The dtype of a TypedValue's or node's tensor, else None."""
    meta = arg.meta if isinstance(arg, TypedValue) else getattr(arg, "meta", {}).get("val")
    return meta.dtype if isinstance(meta, torch.Tensor) else None


def _unsigned_operand(arg: Any) -> bool:
    return _operand_dtype(arg) == torch.uint8


def _leaves(args: Sequence[Any]) -> list[Any]:
    """The operands inside nested lists and tuples (a cat's tensors, a where's scalars)."""
    return [
        leaf for arg in args for leaf in (_leaves(arg) if isinstance(arg, (list, tuple)) else [arg])
    ]


def _half_operand(arg: Any) -> bool:
    return _operand_dtype(arg) in HALVES


def _lowered(cx: RuleContext) -> Any:
    """The node's rule's value. Our own errors are the input's fault (a LoweringError);
    any other exception inside a rule is a bug (an InternalError)."""
    rule = rule_for(cx.node)
    try:
        return rule(cx)
    except (LoweringError, InternalError):
        raise
    except HelionMLIRError as err:
        raise LoweringError(cx.node, f"{type(err).__name__}: {err}") from err
    except Exception as err:
        raise InternalError(cx.node, err) from err


def rule_for(node: fx.Node) -> Rule:
    """The node's rule: its target's, else torch-mlir's import for ATen/prims overloads."""
    rule = LOWERINGS.get(node.target)
    if rule is None and isinstance(node.target, torch._ops.OpOverload):
        return aten_compute
    if rule is None:
        raise LoweringError(node, "no lowering rule for this target")
    return rule
