"""Attributes the frontend puts on the MLIR it emits for the passes to read."""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.errors import RewriteError

# On each scf.for of a grid the emitter keeps sequential (its programs store inside their
# loops, or read what they store) along whose axis Helion may still run the programs in
# any order (see `LoweringContext.independent_axes`): `helion-parallelize-independent-grids`
# makes the outermost one parallel after bufferization.
INDEPENDENT_PROGRAMS = "helion.independent_programs"

# The config knob `mlir_vector_width` (bits; the first is the default, our vector ops' own
# width), which the mlir backend adds to every kernel's config space. The frontend writes
# any other width as the module attribute VECTOR_WIDTH, and `helion-limit-vector-width`
# makes LLVM split wider vector ops.
VECTOR_WIDTH_KEY = "mlir_vector_width"
VECTOR_WIDTHS = (512, 256)
VECTOR_WIDTH = "helion.vector_width"

# The config knob `mlir_streaming_stores`: whether large write-only outputs are written with
# non-temporal stores (`helion-stream-output-stores`). They pay on some CPUs and cost on
# others (docs/performance.md), so "auto" (the default) leaves it to the host CPU; "on" and
# "off" are written as the module attribute STREAMING_STORES (1 or 0), which the JIT also
# writes for "auto". Without the attribute the pass streams (the goldens' target).
STREAMING_STORES_KEY = "mlir_streaming_stores"
STREAMING_STORES_CHOICES = ("auto", "on", "off")
STREAMING_STORES = "helion.streaming_stores"

# The vector registers of the CPU the code is for: register tiles are sized by them.
# Without the module attribute, AVX-512's 32 (the CPUs the goldens and the default
# schedules were written for); `compile_kernel` writes the host's where it has fewer
# (16 on AVX2), and `helion-opt` input may set it to see another target's schedules.
VECTOR_REGISTERS = "helion.vector_registers"
DEFAULT_VECTOR_REGISTERS = 32

# The largest f32 (or wider) matmul B block copied into a buffer of its own, in bytes
# (`packed_operands.py`; PACK_BYTES without the attribute): the JIT writes the host's where
# its L2 keeps a larger one (`host_cpu.large_pack_bytes`).
PACK_LIMIT = "helion.pack_bytes"

# On a bf16 matmul's pair contraction (`amx_tiles.py`): the vectorizer leaves it for
# `helion-amx-tile-contractions`, which makes it AMX tile operations after bufferization.
AMX_TILES = "helion.amx_tiles"

# The threads the code's grids are shared among (`torch.get_num_threads()` when the JIT
# compiles it): `helion-group-grid-programs` and `helion-share-packed-strips` leave each
# thread an equal share of groups. Without the module attribute, DEFAULT_THREADS (the
# goldens'); `helion-opt` input may set it to see another machine's grouping.
THREADS = "helion.threads"
DEFAULT_THREADS = 8


def module_integer(module: ir.Module, name: str, default: int) -> int:
    """The module's integer attribute `name`, else `default`; an attribute of another kind
    is an error at the module's place."""
    attrs = module.operation.attributes
    if name not in attrs:
        return default
    if not isinstance(attrs[name], ir.IntegerAttr):
        raise RewriteError(
            name,
            [
                (
                    module.operation.location,
                    f"module attribute {name} must be an integer, not {attrs[name]}",
                )
            ],
        )
    return attrs[name].value


def set_module_integer(module: ir.Module, name: str, value: int) -> None:
    """Give the module the i64 attribute `name` (read back by `module_integer`)."""
    module.operation.attributes[name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
