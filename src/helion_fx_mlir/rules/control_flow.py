"""Rules for device loops and the values that flow out of them."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import torch.fx as fx
from helion.language import _tracing_ops

from ..dispatch import lowers
from ..errors import LoweringError
from ..ir_values import Value, mlir_type
from ..lowering_context import LoopInfo

if TYPE_CHECKING:
    from ..ir_visitor import IRVisitor


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


@lowers(operator.getitem)
def getitem(v: IRVisitor, node: fx.Node) -> Any:
    """The i-th result of a loop or multi-result op."""
    source, index = node.args
    return v.node_values[source][index]


@lowers(_tracing_ops._phi)
def phi(v: IRVisitor, node: fx.Node) -> Value:
    """helion.phi(init, loop_result)."""
    init, loop_result = v.value(node.args[0]), v.value(node.args[1])
    loop_result = v.coerce(loop_result, init.type)
    ssa = v.builder.fresh(node.name)
    v.builder.emit(f'{ssa} = "helion.phi"({init.ssa}, {loop_result.ssa}) : ({init.type}, {init.type}) -> {init.type}')
    return Value(ssa, init.type)


@lowers(_tracing_ops._for_loop)
def for_loop(v: IRVisitor, node: fx.Node) -> list[Value]:
    """affine.for with iter_args, one per block id (scf.for for non-affine bounds).

    Only args the body yields back are iter_args (plus host tensors stored inside);
    read-only args are used directly from outside."""
    graph_id, begins, ends, args = node.args
    info = v.ctx.graphs[graph_id]
    loops = [LoopInfo(bid, v.ctx.loop_name(bid), v.ctx.block_size_values[bid], None, f"%iv_block{bid}") for bid in info.block_ids]
    bounds = list(zip(loops, begins, ends, strict=True))
    placeholders = [n for n in info.graph.nodes if n.op == "placeholder"]
    n_results = len(info.graph.output_node().args[0] or [])
    carried = carried_args(node, n_results)
    stored = v.ctx.stored_tensors(graph_id)
    inits = [v.coerce(v.value(args[j]), mlir_type(placeholders[j].meta["val"])) for j in carried]
    inits += [v.tensor_state[t] for t in stored]
    names = [placeholders[j].name for j in carried] + [f"{t}_iter" for t in stored]

    def body(values: list[Value]) -> list[Value]:
        inputs = [v.value(a) for a in args]
        for j, value in zip(carried, values):
            inputs[j] = value
        v.tensor_state.update(zip(stored, values[n_results:]))
        outputs = v.visit_graph(graph_id, inputs)
        return [*outputs, *(v.tensor_state[t] for t in stored)]

    kind = "affine" if all(isinstance(x, int) for x in (*begins, *ends)) else "scf"
    results = v.emit_loop_nest(kind, bounds, names, inits, body)
    v.tensor_state.update(zip(stored, results[n_results:]))
    return results[:n_results]
