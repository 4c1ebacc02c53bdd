"""After bufferization: the results a kernel func returns, as the runtime calls it."""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.registry import register

# Module attribute: {func name: per result, the argument it is written into in place, or -1}.
IN_PLACE_RESULTS = "helion.in_place_results"
# Module attribute: {func name: the arguments its body never uses}. An output whose
# argument is unused can be written straight into the caller's tensor (no aliasing read).
UNUSED_ARGS = "helion.unused_args"


@register("helion-drop-in-place-results", "results that are argument buffers dropped and recorded")
def drop_in_place_results(module: ir.Module) -> None:
    """After bufferization: results that are argument buffers (outputs bufferized in
    place) are dropped from each func, and recorded in IN_PLACE_RESULTS (per result, the
    argument or -1), so that the runtime passes no out buffer for them and copies nothing."""
    found, unused = {}, {}
    with mlir_context():
        for func in ops_named(module, "func.func"):
            if len(func.regions[0].blocks) == 1:
                name = ir.StringAttr(func.attributes["sym_name"]).value
                in_place = _drop_arg_results(func)
                _drop_call_results(module, name, in_place)
                found[name] = ir.DenseI64ArrayAttr.get(in_place)
                args = func.regions[0].blocks[0].arguments
                unused[name] = ir.DenseI64ArrayAttr.get(
                    [i for i, a in enumerate(args) if not any(True for _ in a.uses)]
                )
        module.operation.attributes[IN_PLACE_RESULTS] = ir.DictAttr.get(found)
        module.operation.attributes[UNUSED_ARGS] = ir.DictAttr.get(unused)


@register("helion-clone-repeated-results", "a buffer returned twice is copied for its second place")
def clone_repeated_results(module: ir.Module) -> None:
    """After bufferization: a buffer returned twice (two outputs computed alike, merged by
    CSE) is cloned for its second place; `buffer-results-to-out-params` crashes
    (SIGSEGV) on a func returning one buffer twice."""
    with mlir_context():
        for ret in ops_named(module, "func.return"):
            seen: set[ir.Value] = set()
            for i, value in enumerate(list(ret.operands)):
                if value in seen and isinstance(value.type, ir.MemRefType):
                    with ir.InsertionPoint(ret), ret.location:
                        ret.operands[i] = _copy_of(value)
                seen.add(value)


def _copy_of(buffer: ir.Value) -> ir.Value:
    """A new buffer holding `buffer`'s elements (memref.alloc + memref.copy; a
    bufferization.clone is folded away by the deallocation pipeline)."""
    ty = ir.MemRefType(buffer.type)
    index = ir.IndexType.get()
    sizes = []
    for d in range(ty.rank):
        if ty.is_dynamic_dim(d):
            at = ir.Operation.create(
                "arith.constant",
                results=[index],
                attributes={"value": ir.IntegerAttr.get(index, d)},
            )
            sizes.append(
                ir.Operation.create(
                    "memref.dim", results=[index], operands=[buffer, at.result]
                ).result
            )
    alloc = ir.Operation.create(
        "memref.alloc",
        results=[ty],
        operands=sizes,
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(sizes), 0])},
    )
    ir.Operation.create("memref.copy", results=[], operands=[buffer, alloc.result])
    return alloc.result


def _drop_call_results(module: ir.Module, callee: str, in_place: list[int]) -> None:
    """Calls of the func (a test harness's main) use the argument they passed instead."""
    for call in ops_named(module, "func.call"):
        if ir.FlatSymbolRefAttr(call.attributes["callee"]).value != callee:
            continue
        with ir.InsertionPoint(call), call.location:
            kept = [r for r, at in zip(call.results, in_place) if at < 0]
            new = ir.Operation.create(
                "func.call",
                results=[r.type for r in kept],
                operands=list(call.operands),
                attributes={"callee": call.attributes["callee"]},
            )
        replacements = iter(new.results)
        for result, at in zip(call.results, in_place):
            result.replace_all_uses_with(call.operands[at] if at >= 0 else next(replacements))
        call.erase()


def _drop_arg_results(func: ir.Operation) -> list[int]:
    block = func.regions[0].blocks[0]
    args, ret = list(block.arguments), list(block.operations)[-1]
    in_place = [next((i for i, a in enumerate(args) if a == v), -1) for v in ret.operands]
    kept = [v for v, at in zip(ret.operands, in_place) if at < 0]
    with ir.InsertionPoint(ret), ret.location:
        ir.Operation.create("func.return", operands=kept)
    ret.erase()
    func_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(func_type.inputs, [v.type for v in kept])
    )
    return in_place
