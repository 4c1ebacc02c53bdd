// A batch block of 1 sliced with its unit dim dropped and put back by expand_shape is one
// slice keeping it; the result's collapse_shape into a rank-reducing insert is one insert.
// RUN: helion-opt %s --helion-fold-unit-dim-reshapes | FileCheck %s

// CHECK-LABEL: func.func @unit_batch(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<8x512x512xf32>, %[[Y:[a-z0-9_]+]]: tensor<8x512x512xf32>, %[[OUT:[a-z0-9_]+]]: tensor<8x512x512xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]][%{{.*}}, %{{.*}}, %{{.*}}] [1, 64, 64] [1, 1, 1] : tensor<8x512x512xf32> to tensor<1x64x64xf32>
// CHECK: %[[B:.*]] = tensor.extract_slice %[[Y]][%{{.*}}, %{{.*}}, %{{.*}}] [1, 64, 64] [1, 1, 1] : tensor<8x512x512xf32> to tensor<1x64x64xf32>
// CHECK: %[[C:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<1x64x64xf32>, tensor<1x64x64xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: tensor.insert_slice %[[C]] into %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}] [1, 64, 64] [1, 1, 1] : tensor<1x64x64xf32> into tensor<8x512x512xf32>
func.func @unit_batch(%x: tensor<8x512x512xf32>, %y: tensor<8x512x512xf32>, %out: tensor<8x512x512xf32>, %acc: tensor<1x64x64xf32>, %b: index, %m: index, %n: index, %k: index) -> tensor<8x512x512xf32> {
  %a2 = tensor.extract_slice %x[%b, %m, %k] [1, 64, 64] [1, 1, 1] : tensor<8x512x512xf32> to tensor<64x64xf32>
  %a = tensor.expand_shape %a2 [[0, 1], [2]] output_shape [1, 64, 64] : tensor<64x64xf32> into tensor<1x64x64xf32>
  %b2 = tensor.extract_slice %y[%b, %k, %n] [1, 64, 64] [1, 1, 1] : tensor<8x512x512xf32> to tensor<64x64xf32>
  %bb = tensor.expand_shape %b2 [[0, 1], [2]] output_shape [1, 64, 64] : tensor<64x64xf32> into tensor<1x64x64xf32>
  %c = linalg.batch_matmul ins(%a, %bb : tensor<1x64x64xf32>, tensor<1x64x64xf32>) outs(%acc : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  %c2 = tensor.collapse_shape %c [[0, 1], [2]] : tensor<1x64x64xf32> into tensor<64x64xf32>
  %r = tensor.insert_slice %c2 into %out[%b, %m, %n] [1, 64, 64] [1, 1, 1] : tensor<64x64xf32> into tensor<8x512x512xf32>
  return %r : tensor<8x512x512xf32>
}
