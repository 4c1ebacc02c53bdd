"""A contraction's B block read across strided rows is first copied into a buffer of its own.

`x[tm, tk] @ y[tk, tn]` reads y's block one row per K step, each row a whole row of y
away from the last (4 KB for 1024 f32 columns): every step the register tile loads from
another page, where hardware prefetchers stop, and rows a power of two apart share a few
cache sets, so the block does not stay in cache between register tiles. Copied first (one
stream of short rows into a contiguous buffer, which bufferization hoists out of loops
and keeps on the program's stack), the block is read from L1. Measured on an AVX2 EPYC,
matmul 1024^3 f32 in 64^3 blocks on 2 threads: 45 -> 97 GFLOP/s (torch.mm: 120-140).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from torch_mlir import ir
from torch_mlir.dialects import linalg, tensor

from helion_fx_mlir.mlir.attributes import PACK_LIMIT, module_integer, set_module_integer
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.registry import register
from helion_fx_mlir.passes.vectorize import PLAIN_MAPS, plain_layout

# The largest block copied, unless the module says otherwise (PACK_LIMIT): a copy that fits
# L1 beside the A block, on the stack of the thread that runs the program
# (passes/buffers.py: MAX_STACK_BUFFER). On a CPU with a 2 MB L2 (Sapphire Rapids) the whole
# strip, kept in L2, was faster: the accumulator tile stays in registers over all of K
# instead of being stored and reloaded per chunk (matmul 1024^3 f32, 64^3 blocks, 2
# threads: 9.3 -> 7.3 ms; 32x64x16 9.2 -> 7.4); bf16 blocks were slower so (12.9 -> 16.6
# ms) and keep PACK_BYTES.
PACK_BYTES = 32 * 1024
B_OPERAND = 1


@register(
    "helion-pack-contraction-operands",
    "a matmul's B block of strided rows -> copied into a contiguous buffer first",
)
def pack_contraction_operands(module: ir.Module) -> None:
    """Give each plain matmul whose B block is a strided slice a contiguous copy of it."""
    with mlir_context():
        for op in ops_named(module, *PLAIN_MAPS):
            if plain_layout(op) and strided_block(op.operands[B_OPERAND], module):
                _copy_operand(op, B_OPERAND)


def strided_block(value: ir.Value, module: ir.Module) -> bool:
    """A slice of strided rows (`strided_rows`) that `packs` (a buffer is none: input
    already bufferized)."""
    if not isinstance(value.type, ir.RankedTensorType):
        return False
    block = ir.RankedTensorType(value.type)
    return strided_rows(value) and packs(list(block.shape), block.element_type, module)


def strided_rows(value: ir.Value) -> bool:
    """A slice whose rows are shorter than its source's."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.name != "tensor.extract_slice":
        return False
    block = ir.RankedTensorType(value.type)
    source = ir.RankedTensorType(owner.operands[0].type)
    return block.rank == source.rank and source.shape[-1] != block.shape[-1]


def packs(shape: Sequence[int], element: ir.Type, module: ir.Module) -> bool:
    """A static block of at most `pack_limit` bytes."""
    width = getattr(element, "width", None)
    return (
        not any(ir.ShapedType.is_dynamic_size(d) for d in shape)
        and isinstance(width, int)
        and math.prod(shape) * width <= pack_limit(module, width) * 8
    )


def pack_limit(module: ir.Module, width: int) -> int:
    """Bytes of the largest block copied: the module's PACK_LIMIT for elements of 32 bits
    or more, else PACK_BYTES."""
    return module_integer(module, PACK_LIMIT, PACK_BYTES) if width >= 32 else PACK_BYTES


def target_pack_limit(module: ir.Module, limit: int | None) -> None:
    """Record the largest block the CPU the code is for copies (the host's, for the JIT),
    where it is not PACK_BYTES."""
    if limit is not None and limit != PACK_BYTES:
        with mlir_context():
            set_module_integer(module, PACK_LIMIT, limit)


def _copy_operand(op: ir.Operation, index: int) -> None:
    """operand[index] <- an identity linalg.generic of it into a fresh tensor.empty."""
    value = op.operands[index]
    block = ir.RankedTensorType(value.type)
    identity = ir.AffineMap.get_identity(block.rank)
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    with ir.InsertionPoint(op), op.location:
        empty = tensor.EmptyOp(list(block.shape), block.element_type).result
        copy = linalg.GenericOp(
            [block],
            [value],
            [empty],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(identity)] * 2),
            ir.ArrayAttr.get([parallel] * block.rank),
        )
        body = copy.regions[0].blocks.append(block.element_type, block.element_type)
        with ir.InsertionPoint(body):
            linalg.YieldOp([body.arguments[0]])
    op.operands[index] = copy.results[0]
