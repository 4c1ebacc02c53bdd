"""LoweringContext: everything known about a bound kernel before its graphs are walked."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import helion
import sympy
import torch
from helion._compiler.compile_environment import CompileEnvironment, ReductionLoopBlockSizeSource
from helion._compiler.device_ir import ReductionLoopGraphInfo
from helion._compiler.variable_origin import (
    BlockSizeOrigin,
    GridOrigin,
    NameOrigin,
    Origin,
)
from helion.autotuner.config_fragment import EnumFragment
from helion.exc import InvalidConfig
from helion.language import _tracing_ops, memory_ops, random_ops
from torch import fx

from helion_fx_mlir.errors import HelionMLIRError, LoweringError
from helion_fx_mlir.frontend.emitter import (
    MLIRBuilder,
    format_tensor_type,
    ssa_identifier,
    torch_dtype_to_mlir_element_type,
)
from helion_fx_mlir.frontend.graph_analysis import (
    GraphFacts,
    ShiftedTile,
    host_tensor_name,
    shifted_tile,
)
from helion_fx_mlir.frontend.host_program import is_device_loop
from helion_fx_mlir.frontend.rolled_reductions import uncombinable_outputs, uncombined_results_used
from helion_fx_mlir.frontend.signature import RNG_SEEDS, KernelArgInfo
from helion_fx_mlir.frontend.size_checks import SizeRequirement
from helion_fx_mlir.frontend.tile_scopes import ambiguous_tiles, node_at, reason
from helion_fx_mlir.mlir.attributes import (
    STREAMING_STORES_CHOICES,
    STREAMING_STORES_KEY,
    VECTOR_WIDTH_KEY,
    VECTOR_WIDTHS,
)


@dataclass(frozen=True)
class LoopInfo:
    """One loop dimension: a grid axis or an inner `hl.tile` loop over a block id."""

    block_id: int
    name: str
    tile_size: int | None  # None: the block size is symbolic in this config
    total_extent: int | None
    iv_name: str


@dataclass(frozen=True)
class RootInfo:
    """One top-level device loop (a kernel grid), its axes and its `for` statement."""

    graph_id: int
    loops: tuple[LoopInfo, ...]
    location: Any = None  # Helion SourceLocation of the `for ... in hl.tile(...)` line
    begins: tuple[Any, ...] = ()  # per axis: where its first tile starts (int or SymInt)

    def bounds(self, block_sizes: dict[int, Any]) -> list[tuple[LoopInfo, Any, Any]]:
        """(loop, begin, end) per axis: `hl.tile(begin, end)` covers [begin, begin + extent)."""
        begins = self.begins or (0,) * len(self.loops)
        return [
            (
                loop,
                begin,
                begin + block_sizes[loop.block_id].size
                if begin != 0
                else block_sizes[loop.block_id].size,
            )
            for loop, begin in zip(self.loops, begins, strict=True)
        ]


@dataclass
class LoweringContext:
    """State shared by the visitor and the emitter for one kernel and config."""

    builder: MLIRBuilder
    kernel_name: str
    bound_kernel: Any
    config: helion.Config
    graphs: list[Any]
    facts: GraphFacts
    block_sizes: dict[int, Any]
    block_size_values: dict[int, int]
    roots: list[RootInfo]
    kernel_args: list[KernelArgInfo]
    # block id -> SymInt the host code computes
    host_block_sizes: dict[int, Any] = field(default_factory=dict)
    # symbolic sizes the code reads as one dim (each launch checks them: size_checks.py)
    size_requirements: list[SizeRequirement] = field(default_factory=list)

    @classmethod
    def from_bound_kernel(
        cls, bound_kernel: Any, config: helion.Config | None = None, kernel_name: str | None = None
    ) -> LoweringContext:
        """Resolve the config, block sizes, graphs, grids and func arguments."""
        config = resolve_config(bound_kernel, config)
        host_fn = bound_kernel.host_function
        device_ir = host_fn.device_ir
        with bound_kernel.env, host_fn:
            graphs = device_ir.build_codegen_graphs(config)
            _refuse_ambiguous_tiles(host_fn.body, graphs)
            if _has_unrollable_loops(
                graphs, {info.block_id: info for info in bound_kernel.env.block_sizes}
            ):
                config = _persistent(bound_kernel, config)
                graphs = device_ir.build_codegen_graphs(config)
            block_size_values = {
                info.block_id: value
                for info in bound_kernel.env.block_sizes
                if (value := _block_size_value(info, config)) is not None
            }
            host_block_sizes = {
                info.block_id: value
                for info in bound_kernel.env.block_sizes
                if isinstance(value := info.from_config(config), torch.SymInt)
                and not info.reduction
            }
        block_sizes = {info.block_id: info for info in bound_kernel.env.block_sizes}
        facts = GraphFacts(graphs)
        device_loops = [stmt for stmt in host_fn.body if is_device_loop(stmt)]
        roots = [
            RootInfo(
                gid,
                tuple(_grid_loop(block_sizes[b], block_size_values.get(b)) for b in block_ids),
                getattr(device_loops[i], "_location", None) if i < len(device_loops) else None,
                _root_begins(device_loops[i], len(block_ids)) if i < len(device_loops) else (),
            )
            for i, (gid, block_ids) in enumerate(
                zip(device_ir.root_ids, device_ir.grid_block_ids, strict=True)
            )
        ]
        reachable = facts.reachable([r.graph_id for r in roots])
        return cls(
            builder=MLIRBuilder(),
            kernel_name=kernel_name or host_fn.name,
            bound_kernel=bound_kernel,
            config=config,
            graphs=graphs,
            facts=facts,
            block_sizes=block_sizes,
            block_size_values=block_size_values,
            roots=roots,
            kernel_args=_kernel_args(bound_kernel, facts, reachable),
            host_block_sizes=host_block_sizes,
        )

    def size_is_one(self, size: Any, block_id: int, load: bool) -> bool:
        """Whether a tensor dim that block `block_id`'s tile indexes has size 1 (then every
        lane reads its element: Helion broadcasts it). A symbolic size (static_shapes=False)
        is settled for a load as Helion's code generation settles it, by its value at bind
        time under a guard; `publish_guards` makes the guard key the bound kernel."""
        if not isinstance(size, torch.SymInt):
            return bool(size == 1)
        env = self.bound_kernel.env
        with env, self.bound_kernel.host_function:
            if load:
                env.resolve_broadcast_dim(size, block_id)
            if not env.known_equal(size, 1):
                return False
            extent = env.block_sizes[env.canonical_block_id(block_id)].size
            # A dim as long as the tile's extent (a row read whole) is indexed: at size 1
            # the tile is one lane wide there, and indexing it is broadcasting it.
            return not (
                isinstance(extent, int | torch.SymInt)
                and env.known_nonnegative(sympy.sympify(size - extent))
            )

    def require_extent(self, size: Any, block_id: int, node: fx.Node) -> None:
        """A tensor dim of `size` read whole as block `block_id`'s dim, whose extent is
        symbolic: the code reads as many elements as the extent, so a launch checks that
        `size` is that long where both are kernel arguments' sizes."""
        extent = self.block_sizes[block_id].size
        symbolic = isinstance(size, torch.SymInt) and isinstance(extent, torch.SymInt)
        if symbolic and str(size) != str(extent):
            self.size_requirements.append(SizeRequirement(size, extent, node))

    def publish_guards(self) -> None:
        """Key the bound kernel by the input-size guards lowering recorded (as Helion does
        after generating code): a call whose sizes differ there binds a kernel of its own."""
        if not self.bound_kernel.settings.static_shapes:
            self.bound_kernel._publish_guarded_input_facts()

    def origin(self, expr: Any) -> Origin | None:
        """Where a SymInt/SymFloat's sympy symbol comes from (block size, kernel arg...)."""
        entry = self.bound_kernel.host_function.expr_to_origin.get(expr)
        return entry.origin if entry is not None else None

    @property
    def output_args(self) -> list[KernelArgInfo]:
        """Tensors any grid stores to: the func returns their final values."""
        stored = {t for root in self.roots for t in self.stored_tensors(root.graph_id)}
        return [a for a in self.kernel_args if a.is_tensor and a.name in stored]

    def extent(self, size: Any) -> Any:
        """The full extent a tile dim covers: an rdim's block-size symbol is its dim size."""
        if isinstance(size, torch.SymInt):
            origin = self.origin(size.node.expr)
            if isinstance(origin, BlockSizeOrigin) and self.block_sizes[origin.block_id].reduction:
                return self.block_sizes[origin.block_id].size
        return size

    def dynamic_dim(self, symbol: Any) -> tuple[str, int] | None:
        """(func arg, dim) whose size is this symbol, for static_shapes=False kernels."""
        for arg in self.kernel_args:
            for dim, size in enumerate(arg.shape):
                if isinstance(size, torch.SymInt) and size.node.expr == symbol:
                    return arg.name, dim
        return None

    def loop_name(self, block_id: int) -> str:
        return _loop_name(self.block_sizes[block_id])

    def tensor_arg(self, name: str) -> KernelArgInfo:
        for arg in self.kernel_args:
            if arg.name == name and arg.is_tensor:
                return arg
        raise HelionMLIRError(f"host tensor '{name}' is not an argument of the kernel func")

    def independent_axes(self, root: RootInfo) -> set[int]:
        """The axes along which a grid kept sequential (it stores inside its loops) may
        still run its programs in any order, as Helion does: every access (load, store,
        atomic) of a stored tensor takes a whole tile of the axis, at the same dims for
        each access of that tensor, so programs of different tiles of the axis touch apart
        (an atomic's read included: split-K's `out[tile_m, tile_n]` over K splits). Programs
        that share the axes' tiles keep their order."""
        facts = self.facts
        facts.analyze(root.graph_id)
        axes = {loop.block_id for loop in root.loops}
        if axes & self._nested_loop_blocks(root.graph_id):
            return set()  # an inner loop reusing a grid axis's block: its tiles are the loop's
        stored = facts.stores[root.graph_id]
        dims: dict[str, dict[int, frozenset[tuple[int, Any]]]] = {}
        for node in facts.access_nodes(root.graph_id):
            name = host_tensor_name(node.args[0])
            if name not in stored:
                continue
            tiles = self._tile_dims(node)
            seen = dims.setdefault(name, tiles)
            axes = {a for a in axes if a in tiles and tiles[a] == seen.get(a)}
        return axes

    def _nested_loop_blocks(self, root_id: int) -> set[int]:
        """The block ids of the loops inside a grid (`hl.tile(n, block_size=bs)` may reuse
        the grid's own registered block size)."""
        return {
            block_id
            for gid in self.facts.reachable([root_id])
            if gid != root_id
            for block_id in getattr(self.facts.graphs[gid], "block_ids", ())
        }

    def _tile_dims(self, node: fx.Node) -> dict[int, frozenset[tuple[int, Any]]]:
        """The block ids whose tiles an access's subscript takes whole (`out[tile_m, :]`: m),
        or whose grid index it takes (`out[i, tile_n]` in `for i in hl.grid(m)`: m), each
        with the tensor dims it indexes and by what shift: a store, or a load with an
        extra_mask, may take a tile shifted the same way in every program (`tile.index +
        k`, k an int or a host scalar: its lanes off the tensor touch nothing). None for a
        subscript with an ellipsis."""
        index = node.args[1]
        entries = index if isinstance(index, list | tuple) else [index]
        if any(entry is Ellipsis for entry in entries):
            return {}
        shifts = node.target is memory_ops.store or (
            node.target is memory_ops.load and node.args[2] is not None
        )
        dims: dict[int, frozenset[tuple[int, Any]]] = {}
        for dim, entry in enumerate(e for e in entries if e is not None):
            shifted = shifted_tile(entry) if shifts else None
            key: Any = 0
            if shifted is not None and self._same_in_every_program(shifted):
                entry, key = shifted.block, shifted.key
            value = entry.meta.get("val") if isinstance(entry, fx.Node) else None
            if isinstance(value, torch.SymInt):
                origin = self.origin(value.node.expr)
                # a grid's own index, not one of its subclasses (a tile's begin, end, id)
                if isinstance(origin, BlockSizeOrigin) or (
                    isinstance(origin, GridOrigin) and type(origin) is GridOrigin
                ):
                    dims[origin.block_id] = dims.get(origin.block_id, frozenset()) | {(dim, key)}
        return dims

    def _same_in_every_program(self, shifted: ShiftedTile) -> bool:
        """A shift by an int, a host scalar or a block size (not a value of the program's
        own: a loaded segment start, a tile's begin)."""
        shift = shifted.shift
        if isinstance(shift, int) or not shifted.invariant:
            return shifted.invariant
        origin = self.origin(shift.meta["val"].node.expr)
        return isinstance(origin, BlockSizeOrigin) or (origin is not None and origin.is_host())

    def stored_tensors(self, graph_id: int) -> list[str]:
        """Tensors stored in a graph (and its sub-graphs), in func-argument order."""
        self.facts.analyze(graph_id)
        stored = self.facts.stores[graph_id]
        return [a.name for a in self.kernel_args if a.is_tensor and a.name in stored]


