// loom.get_symbol becomes an index constant from the module attribute it names;
// helion.phi is replaced by its loop result.
// RUN: helion-opt %s --split-input-file --verify-diagnostics --helion-resolve-symbols | FileCheck %s

// CHECK-LABEL: func.func @block_size(
// CHECK-SAME: %[[INIT:[a-z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: %[[BS:[a-z0-9_]+]] = arith.constant 16 : index
// CHECK-NEXT: %[[LOOP:[a-z0-9_]+]] = scf.for %{{[a-z0-9_]+}} = %[[BS]] to %[[BS]] step %[[BS]] iter_args(%{{[a-z0-9_]+}} = %[[INIT]])
// CHECK: return %[[LOOP]], %[[BS]] : tensor<4xf32>, index
module attributes {loom.block_size_0 = 16 : index} {
  func.func @block_size(%init: tensor<4xf32>) -> (tensor<4xf32>, index) {
    %bs = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    %loop = scf.for %i = %bs to %bs step %bs iter_args(%a = %init) -> (tensor<4xf32>) {
      scf.yield %a : tensor<4xf32>
    }
    %phi = "helion.phi"(%init, %loop) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %phi, %bs : tensor<4xf32>, index
  }
}

// -----

module attributes {loom.block_size_0 = 16 : index} {
  func.func @missing() -> index {
    // expected-error @below {{no module attribute 'loom.block_size_1' for loom.get_symbol}}
    %bs = "loom.get_symbol"() {name = "block_size_1"} : () -> index
    return %bs : index
  }
}
