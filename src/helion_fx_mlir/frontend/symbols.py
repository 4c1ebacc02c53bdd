"""SymInt/sympy expressions -> index SSA values.

A symbol is resolved by its origin (`expr_to_origin`) through `ORIGIN_RULES`; compound
expressions (`(u3//u1)`, `Min(128, u9 + 64)`, `PythonMod(u3, u1)`) become arith ops
through `EXPR_OPS`. Sizes of dynamic tensor dims are `tensor.dim` of a func argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

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
from helion_fx_mlir.frontend.emitter import MLIRBuilder
from helion_fx_mlir.frontend.values import Tile, Value


class Scope(Protocol):
    """What resolving a symbol needs of the lowering (the visitor provides it)."""

    builder: MLIRBuilder

    def origin(self, expr: Any) -> Origin | None: ...
    def dynamic_dim(self, symbol: Any) -> tuple[str, int] | None: ...
    def arg_dim(self, name: str, dim: int) -> str: ...
    def host_size(self, tensor: str, dim: int) -> str: ...
    def block_value(self, block_id: int) -> str: ...
    def active_tile(self, block_id: int) -> Tile: ...
    def scalar_arg(self, name: str, ty: str = "f64") -> str: ...
    def scalar_arg_as_index(self, name: str) -> str: ...
    def predicate(self, value: Any) -> str: ...


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


def python_mod(builder: MLIRBuilder, a: str, b: str) -> str:
    """a - floordiv(a, b) * b on index values."""
    quotient = builder.index_op("arith.floordivsi", a, b, "sym_quot")
    return builder.index_op(
        "arith.subi", a, builder.index_op("arith.muli", quotient, b, "sym_prod"), "sym_mod"
    )


def _block_size(scope: Scope, origin: BlockSizeOrigin) -> str:
    return scope.block_value(origin.block_id)


def _scalar_arg(scope: Scope, origin: Origin) -> str:
    return scope.scalar_arg_as_index(origin.host_str())


def _tile_begin(scope: Scope, origin: GridOrigin) -> str:
    return _as_index(scope, scope.active_tile(origin.block_id).offset)


def _tile_end(scope: Scope, origin: TileEndOrigin) -> str:
    tile = scope.active_tile(origin.block_id)
    return scope.builder.index_op(
        "arith.addi",
        _as_index(scope, tile.offset),
        _as_index(scope, tile.size),
        f"block{origin.block_id}_end",
    )


def _tile_id(scope: Scope, origin: TileIdOrigin) -> str:
    tile = scope.active_tile(origin.block_id)
    return scope.builder.index_op(
        "arith.floordivsi",
        _as_index(scope, tile.offset),
        scope.block_value(origin.block_id),
        f"block{origin.block_id}_id",
    )


# Checked in order: subclasses (TileBegin/End/Id are GridOrigins) come first.
ORIGIN_RULES: list[tuple[type[Origin], Callable[[Scope, Origin], str]]] = [
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


def emit_expr(scope: Scope, expr: sympy.Expr) -> str:
    """An index SSA value computing `expr` in the current scope."""
    if isinstance(expr, sympy.Integer) or expr.is_Integer:
        return scope.builder.index(int(expr))
    if isinstance(expr, sympy.Symbol):
        return _symbol(scope, expr)
    if isinstance(expr, MODS):
        return python_mod(scope.builder, *(emit_expr(scope, arg) for arg in expr.args))
    if isinstance(expr, sympy.Piecewise):
        return _piecewise(scope, expr)
    op = next((name for cls, name in EXPR_OPS.items() if isinstance(expr, cls)), None)
    if op is None:
        raise HelionMLIRError(
            f"symbolic expression {expr} ({type(expr).__name__}) is not supported"
        )
    return _fold(scope, op, [emit_expr(scope, arg) for arg in expr.args], "index", "sym")


def _piecewise(scope: Scope, expr: sympy.Piecewise) -> str:
    """The first branch whose condition holds, as nested arith.select (torch.sym_ite's
    expression: a symbolic slice bound below 0 counted from the end)."""
    *branches, (last, always) = expr.args
    if always != sympy.true:
        raise HelionMLIRError(f"symbolic expression {expr} has no branch for every case")
    result = emit_expr(scope, last)
    for value, cond in reversed(branches):
        picked, test = emit_expr(scope, value), emit_condition(scope, cond)
        ssa = scope.builder.fresh("sym_ite")
        scope.builder.emit(f"{ssa} = arith.select {test}, {picked}, {result} : index")
        result = ssa
    return result


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


def emit_condition(scope: Scope, expr: Any) -> str:
    """An i1 SSA value computing a SymBool's expression (`flag and i == 0` on host values)."""
    b = scope.builder
    origin = scope.origin(expr)
    if isinstance(origin, HOST_SCALARS):  # a bool kernel argument is its own expression
        return scope.predicate(Value(scope.scalar_arg_as_index(origin.host_str()), "index"))
    if expr in (sympy.true, sympy.false):
        return b.constant(
            "true" if expr == sympy.true else "false",
            "i1",
            "true" if expr == sympy.true else "false",
        )
    if isinstance(expr, sympy.Not):
        ssa = b.fresh("not")
        operand = emit_condition(scope, expr.args[0])
        b.emit(f"{ssa} = arith.xori {operand}, {b.constant('true', 'i1', 'true')} : i1")
        return ssa
    connective = next((op for cls, op in CONNECTIVES.items() if isinstance(expr, cls)), None)
    if connective is not None:
        return _fold(
            scope, connective, [emit_condition(scope, arg) for arg in expr.args], "i1", "cond"
        )
    predicate = next((p for cls, p in COMPARISONS.items() if isinstance(expr, cls)), None)
    if predicate is None:
        return scope.predicate(Value(emit_expr(scope, expr), "index"))  # an integer's truth
    ssa = b.fresh("cmp")
    lhs, rhs = emit_expr(scope, expr.lhs), emit_expr(scope, expr.rhs)
    b.emit(f"{ssa} = arith.cmpi {predicate}, {lhs}, {rhs} : index")
    return ssa


