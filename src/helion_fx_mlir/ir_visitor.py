"""IRVisitor: walks Device IR graphs from the roots and emits MLIR through MLIRBuilder.

Dispatch goes through `LOWERINGS`, a table from FX target to rule (filled by the
`@lowers` decorator), the way torch-mlir's importer and JAX's lowering rules work.
ATen/prims overloads without a rule of their own go to torch-mlir.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy
import torch
import torch.fx as fx
from helion._compiler.variable_origin import BlockSizeOrigin, NameOrigin
from helion.language import _tracing_ops, creation_ops, memory_ops, view_ops

from . import torch_mlir_helper
from .errors import HelionMLIRError, LoweringError
from .graph_analysis import host_tensor_name
from .lowering_context import LoopInfo, LoweringContext, RootInfo
from .mlir_builder import format_scalar, format_tensor_type, is_concrete_size, torch_dtype_to_mlir_element_type
from .stripped_args import restored_args

Rule = Callable[["IRVisitor", fx.Node], Any]
LOWERINGS: dict[object, Rule] = {}


def lowers(*targets: object) -> Callable[[Rule], Rule]:
    """Register a method as the lowering rule of the given FX targets."""

    def register(rule: Rule) -> Rule:
        for target in targets:
            LOWERINGS[target] = rule
        return rule

    return register


@dataclass(frozen=True)
class Value:
    """An SSA value and its MLIR type."""

    ssa: str
    type: str


@dataclass(frozen=True)
class HostTensorRef:
    """A `_host_tensor` node: loads and stores read the tensor's current SSA value."""

    name: str


@dataclass(frozen=True)
class Tile:
    """The current tile of a block id: begin offset and exact size (both index SSA)."""

    offset: str
    size: str


@dataclass(frozen=True)
class Slice:
    """One dimension of a load/store index: offset, size (SSA or literal), kept or dropped."""

    offset: str | int
    size: str | int
    keep: bool


def mlir_type(val: Any) -> str:
    """The builtin MLIR type of an FX meta value (FakeTensor or SymInt)."""
    if isinstance(val, torch.Tensor):
        return format_tensor_type(val.shape, torch_dtype_to_mlir_element_type(val.dtype))
    if isinstance(val, (torch.SymInt, int)):
        return "index"
    raise HelionMLIRError(f"no MLIR type for {type(val).__name__}")


def carried_args(loop: fx.Node, n_results: int) -> list[int]:
    """For each loop result i, the arg position j it carries: found through
    `_phi(args[j], getitem(loop, i))`, else positional (rolled reductions have no phi)."""
    args = loop.args[3]
    carried = list(range(n_results))
    for user in loop.users:
        if user.target is operator.getitem:
            for phi in user.users:
                if phi.target is _tracing_ops._phi and phi.args[0] in args:
                    carried[user.args[1]] = args.index(phi.args[0])
    if any(j >= len(args) for j in carried):
        raise LoweringError(loop, f"loop yields {n_results} values but carries {len(args)} args")
    return carried


def _dims(mlir_tensor_type: str) -> list[str]:
    return mlir_tensor_type[len("tensor<") : -1].split("x")[:-1]


