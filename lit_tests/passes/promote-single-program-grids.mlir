// A grid of one program becomes its body: each parallel_insert_slice becomes an
// insert_slice into the result so far, so a program storing twice into one output
// keeps both stores. A grid of two programs is left alone.
// RUN: helion-opt %s --helion-promote-single-program-grids | FileCheck %s

// CHECK-LABEL: func.func @two_stores(
// CHECK-SAME: %[[OUT:[a-z0-9_]+]]: tensor<8xf32>, %[[A:[a-z0-9_]+]]: tensor<4xf32>, %[[B:[a-z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: %[[ZERO:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[FIRST:[a-z0-9_]+]] = tensor.insert_slice %[[A]] into %[[OUT]][%[[ZERO]]] [4] [1]
// CHECK-NEXT: %[[SECOND:[a-z0-9_]+]] = tensor.insert_slice %[[B]] into %[[FIRST]][4] [4] [1]
// CHECK-NEXT: return %[[SECOND]] : tensor<8xf32>
func.func @two_stores(%out: tensor<8xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (1) shared_outs(%o = %out) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %o[%i] [4] [1] : tensor<4xf32> into tensor<8xf32>
      tensor.parallel_insert_slice %b into %o[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @two_programs(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (2)
func.func @two_programs(%out: tensor<8xf32>, %a: tensor<4xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<8xf32>) {
    %off = arith.muli %i, %i : index
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %o[%off] [4] [1] : tensor<4xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}
