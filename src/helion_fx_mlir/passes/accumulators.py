"""Rewrites of linalg on tensors that keep an accumulator in place before vectorizing: it
becomes the init its contraction accumulates into, and a loop-carried tile is computed into
the loop's own iter_arg rather than a fresh tensor."""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import PLAIN_MAPS


@register("helion-fold-accumulations", "acc + matmul/sum from zeros -> the matmul/sum into acc")
def fold_accumulations(module: ir.Module) -> None:
    """`acc + matmul(a, b, zeros)` (how addmm and hl.dot with an accumulator arrive) becomes
    `matmul(a, b, acc)`, and `acc + sum(x, zeros)` (a manual reduction loop's
    `acc = acc + x.sum(0)`) becomes `sum(x, acc)`: accumulating into acc, as Helion's own
    dot does, so the accumulator stays in registers across the loop and no second pass adds it."""
    with mlir_context():
        for add in ops_named(module, "linalg.generic"):
            found = _accumulation(add)
            if found is not None:
                producer, acc = found
                producer.move_before(add)
                producer.operands[len(producer.operands) - 1] = acc
                add.results[0].replace_all_uses_with(producer.results[0])
                add.erase()


@register(
    "helion-write-into-loop-carried",
    "loop-carried tiles computed into their iter_arg, not tensor.empty",
)
def write_into_loop_carried(module: ir.Module) -> None:
    """A loop-carried tile value (`acc`, `m_i`, `l_i` of a loop over tiles) that is computed
    into a fresh `tensor.empty` each iteration is computed into the loop's own iter_arg
    instead, so bufferization can update one buffer in place rather than allocate a new
    one per iteration. The chain is followed back through the ops that write into their
    init (`matmul(p, v, acc * alpha)`) to the op that starts from an empty tensor; that op
    must not read its init. Where the old value is still read later, bufferization copies."""
    with mlir_context():
        for loop in ops_named(module, "affine.for", "scf.for"):
            body = loop.regions[0].blocks[0]
            carried = list(body.arguments)[1:]
            yielded = list(body.operations)[-1].operands
            for value, iter_arg in zip(yielded, carried):
                start = _empty_started(value, body)
                if start is not None and iter_arg.type == start.operands[-1].type:
                    start.operands[len(start.operands) - 1] = iter_arg
                    _read_through_init(start)


def _read_through_init(op: ir.Operation) -> None:
    """An input that is the op's own init, read at the same place as it is written
    (`acc * alpha` into acc), is read through the init's block argument instead: tiled, the
    op then reads each tile from the buffer it updates, not from the value before the
    update, which bufferization would have to copy to keep."""
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    args = list(op.regions[0].blocks[0].arguments)
    init = op.operands[len(op.operands) - 1]
    for value, amap, arg in zip(list(op.operands)[:-1], maps, args):
        if value == init and amap == maps[-1]:
            arg.replace_all_uses_with(args[-1])


def _empty_started(value: ir.Value, body: ir.Block) -> ir.Operation | None:
    """The linalg op in `body` at the start of value's chain of inits, if it writes a
    tensor.empty it never reads."""
    for _ in range(8):
        owner = value.owner
        if (
            not isinstance(owner, ir.OpView)
            or not owner.name.startswith("linalg.")
            or len(owner.results) != 1
            or owner.operation.block != body
        ):
            return None
        init = owner.operands[-1]
        if isinstance(init.owner, ir.OpView) and init.owner.name == "tensor.empty":
            return (
                owner.operation
                if owner.name == "linalg.generic" and not _reads_init(owner)
                else None
            )
        value = init
    return None


def _reads_init(op: ir.OpView) -> bool:
    return any(True for _ in list(op.regions[0].blocks[0].arguments)[-1].uses)


def _accumulation(add: ir.Operation) -> tuple[ir.Operation, ir.Value] | None:
    """(producer, acc) when `add` is an elementwise acc + (a matmul or sum from zeros), the
    sole use of that producer."""
    if len(add.operands) != 3 or not _is_add_of_inputs(add):
        return None
    if any(
        str(ir.AffineMapAttr(m).value)
        != str(ir.AffineMap.get_identity(ir.AffineMapAttr(m).value.n_dims))
        for m in ir.ArrayAttr(add.attributes["indexing_maps"])
    ):
        return None
    for value, acc in ((add.operands[0], add.operands[1]), (add.operands[1], add.operands[0])):
        producer = value.owner
        if (
            isinstance(producer, ir.OpView)
            and _accumulates_into_init(producer)
            and _from_zeros(producer.operands[-1])
            and _single_use(value)
            and acc.type == value.type == add.results[0].type
        ):
            return producer.operation, acc
    return None


def _is_add_of_inputs(op: ir.Operation) -> bool:
    """A linalg.generic whose body is `yield in0 + in1`."""
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    return len(args) == 3 and _yields_sum(block, args[0], args[1])


def _accumulates_into_init(op: ir.OpView) -> bool:
    """A plain matmul, or a one-input sum reduction (`yield in + out`): adding its init to
    its result is the same as starting from that init."""
    if op.name in PLAIN_MAPS:
        return True
    if (
        op.name != "linalg.generic"
        or len(op.operands) != 2
        or len(op.results) != 1
        or "reduction" not in str(op.attributes["iterator_types"])
    ):
        return False
    block = op.regions[0].blocks[0]
    inp, out = list(block.arguments)
    return _yields_sum(block, inp, out)


def _yields_sum(block: ir.Block, first: ir.Value, second: ir.Value) -> bool:
    """The block is `yield first + second` (floating point)."""
    body = list(block.operations)
    return (
        len(body) == 2
        and body[0].name == "arith.addf"
        and set(body[0].operands) == {first, second}
        and body[1].operands[0] == body[0].results[0]
    )


def _from_zeros(value: ir.Value) -> bool:
    fill = value.owner
    if not isinstance(fill, ir.OpView) or fill.name != "linalg.fill":
        return False
    scalar = fill.operands[0].owner
    return (
        isinstance(scalar, ir.OpView)
        and scalar.name == "arith.constant"
        and str(scalar.attributes["value"]).split(":")[0].strip() in {"0.000000e+00", "0"}
    )


def _single_use(value: ir.Value) -> bool:
    return sum(1 for _ in value.uses) == 1
