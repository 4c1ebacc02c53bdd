"""Helion Device IR (torch.fx graphs) -> MLIR text: kernel facts, the graph visitor, the lowering
rules, and ATen ops through torch-mlir. Depends on `mlir/` only."""
