"""Rules for device loops and the values that flow out of them."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import torch
import torch.fx as fx
from helion._compiler.device_ir import ReductionLoopGraphInfo
from helion.language import _tracing_ops

from ..dispatch import lowers
from ..errors import LoweringError
from ..ir_values import TypedValue, Value, mlir_type
from ..lowering_context import LoopInfo
from .tensors import emit_full

if TYPE_CHECKING:
    from ..ir_visitor import IRVisitor


def carried_args(loop: fx.Node, args: list[Any], n_results: int) -> list[int]:
    """For each loop result i, the arg position j it carries: found through
    `_phi(args[j], getitem(loop, i))`, else positional."""
    carried = list(range(n_results))
    for user in loop.users:
        if user.target is operator.getitem:
            for phi in user.users:
                if phi.target is _tracing_ops._phi and phi.args[0] in args:
                    carried[user.args[1]] = args.index(phi.args[0])
    if any(j >= len(args) for j in carried):
        raise LoweringError(loop, f"loop yields {n_results} values but carries {len(args)} args")
    return carried


@lowers(operator.getitem)
def getitem(v: IRVisitor, node: fx.Node) -> Any:
    """The i-th result of a loop or multi-result op."""
    source, index = node.args
    return v.node_values[source][index]


@lowers(_tracing_ops._phi)
def phi(v: IRVisitor, node: fx.Node) -> Value:
    """helion.phi(init, loop_result) (after an _if: the merged scf.if result)."""
    if node in v.merged:
        return v.merged[node]
    init, loop_result = v.value(node.args[0]), v.value(node.args[1])
    loop_result = v.coerce(loop_result, init.type)
    ssa = v.builder.fresh(node.name)
    v.builder.emit(f'{ssa} = "helion.phi"({init.ssa}, {loop_result.ssa}) : ({init.type}, {init.type}) -> {init.type}')
    return Value(ssa, init.type)


@lowers(_tracing_ops._for_loop, _tracing_ops._for_loop_step)
def for_loop(v: IRVisitor, node: fx.Node) -> list[Value | None]:
    """affine.for with iter_args, one per block id (scf.for for non-affine bounds).

    Only args the body yields back are iter_args (plus host tensors stored inside);
    read-only args are used directly from outside. A rolled reduction's body yields
    per-chunk partials, which are combined into carried accumulators."""
    graph_id, begins, ends, args = node.args[:4]
    steps = node.args[4] if len(node.args) > 4 else [None] * len(begins)  # _for_loop_step
    info = v.ctx.graphs[graph_id]
    loops = [LoopInfo(bid, v.ctx.loop_name(bid), v.ctx.block_size_values.get(bid), None, f"%iv_block{bid}") for bid in info.block_ids]
    bounds = list(zip(loops, begins, ends, steps, strict=True))
    placeholders = [n for n in info.graph.nodes if n.op == "placeholder"]
    outputs = list(info.graph.output_node().args[0] or [])
    rolled = isinstance(info, ReductionLoopGraphInfo)
    carried = [] if rolled else carried_args(node, args, len(outputs))
    partials = [k for k, out in enumerate(outputs) if rolled and _rolled_target(out) in ROLLED_COMBINES]
    stored = v.ctx.stored_tensors(graph_id)
    inits = [v.coerce(v.value(args[j]), mlir_type(placeholders[j].meta["val"])) for j in carried]
    inits += [_identity(v, outputs[k]) for k in partials]
    inits += [v.tensor_state[t] for t in stored]
    names = [placeholders[j].name for j in carried] + [f"{outputs[k].name}_acc" for k in partials] + [f"{t}_iter" for t in stored]
    n_loop = len(carried) + len(partials)

    def body(values: list[Value]) -> list[Value]:
        inputs = [v.value(a) for a in args]
        for j, value in zip(carried, values):
            inputs[j] = value
        v.tensor_state.update(zip(stored, values[n_loop:]))
        results = v.visit_graph(graph_id, inputs)
        if rolled:
            results = [_combine(v, outputs[k], acc, results[k]) for k, acc in zip(partials, values[len(carried):n_loop])]
        return [*results, *(v.tensor_state[t] for t in stored)]

    kind = "affine" if all(isinstance(x, int) for x in (*begins, *ends, *(s for s in steps if s is not None))) else "scf"
    results = v.emit_loop_nest(kind, bounds, names, inits, body)
    v.tensor_state.update(zip(stored, results[n_loop:]))
    if not rolled:
        return results[: len(outputs)]
    per_output: list[Value | None] = [None] * len(outputs)  # non-reduction partials are chunk-local
    for k, value in zip(partials, results):
        per_output[k] = value
    return per_output


# Reductions a rolled loop accumulates across chunks: combine op and identity.
ROLLED_COMBINES: dict[Any, tuple[Any, float]] = {
    torch.ops.aten.sum.dim_IntList: (torch.ops.aten.add.Tensor, 0.0),
    torch.ops.aten.amax.default: (torch.ops.aten.maximum.default, float("-inf")),
    torch.ops.aten.amin.default: (torch.ops.aten.minimum.default, float("inf")),
}


def _rolled_target(partial: fx.Node) -> Any:
    """The reduction a chunk partial is: its target, or sum for a mean's extra buffer."""
    if partial.target is _tracing_ops._inductor_lowering_extra:
        orig = partial.meta.get("orig_node")
        return torch.ops.aten.sum.dim_IntList if orig is not None and orig.target is torch.ops.aten.mean.dim else None
    return partial.target


