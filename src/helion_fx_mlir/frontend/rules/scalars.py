"""Rules for Python `operator.*` on SymInt/SymFloat/SymBool scalars (arith on index/f64/i1)."""

from __future__ import annotations

import operator
from typing import Any

import torch
from helion.language import _tracing_ops
from torch import fx

from helion_fx_mlir.errors import HelionMLIRError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.symbols import python_mod
from helion_fx_mlir.frontend.values import Value

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
    # min and max of ints (Helion clamps a slice's symbolic bounds with them: `x[:half]`,
    # `x[-2:]`); of floats not: Python's min(nan, 1) is nan and min(1, nan) is 1, which no
    # arith op gives both ways.
    torch.sym_min: ("arith.minsi", ""),
    torch.sym_max: ("arith.maxsi", ""),
}


def scalar(cx: RuleContext, arg: Any) -> Value:
    """An index/f64/i1 SSA value for a Python number or a scalar node."""
    b = cx.builder
    if isinstance(arg, bool):
        return Value(b.constant("true" if arg else "false", "i1", "true" if arg else "false"), "i1")
    if isinstance(arg, int):
        return Value(b.index(arg), "index")
    if isinstance(arg, float):
        return Value(b.constant(repr(arg), "f64", "cst_f64"), "f64")
    known = cx.bound(arg) if isinstance(arg, fx.Node) else None
    if isinstance(known, Value) and known.type in ("index", "f64", "i1"):
        return known
    val = arg.meta["val"] if isinstance(arg, fx.Node) else arg
    if isinstance(val, torch.SymFloat):
        return Value(cx.scalar_float(val), "f64")
    return Value(cx.index_value(arg), "index")


def as_f64(cx: RuleContext, value: Value) -> Value:
    return value if value.type == "f64" else Value(cx.builder.index_as_f64(value.ssa), "f64")


@lowers(*ARITH)
def arith_op(cx: RuleContext) -> Value:
    """arith on index (SymInt), f64 (SymFloat) or a comparison to i1 (SymBool)."""
    node = cx.node
    lhs, rhs = (scalar(cx, a) for a in node.args)
    int_op, float_op = ARITH[node.target]
    if lhs.type == rhs.type == "index" and int_op:
        op, ty = int_op, "index"
    else:
        lhs, rhs, op, ty = as_f64(cx, lhs), as_f64(cx, rhs), float_op, "f64"
    if not op:
        raise HelionMLIRError(f"{node.target.__name__} on {lhs.type} is not supported")
    is_cmp = op.startswith(("arith.cmpi", "arith.cmpf"))
    ssa = cx.builder.fresh(node.name)
    cx.builder.emit(f"{ssa} = {op}{',' if is_cmp else ''} {lhs.ssa}, {rhs.ssa} : {ty}")
    result_ty = "i1" if is_cmp else ty
    return Value(ssa, result_ty)


@lowers(operator.neg)
def negate(cx: RuleContext) -> Value:
    """`-a` on a scalar: 0 - a on ints, arith.negf on floats."""
    value = scalar(cx, cx.node.args[0])
    if value.type == "i1":
        raise HelionMLIRError("- of a bool on the device is not supported")
    b = cx.builder
    ssa = b.fresh(cx.node.name)
    if value.type == "index":
        b.emit(f"{ssa} = arith.subi {b.index(0)}, {value.ssa} : index")
    else:
        b.emit(f"{ssa} = arith.negf {value.ssa} : f64")
    return Value(ssa, value.type)


@lowers(operator.mod)
def modulo(cx: RuleContext) -> Value:
    """`a % b` on ints as Python means it: the result takes the sign of b (-7 % 3 == 2,
    where arith.remsi gives -1)."""
    node = cx.node
    lhs, rhs = (scalar(cx, a) for a in node.args)
    if lhs.type != "index" or rhs.type != "index":
        raise HelionMLIRError("% of floats on the device is not supported")
    return Value(python_mod(cx.builder, lhs.ssa, rhs.ssa), "index")


@lowers(torch.sym_float)
def sym_float(cx: RuleContext) -> Value:
    """arith.sitofp of the integer to f64 (float(n) of a SymInt)."""
    node = cx.node
    return as_f64(cx, scalar(cx, node.args[0]))


@lowers(torch.sym_ite)
def sym_ite(cx: RuleContext) -> Value:
    """`a if cond else b` on scalars: arith.select.

    Helion counts a symbolic slice bound below 0 from the end with it, as Python does
    (`x[:, n - 5:]` of 3 columns takes the last 2)."""
    cond, then, other = cx.node.args
    pick, rest = scalar(cx, then), scalar(cx, other)
    if pick.type != rest.type:
        pick, rest = as_f64(cx, pick), as_f64(cx, rest)
    ssa = cx.builder.fresh(cx.node.name)
    cx.builder.emit(
        f"{ssa} = arith.select {_predicate(cx, cond)}, {pick.ssa}, {rest.ssa} : {pick.type}"
    )
    return Value(ssa, pick.type)


@lowers(_tracing_ops._and, _tracing_ops._or)
def bool_op(cx: RuleContext) -> Value:
    """`a and b`, `a or b` on scalar predicates (SymBools, 0-d bool tensors): arith.andi/ori
    on i1, both sides evaluated (they have no side effects on the device)."""
    node = cx.node
    lhs, rhs = (_predicate(cx, a) for a in node.args)
    op = "arith.andi" if node.target is _tracing_ops._and else "arith.ori"
    ssa = cx.builder.fresh(node.name)
    cx.builder.emit(f"{ssa} = {op} {lhs}, {rhs} : i1")
    return Value(ssa, "i1")


@lowers(_tracing_ops._not)
def bool_not(cx: RuleContext) -> Value:
    """`not a` on a scalar predicate: arith.xori with true."""
    node = cx.node
    ssa = cx.builder.fresh(node.name)
    operand = _predicate(cx, node.args[0])
    cx.builder.emit(
        f"{ssa} = arith.xori {operand}, {cx.builder.constant('true', 'i1', 'true')} : i1"
    )
    return Value(ssa, "i1")


def _predicate(cx: RuleContext, arg: Any) -> str:
    value = cx.bound(arg) if isinstance(arg, fx.Node) else arg
    return cx.predicate(value if isinstance(value, (Value, bool)) else scalar(cx, arg))