# Knobs of Triton's `tl.range`: the config spec lists them only where Triton is installed,
# and nothing here reads them, so a config written for Triton leaves them out. So does
# `epilogue_subtile`: Helion splits a matmul's epilogue store into subtiles against GPU
# register pressure, a graph rewrite that changes the code's shape and never its values.
TRITON_ONLY_KEYS = frozenset(
    {
        "range_unroll_factors",
        "range_num_stages",
        "range_multi_buffers",
        "range_flattens",
        "range_warp_specializes",
        "static_ranges",
        "epilogue_subtile",
    }
)


# Our knobs (`mlir/attributes.py`): the mlir backend adds them to a kernel's config space;
# a kernel of another backend, lowered through `generate_mlir` or `compile_kernel`, takes
# them in a config all the same.
KNOBS = {
    VECTOR_WIDTH_KEY: EnumFragment(VECTOR_WIDTHS),
    STREAMING_STORES_KEY: EnumFragment(STREAMING_STORES_CHOICES),
}


def resolve_config(
    bound_kernel: Any, config: helion.Config | dict[str, Any] | None
) -> helion.Config:
    """The explicit config, else the kernel's own (set, or its one `configs=` entry),
    else the config spec's default: the config Helion would pick without searching (read
    here, as Helion's `_implicit_config` would, minus its "Using implicit config" print)."""
    if config is None:
        configs = bound_kernel.kernel.configs
        own = configs[0] if len(configs) == 1 and not bound_kernel.settings.force_autotune else None
        config = bound_kernel._config or own or bound_kernel.config_spec.default_config()
    values = config.config if isinstance(config, helion.Config) else config
    return _normalized(
        bound_kernel, {key: value for key, value in values.items() if key not in TRITON_ONLY_KEYS}
    )