def _identity(v: IRVisitor, partial: fx.Node) -> Value:
    _, identity = ROLLED_COMBINES[_rolled_target(partial)]
    val = partial.meta["val"]
    return emit_full(v, f"{partial.name}_init", list(val.shape), identity, val.dtype, mlir_type(val))


def _combine(v: IRVisitor, partial: fx.Node, acc: Value, chunk: Value) -> Value:
    combine, _ = ROLLED_COMBINES[_rolled_target(partial)]
    val = partial.meta["val"]
    return v.torch_call(f"{partial.name}_acc", combine, TypedValue(acc, val), TypedValue(chunk, val)).value


def _if_output(value: Any, if_node: fx.Node) -> int | None:
    """k when `value` is getitem(if_node, k)."""
    if isinstance(value, fx.Node) and value.target is operator.getitem and value.args[0] is if_node:
        return value.args[1]
    return None


def _phi_sides(phi_node: fx.Node, if_node: fx.Node, n_then: int) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """What each branch yields for a merged value: ('output', index in that branch's
    outputs) or ('outer', node) for a variable the branch left unmodified."""

    def side(then: bool) -> tuple[str, Any]:
        for arg in phi_node.args:
            k = _if_output(arg, if_node)
            if k is not None and (k < n_then) == then:
                return ("output", k if then else k - n_then)
        outer = [a for a in phi_node.args if _if_output(a, if_node) is None]
        if not outer:
            raise LoweringError(phi_node, "a merged value has no definition in one branch")
        return ("outer", outer[0])

    return side(True), side(False)


def _merged_phis(node: fx.Node, n_then: int) -> list[tuple[fx.Node, tuple[str, Any], tuple[str, Any]]]:
    """The _phi nodes merging this _if's branch results, in graph order."""
    phis = {user: None for item in node.users for user in item.users if user.target is _tracing_ops._phi}
    return [(p, *_phi_sides(p, node, n_then)) for p in phis]


