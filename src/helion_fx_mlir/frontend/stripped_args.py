"""Recover ATen inputs that Helion replaces with None while binding.

Helion's Inductor lowering nulls inputs its generated code does not read (`x*x`
becomes `mul.Tensor(x, None)`, `mean.dim(None, ...)` reads an extra buffer).
We need the real operands, so we wrap `strip_unused_inputs` to keep a copy of each
node's args before they are stripped. This must be installed before kernels bind,
which importing helion_fx_mlir does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.import_hooks import after_import

if TYPE_CHECKING:
    from torch import fx

ORIGINAL_ARGS = "helion_fx_mlir.original_args"
TARGET = "helion._compiler.inductor_lowering"


def install() -> None:
    """Wrap Helion's strip_unused_inputs now if Helion is imported, else when it is
    (so importing this package does not import Helion)."""
    after_import(TARGET, _patch)


def _patch(module: Any) -> None:
    strip = module.strip_unused_inputs
    if getattr(strip, "_records_original_args", False):
        return

    def recording_strip(node: fx.Node, *args: Any, **kwargs: Any) -> Any:
        node.meta.setdefault(ORIGINAL_ARGS, node.args)
        return strip(node, *args, **kwargs)

    recording_strip._records_original_args = True  # type: ignore[attr-defined]
    module.strip_unused_inputs = recording_strip


def restored_args(node: fx.Node) -> tuple[list[Any], dict[str, Any]]:
    """The node's args with stripped (None) positions put back; other args stay as they
    are, since Helion legitimately rewrites them (e.g. inserting _mask_to)."""
    from torch import fx

    args = list(node.args)
    original = node.meta.get(ORIGINAL_ARGS)
    if original is None:
        if None in args and _inductor_lowered(node):
            raise LoweringError(
                node,
                "Helion stripped an input of this op before its args were recorded; "
                "import helion_fx_mlir before binding the kernel",
            )
        return args, dict(node.kwargs)
    # build_codegen_graphs copies graphs: recorded nodes are found again by name. In a
    # rolled reduction the operand lives in another graph; the position stays None.
    by_name = {n.name: n for n in node.graph.nodes}
    restored = list(args)
    for i, arg in enumerate(args):
        if arg is None and i < len(original):
            names = (
                [n.name for n in fx.node.map_arg(original[i], lambda n: [n])]
                if isinstance(original[i], (fx.Node, list, tuple))
                else []
            )
            if all(name in by_name for name in names):
                restored[i] = fx.map_arg(original[i], lambda n: by_name[n.name])
    return restored, dict(node.kwargs)


def _inductor_lowered(node: fx.Node) -> bool:
    from helion._compiler import inductor_lowering

    lowering = node.meta.get("lowering")
    return isinstance(
        lowering, (inductor_lowering.PointwiseLowering, inductor_lowering.ReductionLowering)
    )