def _normalized(bound_kernel: Any, values: dict[str, Any]) -> helion.Config:
    """Helion's normalized config, with our knobs its config space may not have."""
    spec = bound_kernel.config_spec
    knobs = {k: v for k, v in values.items() if k in KNOBS and k not in spec.user_defined_tunables}
    kept = helion.Config(**{k: v for k, v in values.items() if k not in knobs})
    return helion.Config(**spec.normalized_config(kept).config, **_checked_knobs(knobs))


def _checked_knobs(knobs: dict[str, Any]) -> dict[str, Any]:
    """Knob values outside the config space Helion would check them against: one of each
    knob's choices, or Helion's InvalidConfig."""
    for key, value in knobs.items():
        if value not in KNOBS[key].choices:
            raise InvalidConfig(f"{key}={value!r}: expected one of {list(KNOBS[key].choices)}")
    return knobs


def _refuse_ambiguous_tiles(host_body: list[ast.stmt], graphs: list[Any]) -> None:
    """A LoweringError at the first tile whose meaning Helion's backends and its reference
    mode disagree on (tile_scopes)."""
    uses = ambiguous_tiles(host_body)
    if uses:
        node = node_at(graphs, uses[0].lineno)
        raise LoweringError(
            node if node is not None else f"<line {uses[0].lineno}>", reason(uses[0])
        )


