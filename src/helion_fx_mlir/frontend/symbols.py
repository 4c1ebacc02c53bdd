"""SymInt/sympy expressions -> index SSA values.

A symbol is resolved by its origin (`expr_to_origin`) through `ORIGIN_RULES`; compound
expressions (`(u3//u1)`, `Min(128, u9 + 64)`, `PythonMod(u3, u1)`) become arith ops
through `EXPR_OPS`. Sizes of dynamic tensor dims are `tensor.dim` of a func argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import sympy
from helion._compiler.variable_origin import (
    AttributeOrigin,
    BlockSizeOrigin,
    ClosureOrigin,
    GridOrigin,
    NameOrigin,
    Origin,
    TensorSizeOrigin,
    TileBeginOrigin,
    TileEndOrigin,
    TileIdOrigin,
)
from torch.utils._sympy import functions as sympy_fns

from helion_fx_mlir.errors import HelionMLIRError
from helion_fx_mlir.frontend.values import Value

if TYPE_CHECKING:
    from helion_fx_mlir.frontend.visitor import IRVisitor

# Binary integer ops, folded left over the arguments of n-ary sympy nodes.
EXPR_OPS: dict[type, str] = {
    sympy.Add: "arith.addi",
    sympy.Mul: "arith.muli",
    sympy_fns.FloorDiv: "arith.floordivsi",
    sympy_fns.Min: "arith.minsi",
    sympy_fns.Max: "arith.maxsi",
    sympy.Min: "arith.minsi",
    sympy.Max: "arith.maxsi",
    sympy_fns.CeilDiv: "arith.ceildivsi",
}


# Remainders with the divisor's sign, as Python's `%` (-7 % 3 == 2; arith.remsi gives -1).
MODS = (sympy_fns.PythonMod, sympy_fns.Mod, sympy.Mod)


def python_mod(v: IRVisitor, a: str, b: str) -> str:
    """a - floordiv(a, b) * b on index values."""
    quotient = v.emit_scalar_op("arith.floordivsi", a, b, "index", "sym_quot")
    return v.emit_scalar_op(
        "arith.subi",
        a,
        v.emit_scalar_op("arith.muli", quotient, b, "index", "sym_prod"),
        "index",
        "sym_mod",
    )


def _block_size(v: IRVisitor, origin: BlockSizeOrigin) -> str:
    return v.block_value(origin.block_id)


def _scalar_arg(v: IRVisitor, origin: Origin) -> str:
    return v.scalar_arg_as_index(origin.host_str())


def _tile_begin(v: IRVisitor, origin: GridOrigin) -> str:
    return v.active_tile(origin.block_id).offset


def _tile_end(v: IRVisitor, origin: TileEndOrigin) -> str:
    tile = v.active_tile(origin.block_id)
    return v.emit_index_op(
        "arith.addi", tile.offset, v.as_index(tile.size), f"block{origin.block_id}_end"
    )


def _tile_id(v: IRVisitor, origin: TileIdOrigin) -> str:
    tile = v.active_tile(origin.block_id)
    return v.emit_index_op(
        "arith.floordivsi",
        tile.offset,
        v.block_value(origin.block_id),
        f"block{origin.block_id}_id",
    )


# Checked in order: subclasses (TileBegin/End/Id are GridOrigins) come first.
ORIGIN_RULES: list[tuple[type[Origin], Callable[[IRVisitor, Origin], str]]] = [
    (BlockSizeOrigin, _block_size),
    (TileEndOrigin, _tile_end),
    (TileIdOrigin, _tile_id),
    (TileBeginOrigin, _tile_begin),
    (GridOrigin, _tile_begin),
    (NameOrigin, _scalar_arg),
    (ClosureOrigin, _scalar_arg),
    (AttributeOrigin, _scalar_arg),
]
# Scalars that live on the host: kernel parameters and host variables, values closures
# capture, module globals (`_source_module.scale`, as Helion names them).
HOST_SCALARS = (NameOrigin, ClosureOrigin, AttributeOrigin)


def emit_expr(v: IRVisitor, expr: sympy.Expr) -> str:
    """An index SSA value computing `expr` in the current scope."""
    if isinstance(expr, sympy.Integer) or expr.is_Integer:
        return v.builder.index(int(expr))
    if isinstance(expr, sympy.Symbol):
        return _symbol(v, expr)
    if isinstance(expr, MODS):
        return python_mod(v, *(emit_expr(v, arg) for arg in expr.args))
    op = next((name for cls, name in EXPR_OPS.items() if isinstance(expr, cls)), None)
    if op is None:
        raise HelionMLIRError(
            f"symbolic expression {expr} ({type(expr).__name__}) is not supported"
        )
    return _fold(v, op, [emit_expr(v, arg) for arg in expr.args], "index", "sym")


# SymBool expressions: comparisons of index values, and their boolean combinations.
COMPARISONS: dict[type, str] = {
    sympy.Eq: "eq",
    sympy.Ne: "ne",
    sympy.Lt: "slt",
    sympy.Le: "sle",
    sympy.Gt: "sgt",
    sympy.Ge: "sge",
}
CONNECTIVES: dict[type, str] = {sympy.And: "arith.andi", sympy.Or: "arith.ori"}


def emit_condition(v: IRVisitor, expr: Any) -> str:
    """An i1 SSA value computing a SymBool's expression (`flag and i == 0` on host values)."""
    b = v.builder
    origin = v.ctx.origin(expr)
    if isinstance(origin, HOST_SCALARS):  # a bool kernel argument is its own expression
        return v.predicate(Value(v.scalar_arg_as_index(origin.host_str()), "index"))
    if expr in (sympy.true, sympy.false):
        return b.constant(
            "true" if expr == sympy.true else "false",
            "i1",
            "true" if expr == sympy.true else "false",
        )
    if isinstance(expr, sympy.Not):
        ssa = b.fresh("not")
        b.emit(
            f"{ssa} = arith.xori {emit_condition(v, expr.args[0])}, {b.constant('true', 'i1', 'true')} : i1"
        )
        return ssa
    connective = next((op for cls, op in CONNECTIVES.items() if isinstance(expr, cls)), None)
    if connective is not None:
        return _fold(v, connective, [emit_condition(v, arg) for arg in expr.args], "i1", "cond")
    predicate = next((p for cls, p in COMPARISONS.items() if isinstance(expr, cls)), None)
    if predicate is None:
        return v.predicate(Value(emit_expr(v, expr), "index"))  # an integer's truth
    ssa = b.fresh("cmp")
    b.emit(
        f"{ssa} = arith.cmpi {predicate}, {emit_expr(v, expr.lhs)}, {emit_expr(v, expr.rhs)} : index"
    )
    return ssa


