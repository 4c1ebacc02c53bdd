"""bf16 in the LLVM dialect for CPUs without bf16 instructions (AVX2, no AVX512-BF16).

`arith-expand` turns our own `arith.truncf`s to bf16 into integer ops, but LLVM's X86
back end legalizes what bf16 vector code is left (the blend of a masked load with its
pass-through lanes) through f32, element by element: a bf16 softmax took 70 s to compile
instead of 7, and each lane calls `__truncsfbf2` to narrow back, a compiler-rt/libgcc
routine that neither torch's process nor the JIT may export (libgcc has it since GCC 13),
so the kernel failed to link. Three steps, all on the LLVM dialect:
- `bf16_arithmetic_in_f32`: arithmetic on bf16 vectors (no x86 instruction does any) is
  written as LLVM would promote it, the operands extended to f32 and the result rounded
  back, op by op: LLVM's own promotion aborted on vectors whose lanes are no power of two
  (an edge tile's `vector<9xbf16>` add: "Do not know how to soft promote this
  operator's operand");
- `bf16_moves_as_i16`: masked loads and selects of bf16 move the same bits as i16, which
  every CPU blends natively, and so do loads and stores of bf16 vectors (LLVM aborted
  legalizing a 97-lane bf16 store: "Do not know how to soft promote this operator's
  operand");
- `define_bf16_truncation`: a module still holding bf16 values defines `__truncsfbf2`
  itself, weak, so that a runtime's own copy wins where there is one.
"""

from __future__ import annotations

from collections.abc import Callable

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import first_op, ops_where
from helion_fx_mlir.passes.registry import register

NAME = "__truncsfbf2"

# Round to nearest even on the high 16 bits; a NaN stays a quiet NaN (its payload's top bits).
TRUNCATION = f"""
module {{
  llvm.func weak @{NAME}(%x: f32) -> bf16 {{
    %sixteen = llvm.mlir.constant(16 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %half = llvm.mlir.constant(32767 : i32) : i32
    %quiet_bit = llvm.mlir.constant(64 : i32) : i32
    %bits = llvm.bitcast %x : f32 to i32
    %high = llvm.lshr %bits, %sixteen : i32
    %odd = llvm.and %high, %one : i32
    %bias = llvm.add %half, %odd : i32
    %biased = llvm.add %bits, %bias : i32
    %rounded = llvm.lshr %biased, %sixteen : i32
    %quiet = llvm.or %high, %quiet_bit : i32
    %nan = llvm.fcmp "uno" %x, %x : f32
    %chosen = llvm.select %nan, %quiet, %rounded : i1, i32
    %narrow = llvm.trunc %chosen : i32 to i16
    %result = llvm.bitcast %narrow : i16 to bf16
    llvm.return %result : bf16
  }}
}}
"""


# Float arithmetic LLVM promotes from bf16: every operand and the result of one bf16 type
# (`llvm.fcmp`: its operands, into a mask).
_ARITHMETIC = {
    "llvm.fadd",
    "llvm.fsub",
    "llvm.fmul",
    "llvm.fdiv",
    "llvm.frem",
    "llvm.fneg",
    "llvm.fcmp",
    "llvm.intr.fma",
    "llvm.intr.fmuladd",
    "llvm.intr.maximum",
    "llvm.intr.minimum",
    "llvm.intr.maxnum",
    "llvm.intr.minnum",
    "llvm.intr.fabs",
    "llvm.intr.copysign",
    "llvm.intr.sqrt",
}


@register(
    "helion-bf16-arithmetic-in-f32",
    "arithmetic on bf16 vectors on their f32 extensions, rounded back op by op",
)
def bf16_arithmetic_in_f32(module: ir.Module) -> None:
    with mlir_context():
        for op in ops_where(module, _bf16_arithmetic):
            with ir.InsertionPoint(op), op.location:
                _in_f32(op)


def _bf16_arithmetic(op: ir.Operation) -> bool:
    return op.name in _ARITHMETIC and all(_bf16_vector(v.type) for v in op.operands)


