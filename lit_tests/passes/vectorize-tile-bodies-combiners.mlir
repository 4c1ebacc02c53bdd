// Reductions whose body subtracts each element from the accumulator (a negation fused into a
// sum: torch.mean(-row)) vectorize as sums of the negated elements; a reduction combining
// through an op whose identity the vectorizer does not know stays scalar instead of failing
// the schedule.
// RUN: helion-opt %s --helion-vectorize-tile-bodies | FileCheck %s

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @negated_sum(
// CHECK: %[[PARTIAL:[a-z0-9_]+]] = scf.for {{.*}} -> (vector<8x16xf32>) {
// CHECK: %[[X:[a-z0-9_]+]] = vector.transfer_read {{.*}} : tensor<8x256xf32>, vector<8x16xf32>
// CHECK-NEXT: arith.subf %{{[a-z0-9_]+}}, %[[X]] : vector<8x16xf32>
// CHECK: vector.multi_reduction <add>, %[[PARTIAL]], %{{[a-z0-9_]+}} [1] : vector<8x16xf32> to vector<8xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @negated_sum(%x: tensor<8x256xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.subf %out, %in : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @alternating(
// CHECK-NEXT: linalg.generic
// CHECK: arith.subf %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : f32
func.func @alternating(%x: tensor<8x256xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.subf %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// An integer accumulator likewise: out - x as out + (0 - x).
// CHECK-LABEL: func.func @negated_int_sum(
// CHECK: vector.multi_reduction <add>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @negated_int_sum(%x: tensor<8x256xi32>, %init: tensor<8xi32>) -> tensor<8xi32> {
  %0 = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x256xi32>) outs(%init : tensor<8xi32>) {
  ^bb0(%in: i32, %out: i32):
    %1 = arith.subi %out, %in : i32
    linalg.yield %1 : i32
  } -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
