// `acc + matmul(a, b, zeros)` becomes `matmul(a, b, acc)`, and `acc + sum(x, zeros)`
// becomes `sum(x, acc)`: the accumulator is the contraction's init. A matmul whose
// result is also used elsewhere is left alone.
// RUN: helion-opt %s --helion-fold-accumulations | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @addmm(
// CHECK-SAME: %[[ACC:[a-z0-9_]+]]: tensor<4x8xf32>, %[[A:[a-z0-9_]+]]: tensor<4x16xf32>, %[[B:[a-z0-9_]+]]: tensor<16x8xf32>
// CHECK: %[[MM:[a-z0-9_]+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x16xf32>, tensor<16x8xf32>) outs(%[[ACC]] : tensor<4x8xf32>)
// CHECK-NEXT: return %[[MM]] : tensor<4x8xf32>
func.func @addmm(%acc: tensor<4x8xf32>, %a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %mm : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %sum : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @row_sums(
// CHECK-SAME: %[[ACC:[a-z0-9_]+]]: tensor<4xf32>, %[[X:[a-z0-9_]+]]: tensor<4x8xf32>
// CHECK: %[[SUM:[a-z0-9_]+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[ACC]] : tensor<4xf32>)
// CHECK: return %[[SUM]] : tensor<4xf32>
func.func @row_sums(%acc: tensor<4xf32>, %x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%zeros : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%rows, %acc : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x0: f32, %y0: f32, %o: f32):
    %s = arith.addf %x0, %y0 : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// CHECK-LABEL: func.func @matmul_used_twice(
// CHECK: %[[ZEROS:[a-z0-9_]+]] = linalg.fill
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[ZEROS]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.generic
func.func @matmul_used_twice(%acc: tensor<4x8xf32>, %a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %mm : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %sum, %mm : tensor<4x8xf32>, tensor<4x8xf32>
}
