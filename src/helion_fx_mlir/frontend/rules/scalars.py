"""Rules for Python `operator.*` on SymInt/SymFloat/SymBool scalars (arith on index/f64/i1)."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import torch
from helion.language import _tracing_ops
from torch import fx

from helion_fx_mlir.errors import HelionMLIRError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.symbols import python_mod
from helion_fx_mlir.frontend.values import Value

if TYPE_CHECKING:
    from helion_fx_mlir.frontend.visitor import IRVisitor

# operator -> (op on index, op on f64); comparisons give i1.
ARITH: dict[Any, tuple[str, str]] = {
    operator.add: ("arith.addi", "arith.addf"),
    operator.sub: ("arith.subi", "arith.subf"),
    operator.mul: ("arith.muli", "arith.mulf"),
    operator.floordiv: ("arith.floordivsi", ""),
    operator.truediv: ("", "arith.divf"),
    operator.lshift: ("arith.shli", ""),
    operator.rshift: ("arith.shrsi", ""),
    operator.and_: ("arith.andi", ""),
    operator.or_: ("arith.ori", ""),
    operator.xor: ("arith.xori", ""),
    operator.eq: ("arith.cmpi eq", "arith.cmpf oeq"),
    operator.ne: ("arith.cmpi ne", "arith.cmpf une"),
    operator.lt: ("arith.cmpi slt", "arith.cmpf olt"),
    operator.le: ("arith.cmpi sle", "arith.cmpf ole"),
    operator.gt: ("arith.cmpi sgt", "arith.cmpf ogt"),
    operator.ge: ("arith.cmpi sge", "arith.cmpf oge"),
}


def scalar(v: IRVisitor, arg: Any) -> Value:
    """An index/f64/i1 SSA value for a Python number or a scalar node."""
    b = v.builder
    if isinstance(arg, bool):
        return Value(b.constant("true" if arg else "false", "i1", "true" if arg else "false"), "i1")
    if isinstance(arg, int):
        return Value(b.index(arg), "index")
    if isinstance(arg, float):
        return Value(b.constant(repr(arg), "f64", "cst_f64"), "f64")
    known = v.node_values.get(arg) if isinstance(arg, fx.Node) else None
    if isinstance(known, Value) and known.type in ("index", "f64", "i1"):
        return known
    val = arg.meta["val"] if isinstance(arg, fx.Node) else arg
    if isinstance(val, torch.SymFloat):
        return Value(v.scalar_float(val), "f64")
    return Value(v.index_value(arg), "index")


def as_f64(v: IRVisitor, value: Value) -> Value:
    return value if value.type == "f64" else Value(v.index_as_f64(value.ssa), "f64")


@lowers(*ARITH)
def arith_op(v: IRVisitor, node: fx.Node) -> Value:
    """arith on index (SymInt), f64 (SymFloat) or a comparison to i1 (SymBool)."""
    lhs, rhs = (scalar(v, a) for a in node.args)
    int_op, float_op = ARITH[node.target]
    if lhs.type == rhs.type == "index" and int_op:
        op, ty = int_op, "index"
    else:
        lhs, rhs, op, ty = as_f64(v, lhs), as_f64(v, rhs), float_op, "f64"
    if not op:
        raise HelionMLIRError(f"{node.target.__name__} on {lhs.type} is not supported")
    is_cmp = op.startswith(("arith.cmpi", "arith.cmpf"))
    ssa = v.builder.fresh(node.name)
    v.builder.emit(f"{ssa} = {op}{',' if is_cmp else ''} {lhs.ssa}, {rhs.ssa} : {ty}")
    result_ty = "i1" if is_cmp else ty
    return Value(ssa, result_ty)


@lowers(operator.mod)
def modulo(v: IRVisitor, node: fx.Node) -> Value:
    """`a % b` on ints as Python means it: the result takes the sign of b (-7 % 3 == 2,
    where arith.remsi gives -1)."""
    lhs, rhs = (scalar(v, a) for a in node.args)
    if lhs.type != "index" or rhs.type != "index":
        raise HelionMLIRError("% of floats on the device is not supported")
    return Value(python_mod(v, lhs.ssa, rhs.ssa), "index")


@lowers(torch.sym_float)
def sym_float(v: IRVisitor, node: fx.Node) -> Value:
    """arith.sitofp of the integer to f64 (float(n) of a SymInt)."""
    return as_f64(v, scalar(v, node.args[0]))


@lowers(_tracing_ops._and, _tracing_ops._or)
def bool_op(v: IRVisitor, node: fx.Node) -> Value:
    """`a and b`, `a or b` on scalar predicates (SymBools, 0-d bool tensors): arith.andi/ori
    on i1, both sides evaluated (they have no side effects on the device)."""
    lhs, rhs = (_predicate(v, a) for a in node.args)
    op = "arith.andi" if node.target is _tracing_ops._and else "arith.ori"
    ssa = v.builder.fresh(node.name)
    v.builder.emit(f"{ssa} = {op} {lhs}, {rhs} : i1")
    return Value(ssa, "i1")


@lowers(_tracing_ops._not)
def bool_not(v: IRVisitor, node: fx.Node) -> Value:
    """`not a` on a scalar predicate: arith.xori with true."""
    ssa = v.builder.fresh(node.name)
    v.builder.emit(
        f"{ssa} = arith.xori {_predicate(v, node.args[0])}, {v.builder.constant('true', 'i1', 'true')} : i1"
    )
    return Value(ssa, "i1")


def _predicate(v: IRVisitor, arg: Any) -> str:
    value = v.node_values.get(arg) if isinstance(arg, fx.Node) else arg
    return v.predicate(value if isinstance(value, (Value, bool)) else scalar(v, arg))