def _has_unrollable_loops(graphs: list[Any], block_sizes: dict[int, Any]) -> bool:
    """Whether a rolled reduction loop yields a reduction without a chunk combine here, or
    takes a whole device tensor along the rolled dim (its body would reduce all of it
    in every chunk)."""
    for graph in graphs:
        for loop in graph.graph.find_nodes(op="call_function", target=_tracing_ops._for_loop):
            info = graphs[loop.args[0]]
            if isinstance(info, ReductionLoopGraphInfo) and uncombined_results_used(loop, info):
                return True
    for info in graphs:
        if not isinstance(info, ReductionLoopGraphInfo):
            continue
        rdims = [block_sizes[b] for b in info.block_ids]
        inputs = [n.meta.get("val") for n in info.graph.nodes if n.op == "placeholder"]
        if uncombinable_outputs(info) or any(
            _is_rdim(size, rdim)
            for val in inputs
            for size in getattr(val, "shape", ())
            for rdim in rdims
        ):
            return True
    return False


def _is_rdim(size: Any, rdim: Any) -> bool:
    """A dim of the rdim's size: its block var, or its literal extent (> 1)."""
    if isinstance(size, torch.SymInt):
        return isinstance(rdim.var, torch.SymInt) and size.node.expr == rdim.var.node.expr
    return isinstance(rdim.size, int) and rdim.size > 1 and size == rdim.size


