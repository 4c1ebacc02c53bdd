"""Masked vector loads and stores in chunks of 256 bits, in the LLVM dialect.

LLVM's x86 back end miscompiles masked loads wider than the machine's vectors on AVX2
CPUs (Zen 3 here): at -O2 and up, a row of `sum_rows` loaded as one
`llvm.intr.masked.load` of 128 f32 lanes (split by LLVM's legalizer into 16 `vmaskmovps`)
summed to garbage (1e30), while -O0 and the same load in chunks of 8 lanes were exact;
chunks of 16 lanes were still wrong. Every masked load and store is therefore split here
into 256-bit chunks, the width AVX2 has natively (AVX-512 handles them with its VL forms),
so the same LLVM IR is emitted on every machine.
"""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.walk import ops_where
from helion_fx_mlir.passes.registry import register

CHUNK_BITS = 256

# op name -> (index of the pointer operand, indices of the operands that carry lanes)
_MASKED = {"llvm.intr.masked.load": (0, (1, 2)), "llvm.intr.masked.store": (1, (0, 2))}


@register(
    "helion-split-masked-memory-ops", "wide LLVM masked loads/stores split into 256-bit chunks"
)
def split_masked_memory_ops(module: ir.Module) -> None:
    """Each masked load and store wider than CHUNK_BITS as chunks of CHUNK_BITS."""
    for op in ops_where(
        module, lambda op: op.name in _MASKED and _lanes_per_chunk(op) < _lanes(op)
    ):
        with ir.InsertionPoint(op), op.location:
            _split(op)


def _vector(op: ir.Operation) -> ir.VectorType:
    """The data vector: a load's result, a store's value."""
    return ir.VectorType(
        op.results[0].type if op.name == "llvm.intr.masked.load" else op.operands[0].type
    )


def _lanes(op: ir.Operation) -> int:
    return _vector(op).shape[0]


def _lanes_per_chunk(op: ir.Operation) -> int:
    """How many lanes fit in CHUNK_BITS (at least 1; 0 for vectors of pointers, left alone)."""
    elt = _vector(op).element_type
    bits = elt.width if isinstance(elt, (ir.IntegerType, ir.FloatType)) else 0
    return CHUNK_BITS // bits if bits else _lanes(op)


def _split(op: ir.Operation) -> None:
    lanes, width = _lanes(op), _lanes_per_chunk(op)
    pointer_at, laned = _MASKED[op.name]
    elt = _vector(op).element_type
    attributes = {name: op.attributes[name] for name in op.attributes}
    pieces = []
    for start in range(0, lanes, width):
        count = min(width, lanes - start)
        operands = list(op.operands)
        operands[pointer_at] = _offset(op.operands[pointer_at], start, elt)
        for i in laned:
            operands[i] = _shuffle(operands[i], operands[i], list(range(start, start + count)))
        results = [ir.VectorType.get([count], elt)] if op.name == "llvm.intr.masked.load" else []
        pieces.append(
            ir.Operation.create(op.name, results=results, operands=operands, attributes=attributes)
        )
    if op.results:
        op.results[0].replace_all_uses_with(_concatenate([p.result for p in pieces]))
    op.erase()


def _offset(pointer: ir.Value, lanes: int, elt: ir.Type) -> ir.Value:
    """`pointer` advanced by `lanes` elements."""
    if not lanes:
        return pointer
    return ir.Operation.create(
        "llvm.getelementptr",
        results=[pointer.type],
        operands=[pointer],
        attributes={
            "rawConstantIndices": ir.DenseI32ArrayAttr.get([lanes]),
            "elem_type": ir.TypeAttr.get(elt),
        },
    ).result


def _shuffle(a: ir.Value, b: ir.Value, positions: list[int]) -> ir.Value:
    """The lanes of a ++ b at `positions`."""
    elt = ir.VectorType(a.type).element_type
    return ir.Operation.create(
        "llvm.shufflevector",
        results=[ir.VectorType.get([len(positions)], elt)],
        operands=[a, b],
        attributes={"mask": ir.DenseI32ArrayAttr.get(positions)},
    ).result


def _concatenate(pieces: list[ir.Value]) -> ir.Value:
    """The pieces' lanes in order, joined pairwise (shufflevector needs equal widths, so an
    odd or shorter piece is widened first)."""
    while len(pieces) > 1:
        joined = []
        for a, b in zip(pieces[::2], pieces[1::2]):
            wa, wb = ir.VectorType(a.type).shape[0], ir.VectorType(b.type).shape[0]
            if wb < wa:
                b = _shuffle(b, b, list(range(wb)) + [-1] * (wa - wb))
            joined.append(_shuffle(a, b, list(range(wa)) + list(range(wa, wa + wb))))
        if len(pieces) % 2:
            joined.append(pieces[-1])
        pieces = joined
    return pieces[0]
