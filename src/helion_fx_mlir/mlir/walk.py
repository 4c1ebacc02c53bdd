"""Finding ops in a module, and the constants they hold (and index constants to build):
the rewrites through the bindings start from these."""

from __future__ import annotations

from collections.abc import Callable

from torch_mlir import ir
from torch_mlir.dialects import arith, vector

DYNAMIC = ir.ShapedType.get_dynamic_size()  # a dim, size or offset known at run time only
# Index arithmetic: pure ops computing an index from other indices.
INDEX_ARITHMETIC = frozenset(
    {
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.minsi",
        "arith.maxsi",
        "arith.minui",
        "arith.maxui",
        "arith.index_cast",
        "affine.apply",
        "affine.min",
        "affine.max",
    }
)

# Ops whose result is a view of their first operand's buffer (same memory, another shape).
MEMREF_VIEWS = frozenset(
    {"memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast"}
)


def ops_where(module: ir.Module, keep: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """Every op `keep` accepts, in walk order (collected first, so callers may rewrite them)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if keep(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def first_op(module: ir.Module, keep: Callable[[ir.Operation], bool]) -> ir.Operation | None:
    """The first op `keep` accepts, in walk order; the walk stops there."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if keep(op):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found[0] if found else None


def calls_intrinsic(module: ir.Module, prefix: str) -> bool:
    """Whether a module in the LLVM dialect calls an intrinsic whose name starts with
    `prefix` (one of its overloads)."""

    def is_call(op: ir.Operation) -> bool:
        return op.name == "llvm.call_intrinsic" and ir.StringAttr(
            op.attributes["intrin"]
        ).value.startswith(prefix)

    return first_op(module, is_call) is not None


def ops_named(module: ir.Module, *names: str) -> list[ir.Operation]:
    return ops_where(module, lambda op: op.name in names)


def within(op: ir.OpView | ir.Operation, container: ir.OpView | ir.Operation) -> bool:
    """Whether op is container or nested in its regions."""
    current: ir.Operation | None = op.operation
    while current is not None:
        if current == container.operation:
            return True
        current = current.parent.operation if current.parent is not None else None
    return False


def defined_in(value: ir.Value, op: ir.OpView | ir.Operation) -> bool:
    """Whether the value is defined in op's regions (a block argument or an op result there)."""
    owner = value.owner
    return within(owner.owner if isinstance(owner, ir.Block) else owner, op)


def constant_number(value: ir.Value) -> int | float | None:
    """The scalar an `arith.constant` holds (integer, index or float), else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    return int(attr.value) if isinstance(attr, ir.IntegerAttr) else None


def constant_int(value: ir.Value) -> int | None:
    """The integer (or index) an `arith.constant` holds, else None."""
    number = constant_number(value)
    return number if isinstance(number, int) else None


def index_constant(value: int) -> ir.Value:
    """An index `arith.constant` at the current insertion point."""
    return arith.ConstantOp(ir.IndexType.get(), value).result


def reshaped(type_: ir.Type, value: ir.Value) -> ir.Value:
    """The vector value in another shape of its elements (a `vector.shape_cast` where the
    shape differs), at the current insertion point."""
    return value if value.type == type_ else vector.shape_cast(type_, value)


# Ops whose result is a view of their first operand's buffer.
VIEWS = {"memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast"}


def static_ints(op: ir.OpView, name: str) -> list[int]:
    """An op's static integer array attribute (`static_sizes`, `static_high`, ...)."""
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def constant_bounds(loop: ir.Operation) -> range | None:
    """The iterations of an scf.for whose bounds and step are constants, else None."""
    low, high, step = (constant_number(v) for v in list(loop.operands)[:3])
    if isinstance(low, int) and isinstance(high, int) and isinstance(step, int) and step > 0:
        return range(low, high, step)
    return None


def lane_wise_body(value: ir.Value) -> list[ir.Operation] | None:
    """The body of the one-input linalg.generic of identity maps, all parallel, that made
    the value (an elementwise op of one tensor: a cast, a copy); None for anything else."""
    owner = value.owner
    if (
        not isinstance(owner, ir.OpView)
        or owner.name != "linalg.generic"
        or len(owner.operands) != 2
        or "reduction" in str(owner.attributes["iterator_types"])
    ):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(owner.attributes["indexing_maps"])]
    if not all(m == ir.AffineMap.get_identity(m.n_dims) for m in maps):
        return None
    return list(owner.regions[0].blocks[0].operations)


def parallel_projections(op: ir.Operation) -> bool:
    """A linalg op with every loop parallel and every map a projected permutation: each
    lane reads a lane of each operand (broadcast or transposed) and writes its own."""
    generic = op.opview
    return all("parallel" in str(kind) for kind in generic.iterator_types) and all(
        ir.AffineMapAttr(m).value.is_projected_permutation for m in generic.indexing_maps
    )


def remap(copy: ir.Operation, mapping: dict[ir.Value, ir.Value], original: ir.Operation) -> None:
    """A clone's operands (and its regions') through the mapping; the original's results
    mapped to the clone's."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        for i, operand in enumerate(op.operands):
            if operand in mapping:
                op.operands[i] = mapping[operand]
        return ir.WalkResult.ADVANCE

    copy.operation.walk(visit)
    for old, new in zip(original.results, copy.results):
        mapping[old] = new
