"""ATen ops through torch-mlir's FxImporter, imported once per signature and inlined.

Each distinct (target, operand types, constant arguments) is imported into a tiny
func once per process. Inlining re-prints that func with result and argument names
set through NameLocs, so the printer itself writes our SSA names (no text renaming).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx
from torch_mlir import ir
from torch_mlir.extras.fx_importer import FxImporter

from helion_fx_mlir.mlir.context import mlir_context


@dataclass(frozen=True)
class Operand:
    """A runtime input of an ATen op: its FX meta value and its builtin SSA value."""

    meta: Any
    ssa: str
    mlir_type: str


@dataclass(frozen=True)
class ImportedOp:
    """The torch-dialect func torch-mlir made for one ATen signature."""

    module: ir.Module  # owns `func`; kept alive with it
    func: ir.Operation
    input_types: tuple[str, ...]


@dataclass(frozen=True)
class InlinedOp:
    """Lines to emit and the torch-typed names of the op's results."""

    lines: list[str]
    results: list[str]
    result_types: list[str]


def _type_key(val: Any) -> object:
    if isinstance(val, torch.Tensor):
        return ("tensor", val.dtype, tuple(s if isinstance(s, int) else None for s in val.shape))
    return (type(val).__name__,)


def _const_key(arg: Any) -> object:
    if isinstance(arg, (list, tuple)):
        return (type(arg).__name__, tuple(_const_key(a) for a in arg))
    if isinstance(arg, float):
        return ("float", arg.hex())
    return (type(arg).__name__, repr(arg))


def signature_key(
    target: Any,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    operands: Sequence[Operand],
    result: Any,
) -> tuple:
    """Equal keys import to the same func: operands by type, the rest by value."""
    position = {id(o): i for i, o in enumerate(operands)}

    def key(arg: Any) -> object:
        if isinstance(arg, Operand):
            return ("operand", position[id(arg)], _type_key(arg.meta))
        if isinstance(arg, (list, tuple)):
            return (type(arg).__name__, tuple(key(a) for a in arg))
        return _const_key(arg)

    result_key = (
        tuple(_type_key(v) for v in result)
        if isinstance(result, (list, tuple))
        else _type_key(result)
    )
    return (
        target,
        key(list(args)),
        tuple(sorted((k, key(v)) for k, v in kwargs.items())),
        result_key,
    )


_IMPORTED: dict[tuple, ImportedOp] = {}


def _import_graph(graph: fx.Graph) -> ImportedOp:
    with mlir_context():
        importer = FxImporter(context=mlir_context())
        func = importer.import_stateless_graph(graph, func_name="aten_op")
    types = tuple(str(a.type) for a in func.regions[0].blocks[0].arguments)
    return ImportedOp(importer.module, func.operation, types)


def _graph_for(
    target: Any,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    operands: Sequence[Operand],
    result: Any,
) -> fx.Graph:
    graph = fx.Graph()
    placeholders = {}
    for i, operand in enumerate(operands):
        ph = graph.placeholder(f"in{i}")
        ph.meta["val"] = operand.meta
        placeholders[id(operand)] = ph

    def to_fx(arg: Any) -> Any:
        if isinstance(arg, Operand):
            return placeholders[id(arg)]
        if isinstance(arg, (list, tuple)):
            return type(arg)(to_fx(a) for a in arg)
        return arg

    call = graph.call_function(
        target, tuple(to_fx(a) for a in args), {k: to_fx(v) for k, v in kwargs.items()}
    )
    call.meta["val"] = result
    if isinstance(result, (list, tuple)):
        items = []
        for i, val in enumerate(result):
            item = graph.call_function(operator.getitem, (call, i))
            item.meta["val"] = val
            items.append(item)
        graph.output(tuple(items))
    else:
        graph.output(call)
    return graph


def import_aten(
    target: Any,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    operands: Sequence[Operand],
    result: Any,
) -> ImportedOp:
    """The imported func for this signature (FxImporter runs once per signature)."""
    key = signature_key(target, args, kwargs, operands, result)
    if key not in _IMPORTED:
        _IMPORTED[key] = _import_graph(_graph_for(target, args, kwargs, operands, result))
    return _IMPORTED[key]


_KIND_HINTS = {
    "torch.constant.int": "int",
    "torch.constant.float": "float",
    "torch.constant.bool": "bool",
    "torch.constant.none": "none",
    "torch.constant.str": "str",
    "torch.constant.device": "device",
    "torch.prim.ListConstruct": "list",
}


def inline(
    imported: ImportedOp,
    arg_names: Sequence[str],
    name: str,
    fresh: Callable[[str], str],
    reserve: Callable[[str], str],
) -> InlinedOp:
    """The imported func's body with our names: args named, results named after the node.

    Names are NameLocs set on a copy of the func (the cached one, which other calls share,
    stays as imported); the printer takes them as prefixes, and prints each body op."""
    with mlir_context():
        func = imported.func.clone()
        block = func.regions[0].blocks[0]
        for arg, arg_name in zip(block.arguments, arg_names, strict=True):
            arg.set_location(ir.Location.name(arg_name.lstrip("%")))
        *body, terminator = [op.operation for op in block.operations]
        returned = list(terminator.operands)
        names: dict[ir.Value, str] = dict(zip(block.arguments, arg_names))
        for op in body:
            names.update(_named_results(op, returned, name, fresh, reserve))
        lines = [line for op in body for line in _asm(op).splitlines()]
        return InlinedOp(lines, [names[v] for v in returned], [str(v.type) for v in returned])


def _named_results(
    op: ir.Operation,
    returned: list[ir.Value],
    name: str,
    fresh: Callable[[str], str],
    reserve: Callable[[str], str],
) -> dict[ir.Value, str]:
    """Name an op by a NameLoc; the printer names its results %P, %P_0, %P_1, ..."""
    is_result = any(r in returned for r in op.results)
    ssa = fresh(f"{name}_vt" if is_result else f"{name}_{_KIND_HINTS.get(op.name, 't')}")
    op.location = ir.Location.name(ssa.lstrip("%"))
    return {r: ssa if i == 0 else reserve(f"{ssa}_{i - 1}") for i, r in enumerate(op.results)}


def _asm(op: ir.Operation) -> str:
    """One op as the func's printer writes it (numbered in the func's scope)."""
    return str(op.get_asm(use_name_loc_as_prefix=True, assume_verified=True))
