"""One MLIR context per process with every dialect our modules use registered.

torch-mlir's bindings register the upstream dialects and `torch`; `torch_c` is only
loaded once a pass that depends on it has run; `helion` and `loom` come from IRDL.
"""

from __future__ import annotations

import functools
from importlib import resources

from torch_mlir import ir, passmanager
from torch_mlir.dialects import irdl
from torch_mlir.dialects import torch as torch_dialect

_LOAD_TORCH_C = "builtin.module(func.func(convert-torch-to-linalg))"


def irdl_source() -> str:
    """The IRDL text that defines the helion and loom dialects."""
    return resources.files(__package__).joinpath("dialects.irdl.mlir").read_text()


@functools.cache
def mlir_context() -> ir.Context:
    """The shared context; building it loads dialects, so it is done once."""
    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    with ctx, ir.Location.unknown():
        passmanager.PassManager.parse(_LOAD_TORCH_C).run(ir.Module.parse("module {}").operation)
        irdl.load_dialects(ir.Module.parse(irdl_source()))
    return ctx