class IRVisitor:
    """Emits one func for a bound kernel: grids, loops, slices and torch ops."""

    def __init__(self, ctx: LoweringContext) -> None:
        self.ctx = ctx
        self.builder = ctx.builder
        self.node_values: dict[fx.Node, Any] = {}
        self.tiles: dict[int, Tile] = {}
        self.tensor_state: dict[str, Value] = {}
        self.parallel_stores: list[str] | None = None
        self.block_size_ssa: dict[int, str] = {}
        # torch_c bridges visible in the current region and those enclosing it.
        self.bridges: list[dict[str, str]] = [{}]

    def enter_region(self) -> None:
        self.builder.push()
        self.bridges.append({})

    def exit_region(self) -> None:
        self.bridges.pop()
        self.builder.pop()

    # ----------------------------------------------------------------- driver
    def lower(self) -> str:
        b, ctx = self.builder, self.ctx
        attrs = {"helion.kernel": f'"{ctx.kernel_name}"'}
        attrs |= {f"loom.block_size_{bid}": f"{v} : index" for bid, v in sorted(ctx.block_size_values.items())}
        b.emit_module_start(attrs)
        outputs = ctx.output_args
        b.emit_func_start(ctx.kernel_name, [(a.ssa_name, a.mlir_type) for a in ctx.kernel_args], [a.mlir_type for a in outputs])
        for arg in ctx.kernel_args:
            if arg.is_tensor:
                self.tensor_state[arg.name] = Value(arg.ssa_name, arg.mlir_type)
                ctx.host_tensors[arg.name] = arg.ssa_name
        for bid in sorted(ctx.block_size_values):
            ssa = b.fresh(f"block_size_{bid}")
            b.emit(f'{ssa} = "loom.get_symbol"() {{name = "block_size_{bid}"}} : () -> index')
            self.block_size_ssa[bid] = ctx.symbols[f"block_size_{bid}"] = ssa
        for root in ctx.roots:
            self.visit_root(root)
        finals = [self.tensor_state[a.name] for a in outputs]
        b.emit_func_end([v.ssa for v in finals], [v.type for v in finals])
        b.emit_module_end()
        return b.text()

    def visit_root(self, root: RootInfo) -> None:
        """A grid: scf.forall when stores allow it, else a sequential scf.for nest."""
        stored = self.ctx.stored_tensors(root.graph_id)
        bounds = [(loop, 0, loop.total_extent) for loop in root.loops]
        if self.ctx.facts.is_parallel(root.graph_id):
            self.emit_forall(root, bounds, stored)
        else:
            carried = [self.tensor_state[t] for t in stored]
            results = self.emit_loop_nest("scf", bounds, [f"{t}_iter" for t in stored], carried,
                                          lambda names: self._visit_root_body(root, stored, names))
            self.tensor_state.update(zip(stored, results))

    def _visit_root_body(self, root: RootInfo, stored: list[str], names: list[Value]) -> list[Value]:
        self.tensor_state.update(zip(stored, names))
        self.visit_graph(root.graph_id)
        return [self.tensor_state[t] for t in stored]

    def emit_forall(self, root: RootInfo, bounds: list[tuple[LoopInfo, Any, Any]], stored: list[str]) -> None:
        b = self.builder
        trips = [self.emit_trip_count(loop, begin, end) for loop, begin, end in bounds]
        ivs = [b.fresh(loop.iv_name.lstrip("%")) for loop, _, _ in bounds]
        outs = [Value(b.fresh(f"{t}_out"), self.tensor_state[t].type) for t in stored]
        result = b.fresh(f"{root.loops[0].name}_grid" if root.loops else "grid")
        head = f"scf.forall ({', '.join(ivs)}) in ({', '.join(trips)})"
        if outs:
            shared = ", ".join(f"{o.ssa} = {self.tensor_state[t].ssa}" for o, t in zip(outs, stored))
            types = ", ".join(o.type for o in outs)
            head = f"{self._results(result, len(outs))} = {head} shared_outs({shared}) -> ({types})"
        b.emit(head + " {")
        self.enter_region()
        saved_tiles = dict(self.tiles)
        for (loop, begin, end), iv in zip(bounds, ivs):
            self.tiles[loop.block_id] = self.emit_tile(loop, iv, begin, end)
        self.tensor_state.update(zip(stored, outs))
        self.parallel_stores = []
        self.visit_graph(root.graph_id)
        b.emit("scf.forall.in_parallel {")
        b.push()
        for line in self.parallel_stores:
            b.emit(line)
        b.pop()
        b.emit("}")
        self.parallel_stores = None
        self.tiles = saved_tiles
        self.exit_region()
        b.emit("}")
        for i, (t, o) in enumerate(zip(stored, outs)):
            self.tensor_state[t] = Value(self._result(result, i, len(outs)), o.type)

    # ------------------------------------------------------------- loop nests
    def emit_loop_nest(self, kind: str, bounds: Sequence[tuple[LoopInfo, Any, Any]], iter_names: Sequence[str],
                       inits: Sequence[Value], body: Callable[[list[Value]], list[Value]]) -> list[Value]:
        """One loop per dimension (affine.for or scf.for) carrying `inits`; returns results."""
        b = self.builder
        saved_tiles = dict(self.tiles)
        results: list[str] = []
        current = list(inits)
        for depth, (loop, begin, end) in enumerate(bounds):
            trip = self.emit_trip_count(loop, begin, end)
            iv = b.fresh(loop.iv_name.lstrip("%"))
            innermost = depth == len(bounds) - 1
            names = [b.fresh(n if innermost else f"{n}_outer") for n in iter_names]
            result = b.fresh(f"{loop.name}_loop")
            results.append(result)
            if kind == "affine":
                head = f"affine.for {iv} = 0 to {trip}"
            else:
                head = f"scf.for {iv} = {b.index(0)} to {trip} step {b.index(1)}"
            if current:
                pairs = ", ".join(f"{n} = {v.ssa}" for n, v in zip(names, current))
                head = f"{self._results(result, len(current))} = {head} iter_args({pairs}) -> ({', '.join(v.type for v in current)})"
            b.emit(head + " {")
            self.enter_region()
            self.tiles[loop.block_id] = self.emit_tile(loop, iv, begin, end)
            current = [Value(n, v.type) for n, v in zip(names, current)]
        yields = body(current)
        yields = [self.coerce(y, c.type) for y, c in zip(yields, current)]
        for depth in reversed(range(len(bounds))):
            terminator = "affine.yield" if kind == "affine" else "scf.yield"
            if yields:
                b.emit(f"{terminator} {', '.join(y.ssa for y in yields)} : {', '.join(y.type for y in yields)}")
            elif kind == "scf":
                b.emit("scf.yield")
            self.exit_region()
            b.emit("}")
            yields = [Value(self._result(results[depth], i, len(inits)), v.type) for i, v in enumerate(inits)]
        self.tiles = saved_tiles
        return yields

    @staticmethod
    def _results(name: str, n: int) -> str:
        return name if n == 1 else f"{name}:{n}"

    @staticmethod
    def _result(name: str, i: int, n: int) -> str:
        return name if n == 1 else f"{name}#{i}"

    def _bound(self, value: Any, symbols: list[str]) -> str:
        """An affine expression term for a loop bound: a literal, or a new symbol."""
        if isinstance(value, int):
            return str(value)
        symbols.append(self.index_value(value))
        return f"s{len(symbols)}"

    def emit_trip_count(self, loop: LoopInfo, begin: Any, end: Any) -> str:
        syms = [self.block_size_ssa[loop.block_id]]
        lo, hi = self._bound(begin, syms), self._bound(end, syms)
        extent = str(int(hi) - int(lo)) if isinstance(begin, int) and isinstance(end, int) else f"({hi} - {lo})"
        ssa = self.builder.fresh(f"{loop.name}_trips")
        sym_list = ", ".join(f"s{i}" for i in range(len(syms)))
        self.builder.emit(f"{ssa} = affine.apply affine_map<()[{sym_list}] -> ({extent} ceildiv s0)>()[{', '.join(syms)}]")
        return ssa

    def emit_tile(self, loop: LoopInfo, iv: str, begin: Any, end: Any) -> Tile:
        """Offset = begin + iv * block; size = min(block, end - offset): exact at the boundary."""
        b = self.builder
        syms = [self.block_size_ssa[loop.block_id]]
        lo, hi = self._bound(begin, syms), self._bound(end, syms)
        sym_list = ", ".join(f"s{i}" for i in range(len(syms)))
        start = "d0 * s0" if lo == "0" else f"d0 * s0 + {lo}"
        remaining = f"{hi} - d0 * s0" if lo == "0" else f"{hi} - {lo} - d0 * s0"
        if isinstance(begin, int) and isinstance(end, int):
            remaining = f"{end - begin} - d0 * s0"
        offset, size = b.fresh(f"{loop.name}_offset"), b.fresh(f"{loop.name}_size")
        operands = f"({iv})[{', '.join(syms)}]"
        b.emit(f"{offset} = affine.apply affine_map<(d0)[{sym_list}] -> ({start})>{operands}")
        b.emit(f"{size} = affine.min affine_map<(d0)[{sym_list}] -> (s0, {remaining})>{operands}")
        return Tile(offset, size)

    # ------------------------------------------------------------ graph walk
    def visit_graph(self, graph_id: int, inputs: Sequence[Value] = ()) -> list[Any]:
        """Visit a graph's nodes; placeholders take `inputs`; returns the output values."""
        placeholders = iter(inputs)
        for node in self.ctx.graphs[graph_id].graph.nodes:
            if node.op == "placeholder":
                self.node_values[node] = next(placeholders)
            elif node.op == "output":
                return [self.node_values.get(n) if isinstance(n, fx.Node) else n for n in (node.args[0] or [])]
            else:
                self.visit_node(node)
        return []

    def visit_node(self, node: fx.Node) -> None:
        rule = LOWERINGS.get(node.target)
        if rule is None and isinstance(node.target, torch._ops.OpOverload):
            rule = IRVisitor.visit_aten_compute
        if rule is None:
            raise LoweringError(node, "no lowering rule for this target")
        try:
            self.node_values[node] = rule(self, node)
        except LoweringError:
            raise
        except Exception as err:  # noqa: BLE001 - every failure names the node
            raise LoweringError(node, f"{type(err).__name__}: {err}") from err

    def value(self, arg: Any) -> Value:
        """The SSA value of a node argument."""
        found = self.node_values.get(arg) if isinstance(arg, fx.Node) else None
        if not isinstance(found, Value):
            raise HelionMLIRError(f"argument {arg} has no tensor value here")
        return found

    # -------------------------------------------------------------- symbols
    def index_value(self, arg: Any) -> str:
        """An index SSA value for an int, a SymInt node or a SymInt."""
        if isinstance(arg, fx.Node):
            arg = arg.meta["val"]
        if is_concrete_size(arg):
            return self.builder.index(arg)
        expr = arg._sympy_() if isinstance(arg, torch.SymInt) else arg
        if isinstance(expr, sympy.Integer):
            return self.builder.index(int(expr))
        origin = self.ctx.origin(expr)
        if isinstance(origin, BlockSizeOrigin):
            return self.block_value(origin.block_id)
        if isinstance(origin, NameOrigin):
            return self.scalar_arg_as_index(origin.name)
        raise HelionMLIRError(f"symbolic value {expr} (origin {origin}) is not supported")

    def block_value(self, block_id: int) -> str:
        """Inside a loop over the block: the exact tile size; a persistent rdim: its extent."""
        if block_id in self.tiles:
            return self.tiles[block_id].size
        info = self.ctx.block_sizes[block_id]
        if info.reduction and isinstance(info.size, int):
            return self.builder.index(info.size)
        return self.block_size_ssa[block_id]

    def scalar_arg_as_index(self, name: str) -> str:
        arg = next(a for a in self.ctx.kernel_args if a.name == name and not a.is_tensor)
        ssa = self.builder.fresh(f"{name}_index")
        self.builder.emit(f"{ssa} = arith.index_cast {arg.ssa_name} : {arg.mlir_type} to index")
        return ssa

    def tile_of(self, arg: Any) -> Tile | None:
        """The tile an index element denotes: a block-size SymInt of an active or rdim block."""
        val = arg.meta.get("val") if isinstance(arg, fx.Node) else None
        if not isinstance(val, torch.SymInt):
            return None
        origin = self.ctx.origin(val._sympy_())
        if not isinstance(origin, BlockSizeOrigin):
            return None
        if origin.block_id in self.tiles:
            return self.tiles[origin.block_id]
        return Tile(self.builder.index(0), self.block_value(origin.block_id))

    # ---------------------------------------------------------- Helion ops
    @lowers(_tracing_ops._host_tensor)
    def visit_host_tensor(self, node: fx.Node) -> HostTensorRef:
        return HostTensorRef(node.args[0])

    @lowers(_tracing_ops._get_symnode, torch.ops.aten.sym_size.int, _tracing_ops._inductor_lowering_extra)
    def visit_symbolic(self, node: fx.Node) -> None:
        """Symbols are resolved where they are used (by meta value), so nothing is emitted."""
        return None

    @lowers(_tracing_ops._new_var, _tracing_ops._mask_to)
    def visit_alias(self, node: fx.Node) -> Value:
        """_new_var copies; _mask_to masks lanes past the extent, and tiles here are exact."""
        return self.value(node.args[0])

    @lowers(operator.getitem)
    def visit_getitem(self, node: fx.Node) -> Any:
        source, index = node.args
        return self.node_values[source][index]

    @lowers(_tracing_ops._phi)
    def visit_phi(self, node: fx.Node) -> Value:
        init, loop_result = self.value(node.args[0]), self.value(node.args[1])
        loop_result = self.coerce(loop_result, init.type)
        ssa = self.builder.fresh(node.name)
        self.builder.emit(f'{ssa} = "helion.phi"({init.ssa}, {loop_result.ssa}) : ({init.type}, {init.type}) -> {init.type}')
        return Value(ssa, init.type)

    @lowers(_tracing_ops._for_loop)
    def visit_for_loop(self, node: fx.Node) -> list[Value]:
        """affine.for per block id. Only args the body yields back are iter_args (plus
        host tensors stored inside); read-only args are used directly from outside."""
        graph_id, begins, ends, args = node.args
        info = self.ctx.graphs[graph_id]
        loops = [LoopInfo(bid, self._loop_name(bid), self.ctx.block_size_values[bid], None, f"%iv_block{bid}") for bid in info.block_ids]
        bounds = list(zip(loops, begins, ends, strict=True))
        placeholders = [n for n in info.graph.nodes if n.op == "placeholder"]
        n_results = len(info.graph.output_node().args[0] or [])
        carried = carried_args(node, n_results)
        stored = self.ctx.stored_tensors(graph_id)
        inits = [self.coerce(self.value(args[j]), mlir_type(placeholders[j].meta["val"])) for j in carried]
        inits += [self.tensor_state[t] for t in stored]
        names = [placeholders[j].name for j in carried] + [f"{t}_iter" for t in stored]

        def body(values: list[Value]) -> list[Value]:
            inputs = [self.value(a) for a in args]
            for j, v in zip(carried, values):
                inputs[j] = v
            self.tensor_state.update(zip(stored, values[n_results:]))
            outputs = self.visit_graph(graph_id, inputs)
            return [*outputs, *(self.tensor_state[t] for t in stored)]

        kind = "affine" if all(isinstance(x, int) for x in (*begins, *ends)) else "scf"
        results = self.emit_loop_nest(kind, bounds, names, inits, body)
        self.tensor_state.update(zip(stored, results[n_results:]))
        return results[:n_results]

    def _loop_name(self, block_id: int) -> str:
        names = sorted(self.ctx.block_sizes[block_id].debug_names)
        return names[0] if names else f"block{block_id}"

    @lowers(creation_ops.full)
    def visit_full(self, node: fx.Node) -> Value:
        shape, fill, dtype = node.args[0], node.args[1], node.args[2]
        return self.emit_full(node, shape, fill, dtype)

    @lowers(torch.ops.aten.full.default)
    def visit_aten_full(self, node: fx.Node) -> Value:
        dtype = node.kwargs.get("dtype") or node.meta["val"].dtype
        return self.emit_full(node, node.args[0], node.args[1], dtype)

    def emit_full(self, node: fx.Node, shape: Sequence[Any], fill: Any, dtype: torch.dtype) -> Value:
        """tensor.empty with the exact tile sizes, then linalg.fill with the constant."""
        b = self.builder
        ty = mlir_type(node.meta["val"])
        elt = torch_dtype_to_mlir_element_type(dtype)
        dynamic = [self.index_value(d) for d, dim in zip(shape, _dims(ty), strict=True) if dim == "?"]
        cst = b.constant(format_scalar(fill, dtype), elt, "cst")
        empty = b.fresh(f"{node.name}_empty")
        b.emit(f"{empty} = tensor.empty({', '.join(dynamic)}) : {ty}")
        ssa = b.fresh(node.name)
        b.emit(f"{ssa} = linalg.fill ins({cst} : {elt}) outs({empty} : {ty}) -> {ty}")
        return Value(ssa, ty)

    # --------------------------------------------------------------- memory
    def slices(self, node: fx.Node, index: Sequence[Any], shape: Sequence[Any]) -> list[Slice]:
        """Offsets and sizes of a tile access, one entry per tensor dimension."""
        if len(index) > len(shape):
            raise LoweringError(node, f"index {index} has more entries than the tensor has dims")
        result = []
        for dim, idx in enumerate([*index, *[slice(None)] * (len(shape) - len(index))]):
            result.append(self._slice(node, idx, shape[dim]))
        return result

    def _slice(self, node: fx.Node, idx: Any, extent: Any) -> Slice:
        if isinstance(idx, slice):
            if idx.step not in (None, 1):
                raise LoweringError(node, f"strided slice {idx} is not supported")
            start, stop = idx.start or 0, extent if idx.stop is None else idx.stop
            if isinstance(start, int) and isinstance(stop, int):
                return Slice(start, stop - start, True)
            raise LoweringError(node, f"symbolic slice bounds {idx} are not supported")
        if isinstance(idx, int):
            return Slice(idx, 1, False)
        tile = self.tile_of(idx)
        if tile is not None:
            return Slice(tile.offset, tile.size, True)
        val = idx.meta.get("val") if isinstance(idx, fx.Node) else None
        if isinstance(val, torch.SymInt):
            return Slice(self.index_value(idx), 1, False)
        raise LoweringError(node, f"index element {idx!r} is not supported")

    def _slice_syntax(self, slices: Sequence[Slice], value_type: str) -> str:
        """'[offsets] [sizes] [strides]': a size is literal where the value's dim is static."""
        dims = iter(_dims(value_type))
        sizes = []
        for s in slices:
            dim = next(dims) if s.keep else "1"
            if dim != "?":
                sizes.append(dim)
            else:
                sizes.append(s.size if isinstance(s.size, str) else self.builder.index(s.size))
        offsets = [str(s.offset) for s in slices]
        return f"[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join('1' for _ in slices)}]"

    def _host_ref(self, node: fx.Node) -> str:
        ref = self.node_values.get(node.args[0])
        if not isinstance(ref, HostTensorRef):
            raise LoweringError(node, "the tensor is not a host tensor")
        return ref.name

    @lowers(memory_ops.load)
    def visit_load(self, node: fx.Node) -> Value:
        name = self._host_ref(node)
        self._reject_extra_mask(node, node.args[2])
        source = self.tensor_state[name]
        slices = self.slices(node, node.args[1], self.ctx.tensor_arg(name).shape)
        ty = mlir_type(node.meta["val"])
        ssa = self.builder.fresh(node.name)
        self.builder.emit(f"{ssa} = tensor.extract_slice {source.ssa}{self._slice_syntax(slices, ty)} : {source.type} to {ty}")
        return Value(ssa, ty)

    @lowers(memory_ops.store)
    def visit_store(self, node: fx.Node) -> None:
        name = self._host_ref(node)
        self._reject_extra_mask(node, node.args[3])
        dest = self.tensor_state[name]
        arg = self.ctx.tensor_arg(name)
        value = self.convert(self.value(node.args[2]), node.args[2], arg.dtype)
        where = self._slice_syntax(self.slices(node, node.args[1], arg.shape), value.type)
        if self.parallel_stores is not None:
            self.parallel_stores.append(f"tensor.parallel_insert_slice {value.ssa} into {dest.ssa}{where} : {value.type} into {dest.type}")
            return None
        ssa = self.builder.fresh(node.name)
        self.builder.emit(f"{ssa} = tensor.insert_slice {value.ssa} into {dest.ssa}{where} : {value.type} into {dest.type}")
        self.tensor_state[name] = Value(ssa, dest.type)
        return None

    @staticmethod
    def _reject_extra_mask(node: fx.Node, mask: Any) -> None:
        if mask is not None:
            raise LoweringError(node, "extra_mask on loads/stores is not supported yet")

    @lowers(view_ops.subscript)
    def visit_subscript(self, node: fx.Node) -> Value:
        """Indexing that only inserts unit dims (x[:, None]) becomes tensor.expand_shape."""
        source, index = self.value(node.args[0]), node.args[1]
        if any(i is not None and i != slice(None) for i in index):
            raise LoweringError(node, f"subscript {index} is not supported (only ':' and None)")
        ty = mlir_type(node.meta["val"])
        groups: list[list[int]] = []
        pending: list[int] = []
        for out_dim, idx in enumerate(index):
            if idx is None and not groups:
                pending.append(out_dim)
            elif idx is None:
                groups[-1].append(out_dim)
            else:
                groups.append([*pending, out_dim])
                pending = []
        out_dims = _dims(ty)
        sizes = []
        src_dims = _dims(source.type)
        for out_dim, dim in enumerate(out_dims):
            if dim != "?":
                sizes.append(dim)
                continue
            src_dim = next(i for i, g in enumerate(groups) if out_dim in g)
            sizes.append(self.tensor_dim(source, src_dim) if src_dims[src_dim] == "?" else src_dims[src_dim])
        reassoc = ", ".join(f"[{', '.join(map(str, g))}]" for g in groups)
        ssa = self.builder.fresh(node.name)
        self.builder.emit(f"{ssa} = tensor.expand_shape {source.ssa} [{reassoc}] output_shape [{', '.join(sizes)}] : {source.type} into {ty}")
        return Value(ssa, ty)

    def tensor_dim(self, value: Value, dim: int) -> str:
        ssa = self.builder.fresh(f"{value.ssa.lstrip('%')}_dim{dim}")
        self.builder.emit(f"{ssa} = tensor.dim {value.ssa}, {self.builder.index(dim)} : {value.type}")
        return ssa

    # -------------------------------------------------------------- casting
    def coerce(self, value: Value, ty: str) -> Value:
        """tensor.cast between static and dynamic forms of the same tensor type."""
        if value.type == ty:
            return value
        ssa = self.builder.fresh(f"{value.ssa.lstrip('%')}_cast")
        self.builder.emit(f"{ssa} = tensor.cast {value.ssa} : {value.type} to {ty}")
        return Value(ssa, ty)

    def convert(self, value: Value, node: fx.Node, dtype: torch.dtype) -> Value:
        """Stores cast to the destination dtype, as Helion's store does."""
        val = node.meta["val"]
        if val.dtype == dtype:
            return value
        target = torch.ops.prims.convert_element_type.default
        return self.emit_torch_op(node.name + "_cast", target, [node, dtype], {}, val.to(dtype))

    # ----------------------------------------------------------------- ATen
    def visit_aten_compute(self, node: fx.Node) -> Any:
        """Any ATen/prims op: imported through torch-mlir, bridged with torch_c."""
        args, kwargs = restored_args(node)
        kwargs = {k: v for k, v in kwargs.items() if not k.startswith("_extra")}
        return self.emit_torch_op(node.name, node.target, args, kwargs, node.meta["val"])

    def emit_torch_op(self, name: str, target: Any, args: Sequence[Any], kwargs: dict[str, Any], result: Any) -> Any:
        by_node: dict[fx.Node, torch_mlir_helper.Operand] = {}

        def operand(arg: Any) -> Any:
            if isinstance(arg, fx.Node):
                if arg not in by_node:
                    by_node[arg] = self.torch_operand(arg)
                return by_node[arg]
            if isinstance(arg, (list, tuple)):
                return type(arg)(operand(a) for a in arg)
            return arg

        op_args = [operand(a) for a in args]
        op_kwargs = {k: operand(v) for k, v in kwargs.items()}
        operands = list(by_node.values())
        imported = torch_mlir_helper.import_aten(target, op_args, op_kwargs, operands, result)
        bridged = [self.to_torch(o, t) for o, t in zip(operands, imported.input_types, strict=True)]
        inlined = torch_mlir_helper.inline(imported, bridged, name, self.builder.fresh)
        for line in inlined.lines:
            self.builder.emit(line)
        results = result if isinstance(result, (list, tuple)) else [result]
        values = [self.from_torch(name, r, t, val) for r, t, val in zip(inlined.results, inlined.result_types, results, strict=True)]
        return values if isinstance(result, (list, tuple)) else values[0]

    def torch_operand(self, node: fx.Node) -> torch_mlir_helper.Operand:
        val = node.meta["val"]
        if isinstance(val, torch.Tensor):
            v = self.value(node)
            return torch_mlir_helper.Operand(val, v.ssa, v.type)
        if isinstance(val, torch.SymInt):
            return torch_mlir_helper.Operand(val, self.index_value(node), "index")
        if isinstance(val, torch.SymFloat):
            return torch_mlir_helper.Operand(val, self.scalar_float(val), "f64")
        raise HelionMLIRError(f"operand {node.name} of type {type(val).__name__} is not supported")

    def scalar_float(self, val: torch.SymFloat) -> str:
        origin = self.ctx.origin(val.node.expr)
        if isinstance(origin, NameOrigin):
            return next(a.ssa_name for a in self.ctx.kernel_args if a.name == origin.name and not a.is_tensor)
        raise HelionMLIRError(f"symbolic float {val} (origin {origin}) is not supported")

    def to_torch(self, operand: torch_mlir_helper.Operand, torch_type: str) -> str:
        """torch_c bridge of a builtin value, reused while it is in scope."""
        key = f"{operand.ssa}:{torch_type}"
        for scope in reversed(self.bridges):
            if key in scope:
                return scope[key]
        ssa = self._bridge(operand, torch_type)
        self.bridges[-1][key] = ssa
        return ssa

    def _bridge(self, operand: torch_mlir_helper.Operand, torch_type: str) -> str:
        b = self.builder
        ssa = b.fresh(f"{operand.ssa.lstrip('%').split('#')[0]}_vt")
        if operand.mlir_type == "index":
            as_i64 = b.fresh(f"{operand.ssa.lstrip('%')}_i64")
            b.emit(f"{as_i64} = arith.index_cast {operand.ssa} : index to i64")
            b.emit(f"{ssa} = torch_c.from_i64 {as_i64}")
        elif operand.mlir_type == "f64":
            b.emit(f"{ssa} = torch_c.from_f64 {operand.ssa}")
        else:
            b.emit(f"{ssa} = torch_c.from_builtin_tensor {operand.ssa} : {operand.mlir_type} -> {torch_type}")
        return ssa

    def from_torch(self, name: str, torch_ssa: str, torch_type: str, val: Any) -> Value:
        ty = mlir_type(val)
        ssa = self.builder.fresh(name)
        self.builder.emit(f"{ssa} = torch_c.to_builtin_tensor {torch_ssa} : {torch_type} -> {ty}")
        self.bridges[-1][f"{ssa}:{torch_type}"] = torch_ssa
        return Value(ssa, ty)
