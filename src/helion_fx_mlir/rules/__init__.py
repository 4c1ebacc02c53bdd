"""Lowering rules by family; importing this package fills `dispatch.LOWERINGS`."""

from . import control_flow, memory, tensors, tiles  # noqa: F401