def _persistent(bound_kernel: Any, config: helion.Config) -> helion.Config:
    """The config with every reduction persistent: `reduction_loops` only changes speed, and
    a rolled argmax/max.dim/topk/custom reduce has no chunk combine here."""
    loops = config.config.get("reduction_loops")
    if not loops:
        return config
    return _normalized(bound_kernel, {**config.config, "reduction_loops": [None] * len(loops)})


def _block_size_value(info: Any, config: helion.Config) -> int | None:
    """The config's block size; a persistent rdim's is next_power_of_2(extent); None when
    it is symbolic (then no loop can step by it, and rdims use their exact extent). A
    persistent rdim whose extent varies between calls is symbolic: Helion's config gives it
    the power of two of the size at bind time, and the bound kernel serves every size (a
    row of 203 reduced in 128 lanes, from a bind at 100, left 75 out)."""
    if _persistent_rdim(info, config) and _varies(info.size):
        return None
    value = info.from_config(config)
    if isinstance(value, int):
        return value
    if info.reduction and isinstance(info.size, int):
        return 1 << max(info.size - 1, 0).bit_length()
    return None


def _persistent_rdim(info: Any, config: helion.Config) -> bool:
    """A reduction dim reduced whole, not in a loop of the config's `reduction_loops` chunks."""
    if not isinstance(info.block_size_source, ReductionLoopBlockSizeSource):
        return False
    loops = CompileEnvironment.current().config_spec.reduction_loops
    return loops.config_get(config.reduction_loops, info.block_id, None) is None


def _varies(size: Any) -> bool:
    """A size one bound kernel sees change: symbolic under `static_shapes=False`, and not
    specialized (`hl.specialize` makes each value a bind of its own)."""
    env = CompileEnvironment.current()
    if env.settings.static_shapes or not isinstance(size, torch.SymInt):
        return False
    return bool(env.specialize_expr(size._sympy_()).free_symbols)


def _root_begins(loop: ast.For, rank: int) -> tuple[Any, ...]:
    """The begins of `hl.tile(begin, end)` / `hl.grid(begin, end, step)` as Helion typed
    them (int or SymInt); zeros for `hl.tile(end)`. Helion's Device IR keeps only the
    extent (end - begin): the begin lives in the host loop's call."""
    call = loop.iter
    if (
        not isinstance(call, ast.Call)
        or len(call.args) < 2
        or (isinstance(call.args[1], ast.Constant) and call.args[1].value is None)
    ):
        return (0,) * rank
    first = call.args[0]
    items = first.elts if isinstance(first, ast.List | ast.Tuple) else [first]
    begins = tuple(getattr(getattr(item, "_type_info", None), "value", None) for item in items)
    if len(begins) != rank or not all(isinstance(b, int | torch.SymInt) for b in begins):
        raise HelionMLIRError(
            f"the begin of this grid ({ast.unparse(first)}) is not an int or a scalar "
            "kernel argument: not supported"
        )
    return begins


