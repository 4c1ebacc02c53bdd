// One-shot bufferization across function boundaries: tensors become memrefs, an output
// written in place is its argument's buffer.
// RUN: helion-opt %s --helion-bufferize | FileCheck %s

// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<4xf32>, %[[OUT:[a-z0-9_]+]]: memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: linalg.add ins(%[[A]], %[[A]] : memref<4xf32>, memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: return %[[OUT]] : memref<4xf32>
func.func @add(%a: tensor<4xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%out : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
