"""Rules for device loops and the values that flow out of them."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import torch
from helion._compiler.device_ir import ReductionLoopGraphInfo
from helion.language import _tracing_ops, reduce_ops
from torch import fx

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.lowering_context import LoopInfo
from helion_fx_mlir.frontend.rules.tensors import ROLLED_EXTRAS, emit_full
from helion_fx_mlir.frontend.symbols import emit_condition
from helion_fx_mlir.frontend.values import TypedValue, Value, mlir_type

if TYPE_CHECKING:
    from helion_fx_mlir.frontend.visitor import IRVisitor


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
    v.builder.emit(
        f'{ssa} = "helion.phi"({init.ssa}, {loop_result.ssa}) : ({init.type}, {init.type}) -> {init.type}'
    )
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
    loops = [
        LoopInfo(
            bid, v.ctx.loop_name(bid), v.ctx.block_size_values.get(bid), None, f"%iv_block{bid}"
        )
        for bid in info.block_ids
    ]
    bounds = list(zip(loops, begins, ends, steps, strict=True))
    placeholders = [n for n in info.graph.nodes if n.op == "placeholder"]
    outputs = list(info.graph.output_node().args[0] or [])
    rolled = isinstance(info, ReductionLoopGraphInfo)
    carried = [] if rolled else carried_args(node, args, len(outputs))
    partials = [
        k for k, out in enumerate(outputs) if rolled and _rolled_target(out) in ROLLED_COMBINES
    ]
    stored = v.ctx.stored_tensors(graph_id)
    inits = [v.coerce(v.value(args[j]), mlir_type(v.val(placeholders[j]))) for j in carried]
    inits += [_identity(v, outputs[k]) for k in partials]
    inits += [v.tensor_state[t] for t in stored]
    names = (
        [placeholders[j].name for j in carried]
        + [f"{outputs[k].name}_acc" for k in partials]
        + [f"{t}_iter" for t in stored]
    )
    n_loop = len(carried) + len(partials)

    def body(values: list[Value]) -> list[Value]:
        inputs = [v.value(a) for a in args]
        for j, value in zip(carried, values):
            inputs[j] = value
        v.tensor_state.update(zip(stored, values[n_loop:]))
        results = v.visit_graph(graph_id, inputs)
        if rolled:
            results = [
                _combine(v, outputs[k], acc, results[k])
                for k, acc in zip(partials, values[len(carried) : n_loop])
            ]
        return [*results, *(v.tensor_state[t] for t in stored)]

    kind = (
        "affine"
        if all(isinstance(x, int) for x in (*begins, *ends, *(s for s in steps if s is not None)))
        else "scf"
    )
    jagged = [bid for bid in info.block_ids if v.ctx.bound_kernel.env.is_jagged_tile(bid)]
    for bid in jagged:  # Helion passes the parent of per-row ends as the loop's first arg
        v.jagged_parents[bid] = (
            v.value(args[0]),
            [v.block_id_of(size) for size in args[0].meta["val"].shape],
        )
    results = v.emit_loop_nest(kind, bounds, names, inits, body)
    for bid in jagged:
        del v.jagged_parents[bid]
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


# Reductions that are no plain op target's lowering class (Helion's own, multi-result ATen).
OTHER_REDUCTIONS = {
    reduce_ops._reduce,
    torch.ops.aten.topk.default,
    torch.ops.aten.max.dim,
    torch.ops.aten.min.dim,
}


def uncombinable_outputs(info: Any) -> list[fx.Node]:
    """Outputs of a rolled reduction loop that reduce over the chunk but whose chunk
    partials this lowering cannot combine (argmax, max.dim, topk, custom combines)."""
    outputs = info.graph.output_node().args[0] or []
    return [
        out
        for out in outputs
        if isinstance(out, fx.Node)
        and _is_reduction(out)
        and _rolled_target(out) not in ROLLED_COMBINES
    ]


def uncombined_results_used(loop: fx.Node, info: Any) -> bool:
    """Whether code after a rolled loop reads a result that is no combinable partial (a
    chunk of loaded values, for a cat after the loop): only the last chunk would be there."""
    outputs = info.graph.output_node().args[0] or []
    return any(
        user.target is operator.getitem
        and user.users
        and _rolled_target(outputs[user.args[1]]) not in ROLLED_COMBINES
        for user in loop.users
    )


def _is_reduction(node: fx.Node) -> bool:
    return (
        node.target in OTHER_REDUCTIONS
        or type(node.meta.get("lowering")).__name__ == "ReductionLowering"
    )


def _rolled_target(partial: fx.Node) -> Any:
    """The reduction a chunk partial is: its target, or sum for a mean's or var's extra buffer."""
    if partial.target is _tracing_ops._inductor_lowering_extra:
        orig = partial.meta.get("orig_node")
        return (
            torch.ops.aten.sum.dim_IntList
            if orig is not None and orig.target in ROLLED_EXTRAS
            else None
        )
    return partial.target


def _identity(v: IRVisitor, partial: fx.Node) -> Value:
    _, identity = ROLLED_COMBINES[_rolled_target(partial)]
    val = v.val(partial)
    return emit_full(
        v, f"{partial.name}_init", list(val.shape), identity, val.dtype, mlir_type(val)
    )


def _combine(v: IRVisitor, partial: fx.Node, acc: Value, chunk: Value) -> Value:
    combine, _ = ROLLED_COMBINES[_rolled_target(partial)]
    val = v.val(partial)
    return v.torch_call(
        f"{partial.name}_acc", combine, TypedValue(acc, val), TypedValue(chunk, val)
    ).value


# A merged variable's value in one branch: an index into that branch's outputs, or the
# name of a variable the branch leaves unmodified (its value from before the if).
BranchSide = int | str


def _merged_pairs(v: IRVisitor, node: fx.Node) -> list[tuple[BranchSide, BranchSide]]:
    """One (then, else) pair per variable the _if merges (Helion's `branches_outputs`).

    The _if's results are each pair's then value, then each pair's else value (not the
    then graph's outputs followed by the else graph's), so getitem(_if, k) belongs to
    pair k mod n. An if without else has an empty else graph and pairs (index, name)."""
    return list(v.ctx.graphs[node.args[1]].branches_outputs or [])


def _outer_args(v: IRVisitor, node: fx.Node) -> dict[str, fx.Node]:
    """The node each variable lifted into a branch had before the if, by variable name;
    a branch that writes a variable lifts it, so the other branch can yield it unmodified."""
    _, then_id, _, then_args, else_args = node.args[:5]
    info = v.ctx.graphs[then_id]
    return dict(
        [*zip(info.if_arg_names or [], then_args), *zip(info.else_arg_names or [], else_args)]
    )


def _pair_type(v: IRVisitor, node: fx.Node, pair: tuple[BranchSide, BranchSide]) -> str:
    """A merged variable's type: that of the new value a branch assigns it."""
    side = 0 if isinstance(pair[0], int) else 1
    outputs = v.ctx.graphs[node.args[1 + side]].graph.output_node().args[0]
    return mlir_type(v.val(outputs[pair[side]]))