def _in_f32(op: ir.Operation) -> None:
    """The op on its operands extended to f32; a bf16 result rounded back (an fcmp's mask
    as it is)."""
    wide = ir.VectorType.get(ir.VectorType(op.operands[0].type).shape, ir.F32Type.get())
    operands = [
        ir.Operation.create("llvm.fpext", results=[wide], operands=[v]).result for v in op.operands
    ]
    narrow = op.results[0].type
    result_type = wide if _bf16_vector(narrow) else narrow
    computed = ir.Operation.create(
        op.name,
        results=[result_type],
        operands=operands,
        attributes={name: op.attributes[name] for name in op.attributes},
    ).result
    if result_type == wide:
        computed = ir.Operation.create("llvm.fptrunc", results=[narrow], operands=[computed]).result
    op.results[0].replace_all_uses_with(computed)
    op.erase()


@register("helion-bf16-moves-as-i16", "bf16 masked loads, selects, vector loads, stores as i16")
def bf16_moves_as_i16(module: ir.Module) -> None:
    """Masked loads, selects, and loads and stores of bf16 vectors as the same ops on i16
    between bitcasts."""
    for op in ops_where(module, _moves_bf16):
        with ir.InsertionPoint(op), op.location:
            _as_i16(op)


# op name -> the operands that carry bf16 values (the others: pointer, mask, condition)
_MOVES = {
    "llvm.intr.masked.load": (2,),
    "llvm.select": (1, 2),
    "llvm.load": (),
    "llvm.store": (0,),
}


def _moves_bf16(op: ir.Operation) -> bool:
    if op.name not in _MOVES:
        return False
    moved = [*(op.operands[i] for i in _MOVES[op.name]), *op.results]
    if op.name in ("llvm.load", "llvm.store"):
        return any(_bf16_vector(v.type) for v in moved)
    return "bf16" in str(op.results[0].type)


def _bf16_vector(ty: ir.Type) -> bool:
    return isinstance(ty, ir.VectorType) and str(ir.VectorType(ty).element_type) == "bf16"


def _as_i16(op: ir.Operation) -> None:
    def bitcast(value: ir.Value, ty: ir.Type) -> ir.Value:
        return ir.Operation.create("llvm.bitcast", results=[ty], operands=[value]).result

    carried = [op.operands[i] for i in _MOVES[op.name]]
    bits = _i16_like((op.results[0] if len(op.results) else carried[0]).type)
    operands = [bitcast(v, bits) if i in _MOVES[op.name] else v for i, v in enumerate(op.operands)]
    moved = ir.Operation.create(
        op.name,
        results=[bits] * len(op.results),
        operands=operands,
        attributes={name: op.attributes[name] for name in op.attributes},
    )
    for old, new in zip(op.results, moved.results):
        old.replace_all_uses_with(bitcast(new, old.type))
    op.erase()


def _i16_like(ty: ir.Type) -> ir.Type:
    i16 = ir.IntegerType.get_signless(16)
    return ir.VectorType.get(ir.VectorType(ty).shape, i16) if isinstance(ty, ir.VectorType) else i16


def _bf16_definers() -> Callable[[ir.Operation], bool]:
    """Whether an op defines a bf16 value: a result, or an argument of a block of its
    regions (every value is one of these, so no operand need be read). Each distinct type
    is printed once: printing every value's type made this the slowest pass on f32 kernels."""
    known: dict[ir.Type, bool] = {}

    def is_bf16(value: ir.Value) -> bool:
        if value.type not in known:
            known[value.type] = "bf16" in str(value.type)
        return known[value.type]

    def defines_bf16(op: ir.Operation) -> bool:
        arguments = (a for region in op.regions for block in region.blocks for a in block.arguments)
        return any(map(is_bf16, op.results)) or any(map(is_bf16, arguments))

    return defines_bf16


@register("helion-define-bf16-truncation", "define __truncsfbf2 in a module that calls it")
def define_bf16_truncation(module: ir.Module) -> None:
    """Add `__truncsfbf2` to a module in the LLVM dialect that has bf16 values (in place of
    a declaration of it, which the module's own calls may have added)."""
    existing = [
        op.operation
        for op in module.body.operations
        if op.operation.name == "llvm.func"
        and ir.StringAttr(op.operation.attributes["sym_name"]).value == NAME
    ]
    if (
        any(len(op.regions[0].blocks) for op in existing)
        or first_op(module, _bf16_definers()) is None
    ):
        return
    for declaration in existing:
        declaration.erase()
    with mlir_context():
        definition = ir.Module.parse(TRUNCATION)  # alive until its ops are moved
        for op in list(definition.body.operations):
            module.body.append(op.detach_from_parent())
