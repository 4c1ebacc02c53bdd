// A loop over a row's chunks whose body is a loop over the accumulator's rows, each step
// reading and writing its own row, runs the rows outside: each row's chunks then stream
// into a vector the hoisting carries in registers. A step that writes the next row too
// keeps the order.
// RUN: helion-opt %s --split-input-file --helion-interchange-row-loops | FileCheck %s

// CHECK-LABEL: func.func @row_sums(
// CHECK: scf.for %[[R:[a-z0-9_]+]] = %c0 to %c8 step %c1 iter_args(%[[ACC:[a-z0-9_]+]] = %arg1) -> (tensor<8x16xf32>)
// CHECK: %[[ROW:[0-9]+]] = vector.transfer_read %[[ACC]][%[[R]], %c0]
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %c0 to %c4 step %c1 iter_args(%{{[a-z0-9_]+}} = %[[ACC]], %[[V:[a-z0-9_]+]] = %[[ROW]]) -> (tensor<8x16xf32>, vector<1x16xf32>)
// CHECK: %[[COL:[0-9]+]] = arith.muli %[[K]], %c16
// CHECK: vector.transfer_read %arg0[%[[R]], %[[COL]]]
// CHECK: arith.addf %[[V]]
// CHECK: vector.transfer_write {{.*}}[%[[R]], %c0]
func.func @row_sums(%x: tensor<8x64xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %pad = ub.poison : f32
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<8x16xf32>) {
    %col = arith.muli %k, %c16 : index
    %rows = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %acc) -> (tensor<8x16xf32>) {
      %v = vector.transfer_read %x[%i, %col], %pad {in_bounds = [true, true]} : tensor<8x64xf32>, vector<1x16xf32>
      %s = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true, true]} : tensor<8x16xf32>, vector<1x16xf32>
      %t = arith.addf %s, %v : vector<1x16xf32>
      %w = vector.transfer_write %t, %a[%i, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<8x16xf32>
      scf.yield %w : tensor<8x16xf32>
    }
    scf.yield %rows : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @spills_into_next_row(
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %c0 to %c4
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %c0 to %c7
func.func @spills_into_next_row(%x: tensor<8x64xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  %pad = ub.poison : f32
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<8x16xf32>) {
    %col = arith.muli %k, %c16 : index
    %rows = scf.for %i = %c0 to %c7 step %c1 iter_args(%a = %acc) -> (tensor<8x16xf32>) {
      %next = arith.addi %i, %c1 : index
      %v = vector.transfer_read %x[%i, %col], %pad {in_bounds = [true, true]} : tensor<8x64xf32>, vector<1x16xf32>
      %s = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true, true]} : tensor<8x16xf32>, vector<1x16xf32>
      %t = arith.addf %s, %v : vector<1x16xf32>
      %w = vector.transfer_write %t, %a[%next, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<8x16xf32>
      scf.yield %w : tensor<8x16xf32>
    }
    scf.yield %rows : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}
