// Each linalg op with static shapes a schedule fits is tiled to register-sized tiles and
// vectorized through the transform dialect: a 4x64 elementwise add becomes a loop over
// rows of vector<1x64xf32>. Elementwise ops of dynamic shapes run in 64-lane chunks, the
// partial last one masked; a reduction over an outer dim of dynamic size stays as it is.
// RUN: helion-opt %s --helion-vectorize-tile-bodies | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<4x64xf32>, %[[B:[a-z0-9_]+]]: tensor<4x64xf32>
// CHECK: %[[PAD:[a-z0-9_]+]] = ub.poison : f32
// CHECK: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tensor.empty() : tensor<4x64xf32>
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = scf.for %[[ROW:[a-z0-9_]+]] = %[[C0]] to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(%[[OUT:[a-z0-9_]+]] = %[[E]])
// CHECK-NEXT: %[[X:[a-z0-9_]+]] = vector.transfer_read %[[A]][%[[ROW]], %[[C0]]], %[[PAD]] {in_bounds = [true, true]} : tensor<4x64xf32>, vector<1x64xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = vector.transfer_read %[[B]][%[[ROW]], %[[C0]]], %[[PAD]] {in_bounds = [true, true]} : tensor<4x64xf32>, vector<1x64xf32>
// CHECK-NEXT: %[[XY:[a-z0-9_]+]] = arith.addf %[[X]], %[[Y]] : vector<1x64xf32>
// CHECK-NEXT: %[[W:[a-z0-9_]+]] = vector.transfer_write %[[XY]], %[[OUT]][%[[ROW]], %[[C0]]] {in_bounds = [true, true]} : vector<1x64xf32>, tensor<4x64xf32>
// CHECK-NEXT: scf.yield %[[W]] : tensor<4x64xf32>
// CHECK: return %[[SUM]] : tensor<4x64xf32>
func.func @add(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<?xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[A]]
// CHECK: %[[WHOLE:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK: %[[MAIN:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[WHOLE]] step %c64
// CHECK-NEXT: %[[X:.*]] = vector.transfer_read %[[A]][%[[I]]], %{{.*}} {in_bounds = [true]} : tensor<?xf32>, vector<64xf32>
// CHECK-NEXT: arith.addf %[[X]], %[[X]] : vector<64xf32>
// CHECK: scf.for %[[J:.*]] = %[[WHOLE]] to %[[N]] step %c64 iter_args(%{{.*}} = %[[MAIN]])
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<64xi1>
// CHECK: vector.transfer_read %{{.*}}, %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<?xf32>, vector<64xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[MASK]] {in_bounds = [true]} : vector<64xf32>, tensor<?xf32>
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%a : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @dynamic_column_sum(
// CHECK-NEXT: linalg.generic
// CHECK-NOT: vector.
func.func @dynamic_column_sum(%a: tensor<?x?xf32>, %acc: tensor<?xf32>) -> tensor<?xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
