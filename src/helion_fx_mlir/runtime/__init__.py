"""Running kernels: JIT compilation of the lowered module, the host program around it, threads,
and Helion's `mlir` backend. Depends on `frontend/`, `passes/` and `mlir/`."""
