"""Rewrites of MLIR modules, each registered once by name, and the pipelines that chain them.
Depends on `mlir/` only."""
