// Elementwise linalg ops are fused: one loop nest instead of one per ATen op.
// RUN: helion-opt %s --helion-fuse-elementwise | FileCheck %s

// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = arith.addf %[[IN]], %[[IN]] : f32
// CHECK-NEXT: %[[PRODUCT:[a-z0-9_]+]] = arith.mulf %[[SUM]], %[[SUM]] : f32
// CHECK-NEXT: linalg.yield %[[PRODUCT]] : f32
// CHECK-NOT: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @chain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
