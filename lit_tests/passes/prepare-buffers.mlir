// Before bufferization: affine loops lowered (one-shot-bufferize cannot take affine.for
// with tensor iter_args) and equal values merged by cse.
// RUN: helion-opt %s --helion-prepare-buffers | FileCheck %s

// CHECK-LABEL: func.func @loop(
// CHECK-NOT: affine.for
// CHECK: scf.for
// CHECK: %[[E:[a-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: return %{{[a-z0-9_]+}}, %[[E]], %[[E]] :
func.func @loop(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = affine.for %i = 0 to 2 iter_args(%x = %a) -> (tensor<4xf32>) {
    %y = arith.addf %x, %x : tensor<4xf32>
    affine.yield %y : tensor<4xf32>
  }
  %e0 = tensor.empty() : tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  return %r, %e0, %e1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
