// A slice dropping unit dims beside a dynamic size keeps them and collapses them after,
// so bufferization cannot mistake which unit dim went (the size may fold to 1). Slices of
// static sizes only, and slices keeping every dim, are left as they are.
// RUN: helion-opt %s --helion-keep-sliced-unit-dims | FileCheck %s

// CHECK-LABEL: func.func @row_chunk(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<?x?xf16>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%{{.*}}, %{{.*}}] [1, %{{.*}}] [1, 1] : tensor<?x?xf16> to tensor<1x?xf16>
// CHECK: tensor.collapse_shape %[[S]] {{\[\[}}0, 1]] : tensor<1x?xf16> into tensor<?xf16>
func.func @row_chunk(%x: tensor<?x?xf16>, %i: index, %j: index, %n: index) -> tensor<?xf16> {
  %s = tensor.extract_slice %x[%i, %j] [1, %n] [1, 1] : tensor<?x?xf16> to tensor<?xf16>
  return %s : tensor<?xf16>
}

// Unit dims after the last kept dim join its group.
// CHECK-LABEL: func.func @batch_column(
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}} [1, %{{.*}}, 1] [1, 1, 1] : tensor<?x?x?xf32> to tensor<1x?x1xf32>
// CHECK: tensor.collapse_shape %[[S]] {{\[\[}}0, 1, 2]] : tensor<1x?x1xf32> into tensor<?xf32>
func.func @batch_column(%x: tensor<?x?x?xf32>, %b: index, %m: index, %n: index) -> tensor<?xf32> {
  %s = tensor.extract_slice %x[%b, 0, %n] [1, %m, 1] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?xf32>
  return %s : tensor<?xf32>
}

// CHECK-LABEL: func.func @static_or_whole(
// CHECK: tensor.extract_slice %{{.*}} [1, 64] [1, 1] : tensor<?x?xf32> to tensor<64xf32>
// CHECK: tensor.extract_slice %{{.*}} [4, %{{.*}}] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
// CHECK-NOT: tensor.collapse_shape
func.func @static_or_whole(%x: tensor<?x?xf32>, %i: index, %n: index) -> (tensor<64xf32>, tensor<4x?xf32>) {
  %a = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<?x?xf32> to tensor<64xf32>
  %b = tensor.extract_slice %x[%i, 0] [4, %n] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
  return %a, %b : tensor<64xf32>, tensor<4x?xf32>
}
