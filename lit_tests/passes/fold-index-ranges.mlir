// A grid row's guard `i < 1221 ? i : 0` (and the size it zeroes) in a loop over 0..1221
// folds: the loop's bounds decide it. The same guard on a row offset by an argument
// (`hl.grid(first, m)`) stays: a negative start would put the row outside the tensor.
// RUN: helion-opt %s --split-input-file --helion-fold-index-ranges | FileCheck %s

// CHECK-LABEL: func.func @grid_rows(
// CHECK: scf.for %[[I:[a-z0-9_]+]] =
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: tensor.extract_slice %{{[a-z0-9_]+}}[%[[I]], 0] [1, 32] [1, 1]
func.func @grid_rows(%x: tensor<1221x32xf32>, %out: tensor<1221x32xf32>) -> tensor<1221x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1221 = arith.constant 1221 : index
  %r = scf.for %i = %c0 to %c1221 step %c1 iter_args(%acc = %out) -> (tensor<1221x32xf32>) {
    %in = arith.cmpi ult, %i, %c1221 : index
    %row = arith.select %in, %i, %c0 : index
    %size = arith.select %in, %c32, %c0 : index
    %s = tensor.extract_slice %x[%row, 0] [1, %size] [1, 1] : tensor<1221x32xf32> to tensor<1x?xf32>
    %w = tensor.insert_slice %s into %acc[%row, 0] [1, %size] [1, 1] : tensor<1x?xf32> into tensor<1221x32xf32>
    scf.yield %w : tensor<1221x32xf32>
  }
  return %r : tensor<1221x32xf32>
}

// -----

// CHECK-LABEL: func.func @offset_rows(
// CHECK: arith.cmpi ult
// CHECK: arith.select
func.func @offset_rows(%x: tensor<1221x32xf32>, %out: tensor<1221x32xf32>, %first: index) -> tensor<1221x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1221 = arith.constant 1221 : index
  %r = scf.for %k = %c0 to %c1221 step %c1 iter_args(%acc = %out) -> (tensor<1221x32xf32>) {
    %i = arith.addi %k, %first : index
    %in = arith.cmpi ult, %i, %c1221 : index
    %row = arith.select %in, %i, %c0 : index
    %size = arith.select %in, %c32, %c0 : index
    %s = tensor.extract_slice %x[%row, 0] [1, %size] [1, 1] : tensor<1221x32xf32> to tensor<1x?xf32>
    %w = tensor.insert_slice %s into %acc[%row, 0] [1, %size] [1, 1] : tensor<1x?xf32> into tensor<1221x32xf32>
    scf.yield %w : tensor<1221x32xf32>
  }
  return %r : tensor<1221x32xf32>
}
