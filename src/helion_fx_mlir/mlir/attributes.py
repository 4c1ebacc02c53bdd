"""Attributes the frontend puts on the MLIR it emits for the passes to read."""

from __future__ import annotations

# On each scf.for of a grid the emitter keeps sequential (its programs store inside their
# loops) whose programs Helion may still run in any order (see
# `LoweringContext.independent_programs`): `helion-parallelize-independent-grids` makes
# the outermost one parallel after bufferization.
INDEPENDENT_PROGRAMS = "helion.independent_programs"