def _symbol(scope: Scope, sym: sympy.Symbol) -> str:
    dim = scope.dynamic_dim(sym)
    if dim is not None:
        return scope.arg_dim(*dim)
    origin = scope.origin(sym)
    if isinstance(origin, TensorSizeOrigin) and isinstance(origin.value, NameOrigin):
        return scope.host_size(origin.value.name, origin.key)
    for cls, rule in ORIGIN_RULES:
        if isinstance(origin, cls):
            return rule(scope, origin)
    raise HelionMLIRError(f"symbol {sym} (origin {origin}) cannot be resolved on the device")


# Float ops of SymFloat expressions (scalar kernel args combined on the host side).
FLOAT_OPS: dict[type, str] = {
    sympy.Add: "arith.addf",
    sympy.Mul: "arith.mulf",
    sympy_fns.FloatTrueDiv: "arith.divf",
}


def emit_float_expr(scope: Scope, expr: sympy.Expr) -> str:
    """An f64 SSA value computing a SymFloat expression (e.g. 1.0 / (1.0 - p))."""
    if expr.is_Number:
        return scope.builder.constant(repr(float(expr)), "f64", "cst_f64")
    if isinstance(expr, sympy.Symbol):
        origin = scope.origin(expr)
        if isinstance(origin, HOST_SCALARS):
            return scope.scalar_arg(origin.host_str(), "f64")
        raise HelionMLIRError(
            f"float symbol {expr} (origin {origin}) cannot be resolved on the device"
        )
    if isinstance(expr, sympy.Pow) and expr.exp == -1:
        one = scope.builder.constant("1.0", "f64", "cst_f64")
        return scope.builder.binary(
            "arith.divf", one, emit_float_expr(scope, expr.base), "f64", "recip"
        )
    if isinstance(expr, sympy_fns.ToFloat):  # float(n)
        return scope.builder.index_as_f64(emit_expr(scope, expr.args[0]))
    if isinstance(expr, sympy_fns.IntTrueDiv):  # int / int in Python: a float
        lhs, rhs = (scope.builder.index_as_f64(emit_expr(scope, arg)) for arg in expr.args)
        return scope.builder.binary("arith.divf", lhs, rhs, "f64", "truediv")
    op = next((name for cls, name in FLOAT_OPS.items() if isinstance(expr, cls)), None)
    if op is None:
        raise HelionMLIRError(
            f"symbolic float expression {expr} ({type(expr).__name__}) is not supported"
        )
    return _fold(scope, op, [emit_float_expr(scope, arg) for arg in expr.args], "f64", "symf")


def _fold(scope: Scope, op: str, operands: list[str], ty: str, hint: str) -> str:
    """op(op(a, b), c)...: sympy's n-ary Add/Mul/Min/Max as a chain of binary ops."""
    result = operands[0]
    for operand in operands[1:]:
        result = scope.builder.binary(op, result, operand, ty, hint)
    return result


def _as_index(scope: Scope, value: str | int) -> str:
    return scope.builder.index(value) if isinstance(value, int) else value