def _symbol(v: IRVisitor, sym: sympy.Symbol) -> str:
    dim = v.ctx.dynamic_dim(sym)
    if dim is not None:
        return v.arg_dim(*dim)
    origin = v.ctx.origin(sym)
    if isinstance(origin, TensorSizeOrigin) and isinstance(origin.value, NameOrigin):
        return v.host_size(origin.value.name, origin.key)
    for cls, rule in ORIGIN_RULES:
        if isinstance(origin, cls):
            return rule(v, origin)
    raise HelionMLIRError(f"symbol {sym} (origin {origin}) cannot be resolved on the device")


# Float ops of SymFloat expressions (scalar kernel args combined on the host side).
FLOAT_OPS: dict[type, str] = {
    sympy.Add: "arith.addf",
    sympy.Mul: "arith.mulf",
    sympy_fns.FloatTrueDiv: "arith.divf",
}


def emit_float_expr(v: IRVisitor, expr: sympy.Expr) -> str:
    """An f64 SSA value computing a SymFloat expression (e.g. 1.0 / (1.0 - p))."""
    if expr.is_Number:
        return v.builder.constant(repr(float(expr)), "f64", "cst_f64")
    if isinstance(expr, sympy.Symbol):
        origin = v.ctx.origin(expr)
        if isinstance(origin, HOST_SCALARS):
            return v.scalar_arg(origin.host_str(), "f64")
        raise HelionMLIRError(
            f"float symbol {expr} (origin {origin}) cannot be resolved on the device"
        )
    if isinstance(expr, sympy.Pow) and expr.exp == -1:
        one = v.builder.constant("1.0", "f64", "cst_f64")
        return v.emit_scalar_op("arith.divf", one, emit_float_expr(v, expr.base), "f64", "recip")
    if isinstance(expr, sympy_fns.ToFloat):  # float(n)
        return v.index_as_f64(emit_expr(v, expr.args[0]))
    if isinstance(expr, sympy_fns.IntTrueDiv):  # int / int in Python: a float
        lhs, rhs = (v.index_as_f64(emit_expr(v, arg)) for arg in expr.args)
        return v.emit_scalar_op("arith.divf", lhs, rhs, "f64", "truediv")
    op = next((name for cls, name in FLOAT_OPS.items() if isinstance(expr, cls)), None)
    if op is None:
        raise HelionMLIRError(
            f"symbolic float expression {expr} ({type(expr).__name__}) is not supported"
        )
    return _fold(v, op, [emit_float_expr(v, arg) for arg in expr.args], "f64", "symf")


def _fold(v: IRVisitor, op: str, operands: list[str], ty: str, hint: str) -> str:
    """op(op(a, b), c)...: sympy's n-ary Add/Mul/Min/Max as a chain of binary ops."""
    result = operands[0]
    for operand in operands[1:]:
        result = v.emit_scalar_op(op, result, operand, ty, hint)
    return result