@lowers(_tracing_ops._if)
def if_(v: IRVisitor, node: fx.Node) -> list[Value | None]:
    """scf.if yielding each merged (phi'd) value and the host tensors stored in a branch."""
    pred, then_id, else_id, then_args, else_args = node.args[:5]
    then_graph, else_graph = v.ctx.graphs[then_id].graph, v.ctx.graphs[else_id].graph if else_id is not None else None
    n_then = len(then_graph.output_node().args[0] or [])
    merged = _merged_phis(node, n_then)
    stored = sorted(set(v.ctx.stored_tensors(then_id)) | set(v.ctx.stored_tensors(else_id) if else_id is not None else ()),
                    key=[a.name for a in v.ctx.kernel_args].index)
    types = [mlir_type(phi_node.meta["val"]) for phi_node, _, _ in merged] + [v.tensor_state[t].type for t in stored]
    cond = v.predicate(v.node_values.get(pred) if isinstance(pred, fx.Node) else pred)
    result = v.builder.fresh(node.name)
    head = f"scf.if {cond}" + (f" -> ({', '.join(types)})" if types else "")
    v.builder.emit(f"{v.results_name(result, len(types))} = {head} {{" if types else f"{head} {{")
    before = dict(v.tensor_state)
    for then in (True, False):
        if not then:
            v.tensor_state.update(before)
            v.builder.emit("} else {")
        v.enter_region()
        graph_id, args = (then_id, then_args) if then else (else_id, else_args)
        outputs = v.visit_graph(graph_id, [v.value(a) for a in args]) if graph_id is not None else []
        yields = [_yield_value(v, side, outputs, ty) for (_, *sides), ty in zip(merged, types) for side in [sides[0 if then else 1]]]
        yields += [v.tensor_state[t] for t in stored]
        if yields:
            v.builder.emit(f"scf.yield {', '.join(y.ssa for y in yields)} : {', '.join(y.type for y in yields)}")
        v.exit_region()
    v.builder.emit("}")
    values = [Value(v.result_name(result, i, len(types)), ty) for i, ty in enumerate(types)]
    v.tensor_state.update(zip(stored, values[len(merged):]))
    n_else = len(v.ctx.graphs[else_id].graph.output_node().args[0] or []) if else_id is not None else 0
    raw: list[Value | None] = [None] * (n_then + n_else)  # what getitem(_if, k) reads
    for (phi_node, then_side, else_side), value in zip(merged, values):
        v.merged[phi_node] = value
        for offset, (kind, k) in ((0, then_side), (n_then, else_side)):
            if kind == "output":
                raw[offset + k] = value
    return raw


def _yield_value(v: IRVisitor, side: tuple[str, Any], outputs: list[Any], ty: str) -> Value:
    kind, what = side
    value = outputs[what] if kind == "output" else v.value(what)
    return v.coerce(value, ty)


@lowers(_tracing_ops._while_loop)
def while_loop(v: IRVisitor, node: fx.Node) -> list[Value]:
    """scf.while carrying every arg (and host tensors stored in the body); the condition
    graph gives a 0-d bool, the body yields the args it writes (matched through _phi)."""
    cond_id, body_id, args = node.args[0], node.args[1], node.args[2]
    outputs = list(v.ctx.graphs[body_id].graph.output_node().args[0] or [])
    writes = carried_args(node, args, len(outputs))
    stored = v.ctx.stored_tensors(body_id)
    placeholders = [n for n in v.ctx.graphs[body_id].graph.nodes if n.op == "placeholder"]
    inits = [v.coerce(v.value(a), mlir_type(p.meta["val"])) for a, p in zip(args, placeholders, strict=True)]
    inits += [v.tensor_state[t] for t in stored]
    types = ", ".join(i.type for i in inits)
    b = v.builder
    result = b.fresh(node.name)
    before = [b.fresh(f"{p.name}_before") for p in placeholders] + [b.fresh(f"{t}_before") for t in stored]
    b.emit(f"{v.results_name(result, len(inits))} = scf.while ({', '.join(f'{n} = {i.ssa}' for n, i in zip(before, inits))}) : ({types}) -> ({types}) {{")
    v.enter_region()
    current = [Value(n, i.type) for n, i in zip(before, inits)]
    v.tensor_state.update(zip(stored, current[len(args):]))
    cond = v.visit_graph(cond_id, current[: len(args)])[0]
    b.emit(f"scf.condition({v.predicate(cond)}) {', '.join(c.ssa for c in current)} : {types}")
    v.exit_region()
    after = [b.fresh(f"{p.name}_after") for p in placeholders] + [b.fresh(f"{t}_after") for t in stored]
    b.emit(f"}} do {{\n^bb0({', '.join(f'{n}: {i.type}' for n, i in zip(after, inits))}):")
    v.enter_region()
    current = [Value(n, i.type) for n, i in zip(after, inits)]
    v.tensor_state.update(zip(stored, current[len(args):]))
    produced = v.visit_graph(body_id, current[: len(args)])
    yields = list(current)
    for k, j in enumerate(writes):
        yields[j] = v.coerce(produced[k], inits[j].type)
    yields[len(args):] = [v.tensor_state[t] for t in stored]
    b.emit(f"scf.yield {', '.join(y.ssa for y in yields)} : {types}")
    v.exit_region()
    b.emit("}")
    results = [Value(v.result_name(result, i, len(inits)), init.type) for i, init in enumerate(inits)]
    v.tensor_state.update(zip(stored, results[len(args):]))
    return [results[j] for j in writes]
