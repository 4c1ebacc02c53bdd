"""Rules for device loops and the values that flow out of them."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import torch
from helion._compiler.device_ir import ReductionLoopGraphInfo
from helion.language import _tracing_ops
from torch import fx

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.emitter import result_name, results_name
from helion_fx_mlir.frontend.rolled_reductions import ROLLED_COMBINES, rolled_target
from helion_fx_mlir.frontend.rule_context import JaggedParents, RuleContext
from helion_fx_mlir.frontend.rules.tensors import emit_full
from helion_fx_mlir.frontend.values import HALVES, TypedValue, Value, mlir_type


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
def getitem(cx: RuleContext) -> Any:
    """The i-th result of a loop or multi-result op."""
    results, index = cx.operands
    return results[index]


@lowers(_tracing_ops._phi)
def phi(cx: RuleContext) -> Value:
    """helion.phi(init, loop_result) (after an _if: the merged scf.if result).

    The _if returned each merged value as the value of its getitem, which the _phi takes."""
    node = cx.node
    merged = next((a for a in reversed(node.args[:2]) if _is_if_result(a)), None)
    if merged is not None:
        return cx.value(merged)
    init, loop_result = cx.value(node.args[0]), cx.value(node.args[1])
    loop_result = cx.coerce(loop_result, init.type)
    ssa = cx.builder.fresh(node.name)
    operands = f"({init.ssa}, {loop_result.ssa})"
    cx.builder.emit(f'{ssa} = "helion.phi"{operands} : ({init.type}, {init.type}) -> {init.type}')
    return Value(ssa, init.type)


def _is_if_result(arg: Any) -> bool:
    """Whether a node is getitem(_if, k): a variable the scf.if merged."""
    return (
        isinstance(arg, fx.Node)
        and arg.target is operator.getitem
        and isinstance(arg.args[0], fx.Node)
        and arg.args[0].target is _tracing_ops._if
    )


@lowers(_tracing_ops._for_loop, _tracing_ops._for_loop_step)
def for_loop(cx: RuleContext) -> Sequence[Value | None]:
    """affine.for with iter_args, one per block id (scf.for for non-affine bounds).

    Only args the body yields back are iter_args (plus host tensors stored inside);
    read-only args are used directly from outside. A rolled reduction's body yields
    per-chunk partials, which are combined into carried accumulators."""
    node = cx.node
    graph_id, begins, ends, args = node.args[:4]
    steps = node.args[4] if len(node.args) > 4 else [None] * len(begins)  # _for_loop_step
    info = cx.graph(graph_id)
    loops = [cx.loop_info(bid) for bid in info.block_ids]
    bounds = list(zip(loops, begins, ends, steps, strict=True))
    placeholders = [n for n in info.graph.nodes if n.op == "placeholder"]
    outputs = list(info.graph.output_node().args[0] or [])
    rolled = isinstance(info, ReductionLoopGraphInfo)
    carried = [] if rolled else carried_args(node, args, len(outputs))
    partials = [
        k for k, out in enumerate(outputs) if rolled and rolled_target(out) in ROLLED_COMBINES
    ]
    stored = cx.stored_tensors(graph_id)
    inits = [cx.coerce(cx.value(args[j]), mlir_type(cx.meta(placeholders[j]))) for j in carried]
    inits += [_identity(cx, outputs[k]) for k in partials]
    inits += [cx.host_tensor(t) for t in stored]
    names = (
        [placeholders[j].name for j in carried]
        + [f"{outputs[k].name}_acc" for k in partials]
        + [f"{t}_iter" for t in stored]
    )
    n_loop = len(carried) + len(partials)

    def body(values: list[Value]) -> list[Value]:
        inputs = [cx.value(a) for a in args]
        for j, value in zip(carried, values):
            inputs[j] = value
        cx.set_host_tensors(dict(zip(stored, values[n_loop:])))
        results = cx.lower_graph(graph_id, inputs)
        if rolled:
            results = [
                _combine(cx, outputs[k], acc, results[k])
                for k, acc in zip(partials, values[len(carried) : n_loop])
            ]
        return [*results, *(cx.host_tensor(t) for t in stored)]

    kind = (
        "affine"
        if all(isinstance(x, int) for x in (*begins, *ends, *(s for s in steps if s is not None)))
        else "scf"
    )
    with cx.jagged_tiles(_jagged_parents(cx, info.block_ids, args)):
        results = cx.emit_loop_nest(kind, bounds, names, inits, body)
    cx.set_host_tensors(dict(zip(stored, results[n_loop:])))
    if not rolled:
        return results[: len(outputs)]
    per_output: list[Value | None] = [None] * len(outputs)  # non-reduction partials are chunk-local
    for k, value in zip(partials, results):
        total = TypedValue(value, _accumulator_meta(cx, outputs[k]))
        per_output[k] = cx.convert(total, cx.meta(outputs[k]).dtype, outputs[k].name).value
    return per_output


def _jagged_parents(cx: RuleContext, block_ids: list[int], args: list[Any]) -> JaggedParents:
    """The loop's jagged tiles: Helion passes the parent of per-row ends as its first arg."""
    jagged = [bid for bid in block_ids if cx.is_jagged_tile(bid)]
    if not jagged:
        return {}
    parent_blocks = [cx.block_id_of(size) for size in args[0].meta["val"].shape]
    return {bid: (cx.value(args[0]), parent_blocks) for bid in jagged}


