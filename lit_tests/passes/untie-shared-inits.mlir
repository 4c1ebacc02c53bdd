// Each use of an init (tensor.empty, or a fill of one) gets its own copy, so that
// bufferization gives each result its own buffer; an input read twice is left alone.
// RUN: helion-opt %s --helion-untie-shared-inits | FileCheck %s

// CHECK-LABEL: func.func @shared_accumulator(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: %[[ZERO:[a-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E0:[a-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[E1:[a-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[ACC0:[a-z0-9_]+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[ACC1:[a-z0-9_]+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: linalg.add ins(%[[A]], %[[A]] : tensor<4xf32>, tensor<4xf32>) outs(%[[ACC0]] : tensor<4xf32>)
// CHECK-NEXT: linalg.mul ins(%[[A]], %[[A]] : tensor<4xf32>, tensor<4xf32>) outs(%[[ACC1]] : tensor<4xf32>)
func.func @shared_accumulator(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %0 = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.mul ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
