// Errors the lowering rewrites find are located at the op, not at the module.
// RUN: helion-opt %s --verify-diagnostics --helion-resolve-symbols
// RUN: helion-opt %s --verify-diagnostics --helion-lower-to-linalg

// A loom.get_symbol whose module attribute is missing is an error at the op.
module attributes {loom.block_size_0 = 4 : index} {
  func.func @missing() -> index {
    // expected-error @below {{no module attribute 'loom.block_size_7' for loom.get_symbol}}
    %0 = "loom.get_symbol"() {name = "block_size_7"} : () -> index
    return %0 : index
  }
}