def _accumulator_meta(cx: RuleContext, partial: fx.Node) -> Any:
    """The carried accumulator of a chunk partial: f32 for sums of f16/bf16 (eager adds in
    f32; a bf16 accumulator of 32 chunks of a row of 8192 x 0.1 reached 804, eager 820),
    else the partial's own type."""
    val = cx.meta(partial)
    if rolled_target(partial) != torch.ops.aten.sum.dim_IntList or val.dtype not in HALVES:
        return val
    with val.fake_mode:
        return torch.empty_like(val, dtype=torch.float32)


def _identity(cx: RuleContext, partial: fx.Node) -> Value:
    _, identity = ROLLED_COMBINES[rolled_target(partial)]
    val = _accumulator_meta(cx, partial)
    return emit_full(
        cx, f"{partial.name}_init", list(val.shape), identity, val.dtype, mlir_type(val)
    )


def _combine(cx: RuleContext, partial: fx.Node, acc: Value, chunk: Value) -> Value:
    combine, _ = ROLLED_COMBINES[rolled_target(partial)]
    wide = _accumulator_meta(cx, partial)
    exact = cx.unrounded_sum(chunk)
    part = (
        TypedValue(exact, wide)
        if exact is not None
        else cx.convert(TypedValue(chunk, cx.meta(partial)), wide.dtype, f"{partial.name}_chunk")
    )
    return cx.torch_call(f"{partial.name}_acc", combine, TypedValue(acc, wide), part).value


# A merged variable's value in one branch: an index into that branch's outputs, or the
# name of a variable the branch leaves unmodified (its value from before the if).
BranchSide = int | str


def _merged_pairs(cx: RuleContext, node: fx.Node) -> list[tuple[BranchSide, BranchSide]]:
    """One (then, else) pair per variable the _if merges (Helion's `branches_outputs`).

    The _if's results are each pair's then value, then each pair's else value (not the
    then graph's outputs followed by the else graph's), so getitem(_if, k) belongs to
    pair k mod n. An if without else has an empty else graph and pairs (index, name)."""
    return list(cx.graph(node.args[1]).branches_outputs or [])


def _outer_args(cx: RuleContext, node: fx.Node) -> dict[str, fx.Node]:
    """The node each variable lifted into a branch had before the if, by variable name;
    a branch that writes a variable lifts it, so the other branch can yield it unmodified."""
    _, then_id, _, then_args, else_args = node.args[:5]
    info = cx.graph(then_id)
    return dict(
        [*zip(info.if_arg_names or [], then_args), *zip(info.else_arg_names or [], else_args)]
    )


def _pair_type(cx: RuleContext, node: fx.Node, pair: tuple[BranchSide, BranchSide]) -> str:
    """A merged variable's type: that of the new value a branch assigns it."""
    side = 0 if isinstance(pair[0], int) else 1
    outputs = cx.graph(node.args[1 + side]).graph.output_node().args[0]
    return mlir_type(cx.meta(outputs[pair[side]]))


def _stored_in_branches(cx: RuleContext, then_id: int, else_id: int) -> list[str]:
    """Host tensors stored in either branch, in func-argument order (the scf.if yields them)."""
    return cx.stored_tensors(then_id, else_id)


