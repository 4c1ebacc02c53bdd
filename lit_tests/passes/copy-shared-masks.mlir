// A lane-wise mask read by two lane-wise selects is copied before the second, so each
// reader has a mask of its own to fuse with. A mask a reduction also reads stays one.
// RUN: helion-opt %s --split-input-file --helion-copy-shared-masks | FileCheck %s

// CHECK-LABEL: func.func @two_selects(
// CHECK: %[[M1:[0-9]+]] = linalg.generic {{.*}} outs(%{{[0-9]+}} : tensor<32x16xi1>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}} ins(%[[M1]], %arg0, %arg1 : tensor<32x16xi1>, tensor<32x16xf32>, tensor<32x16xf32>)
// CHECK: %[[M2:[0-9]+]] = linalg.generic {{.*}} outs(%{{[0-9]+}} : tensor<32x16xi1>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}} ins(%[[M2]], %arg2, %arg3 : tensor<32x16xi1>, tensor<32x16xi64>, tensor<32x16xi64>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_selects(%a: tensor<32x16xf32>, %b: tensor<32x16xf32>, %i: tensor<32x16xi64>, %j: tensor<32x16xi64>) -> (tensor<32x16xf32>, tensor<32x16xi64>) {
  %e = tensor.empty() : tensor<32x16xi1>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e : tensor<32x16xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %gt = arith.cmpf ogt, %x, %y : f32
    linalg.yield %gt : i1
  } -> tensor<32x16xi1>
  %ef = tensor.empty() : tensor<32x16xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %a, %b : tensor<32x16xi1>, tensor<32x16xf32>, tensor<32x16xf32>) outs(%ef : tensor<32x16xf32>) {
  ^bb0(%c: i1, %x: f32, %y: f32, %o: f32):
    %s = arith.select %c, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  %ei = tensor.empty() : tensor<32x16xi64>
  %w = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %i, %j : tensor<32x16xi1>, tensor<32x16xi64>, tensor<32x16xi64>) outs(%ei : tensor<32x16xi64>) {
  ^bb0(%c: i1, %x: i64, %y: i64, %o: i64):
    %s = arith.select %c, %x, %y : i64
    linalg.yield %s : i64
  } -> tensor<32x16xi64>
  return %v, %w : tensor<32x16xf32>, tensor<32x16xi64>
}

// -----

// CHECK-LABEL: func.func @counted(
// CHECK-COUNT-1: arith.cmpf ogt
// CHECK-NOT: arith.cmpf ogt
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @counted(%a: tensor<32x16xf32>, %b: tensor<32x16xf32>, %n: tensor<32xi32>) -> (tensor<32x16xf32>, tensor<32xi32>) {
  %e = tensor.empty() : tensor<32x16xi1>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e : tensor<32x16xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %gt = arith.cmpf ogt, %x, %y : f32
    linalg.yield %gt : i1
  } -> tensor<32x16xi1>
  %ef = tensor.empty() : tensor<32x16xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %a, %b : tensor<32x16xi1>, tensor<32x16xf32>, tensor<32x16xf32>) outs(%ef : tensor<32x16xf32>) {
  ^bb0(%c: i1, %x: f32, %y: f32, %o: f32):
    %s = arith.select %c, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  %k = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m : tensor<32x16xi1>) outs(%n : tensor<32xi32>) {
  ^bb0(%c: i1, %o: i32):
    %one = arith.extui %c : i1 to i32
    %sum = arith.addi %o, %one : i32
    linalg.yield %sum : i32
  } -> tensor<32xi32>
  return %v, %k : tensor<32x16xf32>, tensor<32xi32>
}