def _grid_loop(info: Any, tile_size: int | None) -> LoopInfo:
    size = info.size if isinstance(info.size, int) else None
    return LoopInfo(info.block_id, _loop_name(info), tile_size, size, f"%iv_block{info.block_id}")


def _loop_name(info: Any) -> str:
    names = sorted(info.debug_names)
    return names[0] if names else f"block{info.block_id}"


def _kernel_args(bound_kernel: Any, facts: GraphFacts, graph_ids: list[int]) -> list[KernelArgInfo]:
    """Tensor params in signature order, then host-allocated tensors, then scalars."""
    params = list(bound_kernel.host_function.params.arguments)
    seen: dict[str, Any] = {}
    for node in facts.host_tensor_nodes(graph_ids):
        seen.setdefault(str(host_tensor_name(node)), node.meta["val"])
    ordered = [n for n in params if n in seen] + [n for n in seen if n not in params]
    args: list[KernelArgInfo] = []
    for index, name in enumerate(ordered):
        val = seen[name]
        elt = torch_dtype_to_mlir_element_type(val.dtype)
        args.append(
            KernelArgInfo(
                name,
                index,
                True,
                val.dtype,
                tuple(val.shape),
                format_tensor_type(val.shape, elt),
                _ssa(name, args),
                name in params,
            )
        )
    seeds = rng_seed_count(facts, graph_ids)
    if (
        seeds
    ):  # the seeds of hl.rand & co, drawn by the host at each launch (as Helion's host code does)
        args.append(
            KernelArgInfo(
                RNG_SEEDS,
                len(args),
                True,
                torch.int64,
                (seeds,),
                f"tensor<{seeds}xi64>",
                _ssa(RNG_SEEDS, args),
                False,
            )
        )
    scalars = _scalar_params(bound_kernel, facts, graph_ids)
    for name in [p for p in params if p in scalars]:
        dtype = scalars[name]
        elt = torch_dtype_to_mlir_element_type(dtype)
        args.append(KernelArgInfo(name, len(args), False, dtype, (), elt, _ssa(name, args), True))
    return args


def rng_seed_count(facts: GraphFacts, graph_ids: list[int]) -> int:
    """How many seed slots the kernel's random ops read (`_rng_seed(i)`)."""
    slots = [
        node.args[0]
        for gid in graph_ids
        for node in facts.nodes(gid)
        if node.target is random_ops._rng_seed
    ]
    return max(slots) + 1 if slots else 0


def _ssa(name: str, taken: list[KernelArgInfo]) -> str:
    """The func argument's SSA name: readable from any host expression, and unique."""
    base = ssa = f"%{ssa_identifier(name)}"
    n = 0
    while any(arg.ssa_name == ssa for arg in taken):
        n += 1
        ssa = f"{base}_{n}"
    return ssa


def _scalar_params(
    bound_kernel: Any, facts: GraphFacts, graph_ids: list[int]
) -> dict[str, torch.dtype]:
    """Kernel parameters used as symbolic scalars on the device (eps, scale, seed...)."""
    origins = bound_kernel.host_function.expr_to_origin
    found: dict[str, torch.dtype] = {}
    for gid in graph_ids:
        for node in facts.nodes(gid):
            val = node.meta.get("val")
            if node.target is not _tracing_ops._get_symnode or not isinstance(
                val, (torch.SymInt, torch.SymFloat)
            ):
                continue
            entry = origins.get(val.node.expr)
            if entry is not None and isinstance(entry.origin, NameOrigin):
                found[entry.origin.name] = (
                    torch.float64 if isinstance(val, torch.SymFloat) else torch.int64
                )
    return found