@lowers(_tracing_ops._if)
def if_(cx: RuleContext) -> list[Value]:
    """scf.if yielding each merged variable and the host tensors stored in a branch.

    A branch that leaves a variable unmodified (as a missing else does) yields its value
    from before the if."""
    node = cx.node
    pred, then_id, else_id, then_args, else_args = node.args[:5]
    pairs, outer = _merged_pairs(cx, node), _outer_args(cx, node)
    stored = _stored_in_branches(cx, then_id, else_id)
    types = [_pair_type(cx, node, pair) for pair in pairs] + [
        cx.host_tensor(t).type for t in stored
    ]
    cond = condition(cx, pred)
    result = cx.builder.fresh(node.name)
    head = f"scf.if {cond}" + (f" -> ({', '.join(types)})" if types else "")
    cx.builder.emit(f"{results_name(result, len(types))} = {head} {{" if types else f"{head} {{")
    before = cx.host_tensors()
    for side, (graph_id, args) in enumerate(((then_id, then_args), (else_id, else_args))):
        if side:
            cx.set_host_tensors(before)
            cx.builder.emit("} else {")
        with cx.region():
            outputs = cx.lower_graph(graph_id, [cx.value(a) for a in args])
            yields = [
                cx.coerce(_side_value(cx, node, pair[side], outputs, outer), ty)
                for pair, ty in zip(pairs, types)
            ]
            yields += [cx.host_tensor(t) for t in stored]
            if yields:
                cx.builder.emit(f"scf.yield {_ssas(yields)} : {_types(yields)}")
    cx.builder.emit("}")
    values = [Value(result_name(result, i, len(types)), ty) for i, ty in enumerate(types)]
    cx.set_host_tensors(dict(zip(stored, values[len(pairs) :])))
    merged = values[: len(pairs)]
    return merged + merged  # getitem(_if, k) reads pair k mod n (a _phi of it too)


def _ssas(values: list[Value]) -> str:
    return ", ".join(value.ssa for value in values)


def _types(values: list[Value]) -> str:
    return ", ".join(value.type for value in values)


def _side_value(
    cx: RuleContext, node: fx.Node, side: BranchSide, outputs: list[Any], outer: dict[str, fx.Node]
) -> Value:
    """What one branch yields for a merged variable: its new value, or the one before the if."""
    if isinstance(side, int):
        return outputs[side]
    if side not in outer:
        raise LoweringError(
            node,
            f"variable {side!r} is merged after the if but no branch takes its value before it",
        )
    return cx.value(outer[side])


@lowers(_tracing_ops._while_loop)
def while_loop(cx: RuleContext) -> list[Value]:
    """scf.while carrying every arg (and host tensors stored in the body); the condition
    graph gives a 0-d bool, the body yields the args it writes (matched through _phi)."""
    node = cx.node
    cond_id, body_id, args = node.args[0], node.args[1], node.args[2]
    outputs = list(cx.graph(body_id).graph.output_node().args[0] or [])
    writes = carried_args(node, args, len(outputs))
    stored = cx.stored_tensors(body_id)
    placeholders = [n for n in cx.graph(body_id).graph.nodes if n.op == "placeholder"]
    inits = [
        cx.coerce(cx.value(a), mlir_type(cx.meta(p)))
        for a, p in zip(args, placeholders, strict=True)
    ]
    inits += [cx.host_tensor(t) for t in stored]
    types = _types(inits)
    b = cx.builder
    result = b.fresh(node.name)
    names = [p.name for p in placeholders] + stored
    before = [Value(b.fresh(f"{n}_before"), i.type) for n, i in zip(names, inits)]
    pairs = ", ".join(f"{n.ssa} = {i.ssa}" for n, i in zip(before, inits))
    b.emit(f"{results_name(result, len(inits))} = scf.while ({pairs}) : ({types}) -> ({types}) {{")
    with cx.region():
        cx.set_host_tensors(dict(zip(stored, before[len(args) :])))
        cond = cx.lower_graph(cond_id, before[: len(args)])[0]
        b.emit(f"scf.condition({cx.predicate(cond)}) {_ssas(before)} : {types}")
    after = [Value(b.fresh(f"{n}_after"), i.type) for n, i in zip(names, inits)]
    b.emit(f"}} do {{\n^bb0({', '.join(f'{n.ssa}: {n.type}' for n in after)}):")
    with cx.region():
        cx.set_host_tensors(dict(zip(stored, after[len(args) :])))
        produced = cx.lower_graph(body_id, after[: len(args)])
        yields = list(after)
        for k, j in enumerate(writes):
            yields[j] = cx.coerce(produced[k], inits[j].type)
        yields[len(args) :] = [cx.host_tensor(t) for t in stored]
        b.emit(f"scf.yield {_ssas(yields)} : {types}")
    b.emit("}")
    results = [Value(result_name(result, i, len(inits)), init.type) for i, init in enumerate(inits)]
    cx.set_host_tensors(dict(zip(stored, results[len(args) :])))
    return [results[j] for j in writes]


def condition(cx: RuleContext, pred: Any) -> str:
    """The i1 of an `if`'s predicate: a value, or a SymBool over host values (`flag and
    i == 0`, which has no value of its own)."""
    value = cx.bound(pred) if isinstance(pred, fx.Node) else pred
    if (
        value is None
        and isinstance(pred, fx.Node)
        and isinstance(pred.meta.get("val"), torch.SymBool)
    ):
        return cx.condition(pred.meta["val"].node.expr)
    return cx.predicate(value)
