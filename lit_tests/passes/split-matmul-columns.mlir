// A matmul whose columns no wide power of two divides (a grid's edge program: 40 of a
// 64-column block) is split into column parts before its register tiles are chosen, 32
// then 8: 8x32 tiles for most columns, 8x8 for the rest, where all 40 took 8x8 tiles. A
// chain into one accumulator (the whole-K contraction, then its K tail) splits as a whole:
// each part's tail accumulates into that part, and the parts land in a fresh 64x40 tensor.
// RUN: helion-opt %s --helion-split-matmul-columns --helion-vectorize-tile-bodies | FileCheck %s

// CHECK-LABEL: func.func @edge_columns(
// CHECK: %[[FILLED:[a-z0-9_]+]] = scf.for
// CHECK: %[[WHOLE:[a-z0-9_]+]] = tensor.empty() : tensor<64x40xf32>
// CHECK: %[[LEFT:[a-z0-9_]+]] = tensor.extract_slice %[[FILLED]][0, 0] [64, 32] [1, 1] : tensor<64x40xf32> to tensor<64x32xf32>
// CHECK: %[[K:[a-z0-9_]+]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[LEFT]]) -> (tensor<64x32xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c96 step %c1 {{.*}} -> (vector<8x32xf32>)
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: %[[TAIL:[a-z0-9_]+]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[K]]) -> (tensor<64x32xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {{.*}} -> (vector<8x32xf32>)
// CHECK: %[[INTO:[a-z0-9_]+]] = tensor.insert_slice %[[TAIL]] into %[[WHOLE]][0, 0] [64, 32] [1, 1]
// CHECK: %[[RIGHT:[a-z0-9_]+]] = tensor.extract_slice %[[FILLED]][0, 32] [64, 8] [1, 1] : tensor<64x40xf32> to tensor<64x8xf32>
// CHECK: %[[K8:[a-z0-9_]+]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[RIGHT]]) -> (tensor<64x8xf32>)
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
// CHECK: %[[TAIL8:[a-z0-9_]+]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[K8]]) -> (tensor<64x8xf32>)
// CHECK: %[[OUT:[a-z0-9_]+]] = tensor.insert_slice %[[TAIL8]] into %[[INTO]][0, 32] [64, 8] [1, 1]
// CHECK: return %[[OUT]] : tensor<64x40xf32>
func.func @edge_columns(%a: tensor<64x96xf32>, %b: tensor<96x40xf32>, %a2: tensor<64x8xf32>, %b2: tensor<8x40xf32>) -> tensor<64x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x40xf32>) -> tensor<64x40xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x40xf32>) outs(%acc : tensor<64x40xf32>) -> tensor<64x40xf32>
  %1 = linalg.matmul ins(%a2, %b2 : tensor<64x8xf32>, tensor<8x40xf32>) outs(%0 : tensor<64x40xf32>) -> tensor<64x40xf32>
  return %1 : tensor<64x40xf32>
}

// 48 columns: 16 divides them, 8x16 tiles, no split.
// CHECK-LABEL: func.func @sixteen_divides(
// CHECK-NOT: tensor.extract_slice
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @sixteen_divides(%a: tensor<64x96xf32>, %b: tensor<96x48xf32>, %acc: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x48xf32>) outs(%acc : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %0 : tensor<64x48xf32>
}