def _stored_in_branches(v: IRVisitor, then_id: int, else_id: int) -> list[str]:
    """Host tensors stored in either branch, in func-argument order (the scf.if yields them)."""
    stored = set(v.ctx.stored_tensors(then_id)) | set(v.ctx.stored_tensors(else_id))
    return sorted(stored, key=[a.name for a in v.ctx.kernel_args].index)


def _merged_phis(node: fx.Node, n_pairs: int) -> dict[fx.Node, int]:
    """The _phi nodes merging this _if's results, each with the pair it merges."""
    items = [item for item in node.users if item.target is operator.getitem]
    return {
        phi_node: item.args[1] % n_pairs
        for item in items
        for phi_node in item.users
        if phi_node.target is _tracing_ops._phi
    }


@lowers(_tracing_ops._if)
def if_(v: IRVisitor, node: fx.Node) -> list[Value]:
    """scf.if yielding each merged variable and the host tensors stored in a branch.

    A branch that leaves a variable unmodified (as a missing else does) yields its value
    from before the if."""
    pred, then_id, else_id, then_args, else_args = node.args[:5]
    pairs, outer = _merged_pairs(v, node), _outer_args(v, node)
    stored = _stored_in_branches(v, then_id, else_id)
    types = [_pair_type(v, node, pair) for pair in pairs] + [v.tensor_state[t].type for t in stored]
    cond = condition(v, pred)
    result = v.builder.fresh(node.name)
    head = f"scf.if {cond}" + (f" -> ({', '.join(types)})" if types else "")
    v.builder.emit(f"{v.results_name(result, len(types))} = {head} {{" if types else f"{head} {{")
    before = dict(v.tensor_state)
    for side, (graph_id, args) in enumerate(((then_id, then_args), (else_id, else_args))):
        if side:
            v.tensor_state.update(before)
            v.builder.emit("} else {")
        v.enter_region()
        outputs = v.visit_graph(graph_id, [v.value(a) for a in args])
        yields = [
            v.coerce(_side_value(v, node, pair[side], outputs, outer), ty)
            for pair, ty in zip(pairs, types)
        ]
        yields += [v.tensor_state[t] for t in stored]
        if yields:
            v.builder.emit(
                f"scf.yield {', '.join(y.ssa for y in yields)} : {', '.join(y.type for y in yields)}"
            )
        v.exit_region()
    v.builder.emit("}")
    values = [Value(v.result_name(result, i, len(types)), ty) for i, ty in enumerate(types)]
    v.tensor_state.update(zip(stored, values[len(pairs) :]))
    merged = values[: len(pairs)]
    for phi_node, k in _merged_phis(node, len(pairs)).items():
        v.merged[phi_node] = merged[k]
    return merged + merged  # getitem(_if, k) reads pair k mod n


