"""Index arithmetic of a grid's programs, evaluated for all of them.

A pass that specializes a grid's body (`grid_edges.py`) needs to know where a value
computed from the program ids alone is the same for every program (a tile's size) and
where it changes (the last tile, partial). Grids are small and the arithmetic short, so
each value is evaluated exactly, on every program: as its values over the ids it depends
on (a tile's size on one id: one number per row of tiles, not per program). Anything else
(a load, a function argument, an op not known here, a division by zero) leaves the value
unknown: None, never a guess. Plain Python: the tools for MLIR text do not import torch.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from torch_mlir import ir


@dataclass(frozen=True)
class Spread:
    """A value over a grid: the ids it depends on (`dims`, ascending, `shape` their
    trips) and its value at each combination of them, the last id fastest."""

    dims: tuple[int, ...]
    shape: tuple[int, ...]
    items: tuple[int, ...]

    def at(self, point: dict[int, int]) -> int:
        """The value where the ids are `point` (ids it does not depend on ignored)."""
        flat = 0
        for dim, trips in zip(self.dims, self.shape):
            flat = flat * trips + point[dim]
        return self.items[flat]

    def points(self) -> Iterator[dict[int, int]]:
        """Every combination of the ids it depends on."""
        for point in itertools.product(*map(range, self.shape)):
            yield dict(zip(self.dims, point))


def _trunc_div(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _trunc_rem(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


_BINARY: dict[str, Callable[[int, int], int]] = {
    "arith.addi": operator.add,
    "arith.subi": operator.sub,
    "arith.muli": operator.mul,
    "arith.minsi": min,
    "arith.maxsi": max,
    "arith.minui": min,
    "arith.maxui": max,
    "arith.divsi": _trunc_div,
    "arith.divui": _trunc_div,
    "arith.floordivsi": operator.floordiv,
    "arith.ceildivsi": _ceil_div,
    "arith.ceildivui": _ceil_div,
    "arith.remsi": _trunc_rem,
    "arith.remui": _trunc_rem,
    "arith.andi": operator.and_,
    "arith.ori": operator.or_,
    "arith.xori": operator.xor,
}
_UNSIGNED = {"arith.minui", "arith.maxui", "arith.divui", "arith.ceildivui", "arith.remui"}
_DIVISIONS = {
    "arith.divsi",
    "arith.divui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.ceildivui",
    "arith.remsi",
    "arith.remui",
}
# cmpi's predicate attribute -> the comparison (u* on values checked not to be negative).
_COMPARISONS: dict[int, Callable[[int, int], bool]] = {
    0: operator.eq,
    1: operator.ne,
    2: operator.lt,
    3: operator.le,
    4: operator.gt,
    5: operator.ge,
    6: operator.lt,
    7: operator.le,
    8: operator.gt,
    9: operator.ge,
}
_UNSIGNED_PREDICATES = {6, 7, 8, 9}
# How an affine map's results combine: affine.apply has one, min and max take theirs.
_AFFINE: dict[str, Callable[[int, int], int] | None] = {
    "affine.apply": None,
    "affine.min": min,
    "affine.max": max,
}
_AFFINE_BINARY: dict[type, Callable[[int, int], int]] = {
    ir.AffineAddExpr: operator.add,
    ir.AffineMulExpr: operator.mul,
    ir.AffineModExpr: operator.mod,
    ir.AffineFloorDivExpr: operator.floordiv,
    ir.AffineCeilDivExpr: _ceil_div,
}
_AFFINE_DIVISIONS = (ir.AffineModExpr, ir.AffineFloorDivExpr, ir.AffineCeilDivExpr)
_OTHERS = {"arith.constant", "arith.cmpi", "arith.select", "arith.index_cast"}


@dataclass
class GridValues:
    """Values over the programs whose ids run through `ranges` (one range per id, the
    grid's block arguments `ids`), memoized."""

    ids: Sequence[ir.Value]
    ranges: Sequence[range]
    _known: dict[ir.Value, Spread | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for dim, (value, ids) in enumerate(zip(self.ids, self.ranges)):
            self._known[value] = Spread((dim,), (len(ids),), tuple(ids))

    def of(self, value: ir.Value) -> Spread | None:
        """The value on every program; None where it is not known."""
        if value not in self._known:
            self._known[value] = self._evaluate(value)
        return self._known[value]

    @staticmethod
    def evaluated(op: ir.Operation) -> bool:
        """Whether the op is one this module evaluates (pure index arithmetic)."""
        return op.name in _BINARY or op.name in _AFFINE or op.name in _OTHERS

    def uniform(self, value: ir.Value) -> int | None:
        """The value where it is the same on every program, else None."""
        spread = self.of(value)
        if spread is None or not spread.items or len(set(spread.items)) != 1:
            return None
        return spread.items[0]

    def changes_last(self, value: ir.Value, dim: int) -> bool:
        """Whether the value is the same along id `dim` on every program but the last
        (for each of the other ids), and another on the last for some. Along 2 programs
        every value that changes does so last (an offset too)."""
        spread = self.of(value)
        if spread is None or dim not in spread.dims or len(self.ranges[dim]) < 2:
            return False
        last = len(self.ranges[dim]) - 1
        changes = False
        for point in spread.points():
            if point[dim] == 0:
                first = spread.at(point)
                if any(spread.at({**point, dim: i}) != first for i in range(1, last)):
                    return False
                changes = changes or spread.at({**point, dim: last}) != first
        return changes

    def _evaluate(self, value: ir.Value) -> Spread | None:
        owner = value.owner
        if isinstance(owner, ir.Block) or not _integer_like(value.type):
            return None
        if owner.name == "arith.constant":
            attr = owner.attributes["value"]
            if not isinstance(attr, ir.IntegerAttr | ir.BoolAttr):
                return None
            number = int(attr.value)
            return Spread((), (), (int(number != 0) if _is_bit(value.type) else number,))
        operands = [self.of(v) for v in owner.operands]
        known = [v for v in operands if v is not None]
        return _apply(owner, known) if len(known) == len(operands) else None


def _apply(op: ir.OpView, operands: list[Spread]) -> Spread | None:
    """One op on its operands' values; None for an op not known here, an unsigned op on a
    negative value or a division by zero."""
    name = op.name
    unsigned = name in _UNSIGNED or (
        name == "arith.cmpi" and _predicate(op) in _UNSIGNED_PREDICATES
    )
    if unsigned and any(min(v.items, default=0) < 0 for v in operands):
        return None
    if name in _DIVISIONS and 0 in operands[1].items:
        return None
    if name in _BINARY:
        return _combine(_BINARY[name], operands)
    if name == "arith.cmpi":
        compare = _COMPARISONS[_predicate(op)]
        return _combine(lambda a, b: int(compare(a, b)), operands)
    if name == "arith.select":
        return _combine(lambda c, a, b: a if c else b, operands)
    if name == "arith.index_cast" and not _is_bit(op.operands[0].type):
        return operands[0]
    if name in _AFFINE:
        return _affine_map(op, operands)
    return None


def _combine(function: Callable[..., int], operands: list[Spread]) -> Spread:
    """The function of the operands on every combination of the ids they depend on."""
    shapes = {d: n for v in operands for d, n in zip(v.dims, v.shape)}
    dims = tuple(sorted(shapes))
    shape = tuple(shapes[d] for d in dims)
    items = tuple(
        function(*(v.at(dict(zip(dims, point))) for v in operands))
        for point in itertools.product(*map(range, shape))
    )
    return Spread(dims, shape, items)


def _affine_map(op: ir.OpView, operands: list[Spread]) -> Spread | None:
    """affine.apply (one result), or the least or greatest of affine.min's or max's."""
    amap = ir.AffineMapAttr(op.attributes["map"]).value
    results = [_affine(e, operands, amap.n_dims) for e in amap.results]
    combine = _AFFINE[op.name]
    known = [r for r in results if r is not None]
    if len(known) != len(results) or (len(known) != 1 and combine is None):
        return None
    return functools.reduce(lambda a, b: _combine(combine, [a, b]), known) if combine else known[0]


def _affine(expr: ir.AffineExpr, operands: list[Spread], dims: int) -> Spread | None:
    """An affine expression on the values of its dims, then its symbols."""
    if isinstance(expr, ir.AffineConstantExpr):
        return Spread((), (), (ir.AffineConstantExpr(expr).value,))
    if isinstance(expr, ir.AffineDimExpr):
        return operands[ir.AffineDimExpr(expr).position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return operands[dims + ir.AffineSymbolExpr(expr).position]
    for kind, combine in _AFFINE_BINARY.items():
        if isinstance(expr, kind):
            binary = kind(expr)
            lhs, rhs = _affine(binary.lhs, operands, dims), _affine(binary.rhs, operands, dims)
            if lhs is None or rhs is None:
                return None
            if isinstance(binary, _AFFINE_DIVISIONS) and min(rhs.items) <= 0:
                return None
            return _combine(combine, [lhs, rhs])
    return None


def _predicate(op: ir.OpView) -> int:
    return ir.IntegerAttr(op.attributes["predicate"]).value


def _is_bit(type_: ir.Type) -> bool:
    return isinstance(type_, ir.IntegerType) and type_.width == 1


def _integer_like(type_: ir.Type) -> bool:
    """index, i1 or a 64-bit integer: the types evaluated without overflow concerns."""
    if isinstance(type_, ir.IndexType):
        return True
    return isinstance(type_, ir.IntegerType) and type_.width in (1, 64)
