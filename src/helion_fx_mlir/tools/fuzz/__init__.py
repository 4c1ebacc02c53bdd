"""Fuzzers: sample kernels and generated programs against reference mode, malformed MLIR against
our tools."""
