"""The widest vector registers a kernel's code may use: the config knob `mlir_vector_width`.

Our vector ops are 512 bits wide (16 f32 lanes), and on AVX-512 LLVM keeps them in zmm
registers. On Zen 4 a 512-bit op runs as two 256-bit halves, and which width is faster
depends on the kernel, not on a rule we found: measured in one process, 2 threads, 4096 x
4096 f32 at the default configs, 256 bits made layer_norm 1.00 -> 0.81 ms, a row sum 1.99
-> 1.85 and the adds 4-8% faster, while a column sum (3.26 -> 4.00), softmax, cross
entropy and the matmuls (f32 10.7 -> 12.8, bf16 dot products 5.9 -> 15.4) got slower. So
the width is a config knob the autotuner searches (`runtime/backend.py` adds it to every
mlir kernel's config space); the frontend writes a width other than the default as a
module attribute (`mlir/attributes.py`), and this pass hands it to LLVM as the function
attributes that make 512-bit vectors illegal: LLVM splits each op into ops of that width.
"""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.attributes import (
    DEFAULT_VECTOR_REGISTERS,
    VECTOR_REGISTERS,
    VECTOR_WIDTH,
    module_integer,
    set_module_integer,
)
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.registry import register

# The LLVM function attributes that set the widest legal vector: X86 keeps zmm registers
# only where both allow 512 bits.
_LLVM_ATTRS = ("prefer-vector-width", "min-legal-vector-width")


@register(
    "helion-limit-vector-width",
    "module attribute helion.vector_width -> LLVM's widest legal vector on every llvm.func",
)
def limit_vector_width(module: ir.Module) -> None:
    """Give every defined llvm.func the module's vector width (no attribute: no change)."""
    width = vector_width(module)
    if width is None:
        return
    with mlir_context():
        for func in ops_named(module, "llvm.func"):
            if func.regions[0].blocks:
                _set_passthrough(func, str(width))


def vector_width(module: ir.Module) -> int | None:
    """The module's vector width in bits; None where it has the default."""
    with mlir_context():
        if VECTOR_WIDTH not in module.operation.attributes:
            return None
        return module_integer(module, VECTOR_WIDTH, 0)


def drop_vector_width(module: ir.Module) -> None:
    """Back to the default width: for code LLVM cannot generate at the narrower one."""
    with mlir_context():
        del module.operation.attributes[VECTOR_WIDTH]


def _set_passthrough(func: ir.Operation, width: str) -> None:
    """The func's passthrough attributes, ours in place of any earlier widths."""
    attrs = func.attributes
    kept = [
        entry
        for entry in attrs.get("passthrough", [])
        if not (isinstance(entry, ir.ArrayAttr) and ir.StringAttr(entry[0]).value in _LLVM_ATTRS)
    ]
    ours = [
        ir.ArrayAttr.get([ir.StringAttr.get(name), ir.StringAttr.get(width)])
        for name in _LLVM_ATTRS
    ]
    attrs["passthrough"] = ir.ArrayAttr.get([*kept, *ours])


def vector_registers(module: ir.Module) -> int:
    """The vector registers of the CPU the module is for (DEFAULT_VECTOR_REGISTERS unless
    the module says otherwise)."""
    return module_integer(module, VECTOR_REGISTERS, DEFAULT_VECTOR_REGISTERS)


def target_vector_registers(module: ir.Module, registers: int) -> None:
    """Record the registers of the CPU the code is for (the host's, for the JIT), where they
    are not the default: the schedules size register tiles by them."""
    if registers == DEFAULT_VECTOR_REGISTERS:
        return
    with mlir_context():
        set_module_integer(module, VECTOR_REGISTERS, registers)
