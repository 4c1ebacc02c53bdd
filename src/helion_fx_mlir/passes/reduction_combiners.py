"""The combining ops of linalg reductions, as the vectorizer needs them.

The linalg vectorizer turns a reduction into a vector reduction of the op that combines
each element with the accumulator, starting from that op's identity; it knows the identity
of the ops in COMBINERS only and fails the whole transform script on any other (`Failed to
get an identity value`). `torch.mean(-row)` reaches it as one: the negation fused into the
sum is `out + (-x)`, which canonicalization folds into `out - x`. That subtraction is
rewritten back into the addition of the negation (the same bits: IEEE subtraction is the
addition of the negated operand); a reduction that combines with any other op is left to
the scalar loops.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith

COMBINERS = frozenset(
    {
        "arith.addf",
        "arith.mulf",
        "arith.maximumf",
        "arith.minimumf",
        "arith.maxnumf",
        "arith.minnumf",
        "arith.addi",
        "arith.muli",
        "arith.andi",
        "arith.ori",
        "arith.xori",
        "arith.maxsi",
        "arith.minsi",
        "arith.maxui",
        "arith.minui",
    }
)
SUBTRACTIONS = {"arith.subf": arith.addf, "arith.subi": arith.addi}


def subtractions_as_additions(op: ir.Operation) -> None:
    """Each yielded `out - x` of a linalg op's body as `out + (-x)`."""
    for combiner in _combiners(op):
        if combiner.name in SUBTRACTIONS and _is_output(op, combiner.operands[0]):
            _as_addition(combiner)


def known_combiners(op: ir.Operation) -> bool:
    """Whether every yielded value that combines with its accumulator does so through an op
    whose identity the vectorizer knows."""
    return all(
        combiner.name in COMBINERS
        for combiner in _combiners(op)
        if any(_is_output(op, operand) for operand in combiner.operands)
    )


def _combiners(op: ir.Operation) -> list[ir.Operation]:
    """The ops in the body that define the yielded values."""
    terminator = list(op.regions[0].blocks[0].operations)[-1]
    return [v.owner for v in terminator.operands if not isinstance(v.owner, ir.Block)]


def _is_output(op: ir.Operation, value: ir.Value) -> bool:
    """Whether value is the body's block argument of one of the op's outputs."""
    body = op.regions[0].blocks[0]
    outputs = list(body.arguments)[len(body.arguments) - len(op.results) :]
    return any(value == argument for argument in outputs)


def _as_addition(subtraction: ir.Operation) -> None:
    accumulator, x = subtraction.operands
    with ir.InsertionPoint(subtraction), subtraction.location:
        if subtraction.name == "arith.subf":
            negated = arith.negf(x)
        else:
            negated = arith.subi(arith.ConstantOp(x.type, 0).result, x)
        addition = SUBTRACTIONS[subtraction.name](accumulator, negated)
    subtraction.results[0].replace_all_uses_with(addition)
    subtraction.erase()
