// An argmax of integer rows (a value kept by maxsi, its index moved by a strict sgt) over
// 64 lanes becomes 16 lanes scanning 4 chunks side by side, each lane its own best and
// index, then the lanes combined: the best value, ties to the least index. A reduction
// whose index moves on `sge` (the last index of the best, not the first) or whose row is
// not whole chunks of 16 stays as it is.
// RUN: helion-opt %s --split-input-file --helion-lane-parallel-index-reductions | FileCheck %s

// CHECK-LABEL: func.func @row_argmax(
// CHECK: %[[SPREAD:[0-9]+]] = linalg.generic {{.*}} ins(%{{[0-9]+}} : tensor<8xi32>) outs(%{{[0-9]+}} : tensor<8x16xi32>)
// CHECK: %[[LANES:[0-9]+]]:2 = scf.for %[[C:[a-z0-9_]+]] = %{{.*}} to %c4 step %{{.*}} iter_args(%[[V:[a-z0-9_]+]] = %[[SPREAD]], %[[I:[a-z0-9_]+]] = %{{[0-9]+}}) -> (tensor<8x16xi32>, tensor<8x16xi64>)
// CHECK: %[[AT:[0-9]+]] = arith.muli %[[C]], %c16
// CHECK: %[[CHUNK:[a-z0-9_]+]] = tensor.extract_slice %arg0[0, %[[AT]]] [8, 16] [1, 1] : tensor<8x64xi32> to tensor<8x16xi32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[CHUNK]] : tensor<8x16xi32>) outs(%[[V]], %[[I]] : tensor<8x16xi32>, tensor<8x16xi64>)
// CHECK: %[[LANE:[0-9]+]] = linalg.index 1 : index
// CHECK: arith.addi %[[AT]], %[[LANE]] : index
// CHECK: arith.maxsi
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[LANES]]#0, %[[LANES]]#1 : tensor<8x16xi32>, tensor<8x16xi64>)
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi slt
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @row_argmax(%x: tensor<8x64xi32>) -> tensor<8xi64> {
  %least = arith.constant -2147483648 : i32
  %zero = arith.constant 0 : i64
  %e0 = tensor.empty() : tensor<8xi32>
  %best = linalg.fill ins(%least : i32) outs(%e0 : tensor<8xi32>) -> tensor<8xi32>
  %e1 = tensor.empty() : tensor<8xi64>
  %at = linalg.fill ins(%zero : i64) outs(%e1 : tensor<8xi64>) -> tensor<8xi64>
  %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xi32>) outs(%best, %at : tensor<8xi32>, tensor<8xi64>) {
  ^bb0(%in: i32, %out: i32, %out_i: i64):
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %m = arith.maxsi %in, %out : i32
    %gt = arith.cmpi sgt, %in, %out : i32
    %s = arith.select %gt, %j64, %out_i : i64
    linalg.yield %m, %s : i32, i64
  } -> (tensor<8xi32>, tensor<8xi64>)
  return %r#1 : tensor<8xi64>
}

// -----

// CHECK-LABEL: func.func @last_index(
// CHECK-NOT: scf.for
// CHECK: iterator_types = ["reduction"]
#in = affine_map<(d0) -> (d0)>
#out = affine_map<(d0) -> ()>
func.func @last_index(%x: tensor<64xi32>, %best: tensor<i32>, %at: tensor<i64>) -> tensor<i64> {
  %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["reduction"]}
      ins(%x : tensor<64xi32>) outs(%best, %at : tensor<i32>, tensor<i64>) {
  ^bb0(%in: i32, %out: i32, %out_i: i64):
    %j = linalg.index 0 : index
    %j64 = arith.index_cast %j : index to i64
    %m = arith.maxsi %in, %out : i32
    %ge = arith.cmpi sge, %in, %out : i32
    %s = arith.select %ge, %j64, %out_i : i64
    linalg.yield %m, %s : i32, i64
  } -> (tensor<i32>, tensor<i64>)
  return %r#1 : tensor<i64>
}

// -----

// CHECK-LABEL: func.func @partial_chunk(
// CHECK-NOT: scf.for
// CHECK: iterator_types = ["reduction"]
#in = affine_map<(d0) -> (d0)>
#out = affine_map<(d0) -> ()>
func.func @partial_chunk(%x: tensor<40xi32>, %best: tensor<i32>, %at: tensor<i64>) -> tensor<i64> {
  %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["reduction"]}
      ins(%x : tensor<40xi32>) outs(%best, %at : tensor<i32>, tensor<i64>) {
  ^bb0(%in: i32, %out: i32, %out_i: i64):
    %j = linalg.index 0 : index
    %j64 = arith.index_cast %j : index to i64
    %m = arith.minsi %in, %out : i32
    %lt = arith.cmpi slt, %in, %out : i32
    %s = arith.select %lt, %j64, %out_i : i64
    linalg.yield %m, %s : i32, i64
  } -> (tensor<i32>, tensor<i64>)
  return %r#1 : tensor<i64>
}