def _side_value(
    v: IRVisitor, node: fx.Node, side: BranchSide, outputs: list[Any], outer: dict[str, fx.Node]
) -> Value:
    """What one branch yields for a merged variable: its new value, or the one before the if."""
    if isinstance(side, int):
        return outputs[side]
    if side not in outer:
        raise LoweringError(
            node,
            f"variable {side!r} is merged after the if but no branch takes its value before it",
        )
    return v.value(outer[side])


@lowers(_tracing_ops._while_loop)
def while_loop(v: IRVisitor, node: fx.Node) -> list[Value]:
    """scf.while carrying every arg (and host tensors stored in the body); the condition
    graph gives a 0-d bool, the body yields the args it writes (matched through _phi)."""
    cond_id, body_id, args = node.args[0], node.args[1], node.args[2]
    outputs = list(v.ctx.graphs[body_id].graph.output_node().args[0] or [])
    writes = carried_args(node, args, len(outputs))
    stored = v.ctx.stored_tensors(body_id)
    placeholders = [n for n in v.ctx.graphs[body_id].graph.nodes if n.op == "placeholder"]
    inits = [
        v.coerce(v.value(a), mlir_type(v.val(p))) for a, p in zip(args, placeholders, strict=True)
    ]
    inits += [v.tensor_state[t] for t in stored]
    types = ", ".join(i.type for i in inits)
    b = v.builder
    result = b.fresh(node.name)
    before = [b.fresh(f"{p.name}_before") for p in placeholders] + [
        b.fresh(f"{t}_before") for t in stored
    ]
    b.emit(
        f"{v.results_name(result, len(inits))} = scf.while ({', '.join(f'{n} = {i.ssa}' for n, i in zip(before, inits))}) : ({types}) -> ({types}) {{"
    )
    v.enter_region()
    current = [Value(n, i.type) for n, i in zip(before, inits)]
    v.tensor_state.update(zip(stored, current[len(args) :]))
    cond = v.visit_graph(cond_id, current[: len(args)])[0]
    b.emit(f"scf.condition({v.predicate(cond)}) {', '.join(c.ssa for c in current)} : {types}")
    v.exit_region()
    after = [b.fresh(f"{p.name}_after") for p in placeholders] + [
        b.fresh(f"{t}_after") for t in stored
    ]
    b.emit(f"}} do {{\n^bb0({', '.join(f'{n}: {i.type}' for n, i in zip(after, inits))}):")
    v.enter_region()
    current = [Value(n, i.type) for n, i in zip(after, inits)]
    v.tensor_state.update(zip(stored, current[len(args) :]))
    produced = v.visit_graph(body_id, current[: len(args)])
    yields = list(current)
    for k, j in enumerate(writes):
        yields[j] = v.coerce(produced[k], inits[j].type)
    yields[len(args) :] = [v.tensor_state[t] for t in stored]
    b.emit(f"scf.yield {', '.join(y.ssa for y in yields)} : {types}")
    v.exit_region()
    b.emit("}")
    results = [
        Value(v.result_name(result, i, len(inits)), init.type) for i, init in enumerate(inits)
    ]
    v.tensor_state.update(zip(stored, results[len(args) :]))
    return [results[j] for j in writes]


def condition(v: IRVisitor, pred: Any) -> str:
    """The i1 of an `if`'s predicate: a value, or a SymBool over host values (`flag and
    i == 0`, which has no value of its own)."""
    value = v.node_values.get(pred) if isinstance(pred, fx.Node) else pred
    if (
        value is None
        and isinstance(pred, fx.Node)
        and isinstance(pred.meta.get("val"), torch.SymBool)
    ):
        return emit_condition(v, pred.meta["val"].node.expr)
    return v.predicate(value)
