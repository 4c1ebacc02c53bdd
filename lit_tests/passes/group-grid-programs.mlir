// The 64 programs of a 1-D grid whose body is set-up then one loop run in 8 groups of 8:
// each group runs its programs' set-up (program = group * 8 + j), then the loop once,
// doing every program's iteration r before r + 1, with the set-up's pure ops recomputed
// per program inside it. A 2-D grid is grouped along its last dimension (4x64 programs:
// groups of 32, 8 groups left). A grid whose loop yields results, or whose loop moves an
// access's innermost index (programs that read contiguous runs already), is left alone.
// RUN: helion-opt %s --helion-group-grid-programs | FileCheck %s

// CHECK-LABEL: func.func @col_sum(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<16x2048xf32>, %[[OUT:[a-z0-9_]+]]: memref<2048xf32>
// CHECK: %[[C32:[a-z0-9_]+]] = arith.constant 32 : index
// CHECK: scf.forall (%[[GROUP:[a-z0-9_]+]]) in (8) {
// CHECK: %[[SIZE:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: scf.for %[[J:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[SIZE]] step
// CHECK-NEXT: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[GROUP]], %[[SIZE]] : index
// CHECK-NEXT: %[[PROGRAM:[a-z0-9_]+]] = arith.addi %[[FIRST]], %[[J]] : index
// CHECK-NEXT: %[[COL:[a-z0-9_]+]] = arith.muli %[[PROGRAM]], %[[C32]] : index
// CHECK-NEXT: %[[ACC:[a-z0-9_]+]] = memref.subview %[[OUT]][%[[COL]]] [32] [1]
// CHECK-NEXT: linalg.fill ins(%{{[a-z0-9_]+}} : f32) outs(%[[ACC]] :
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[R:[a-z0-9_]+]] =
// CHECK: %[[SIZE2:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: scf.for %[[J2:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[SIZE2]] step
// CHECK-NEXT: %[[FIRST2:[a-z0-9_]+]] = arith.muli %[[GROUP]], %[[SIZE2]] : index
// CHECK-NEXT: %[[PROGRAM2:[a-z0-9_]+]] = arith.addi %[[FIRST2]], %[[J2]] : index
// CHECK-NEXT: %[[COL2:[a-z0-9_]+]] = arith.muli %[[PROGRAM2]], %[[C32]] : index
// CHECK-NEXT: %[[ACC2:[a-z0-9_]+]] = memref.subview %[[OUT]][%[[COL2]]] [32] [1]
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = memref.subview %[[X]][%[[R]], %[[COL2]]] [1, 32] [1, 1]
// CHECK-NEXT: linalg.add ins(%[[ROW]], %[[ACC2]] : {{.*}}) outs(%[[ACC2]] :
func.func @col_sum(%x: memref<16x2048xf32>, %out: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (64) {
    %col = arith.muli %i, %c32 : index
    %acc = memref.subview %out[%col] [32] [1] : memref<2048xf32> to memref<32xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32xf32, strided<[1], offset: ?>>)
    scf.for %r = %c0 to %c16 step %c1 {
      %row = memref.subview %x[%r, %col] [1, 32] [1, 1] : memref<16x2048xf32> to memref<32xf32, strided<[1], offset: ?>>
      linalg.add ins(%row, %acc : memref<32xf32, strided<[1], offset: ?>>, memref<32xf32, strided<[1], offset: ?>>) outs(%acc : memref<32xf32, strided<[1], offset: ?>>)
    }
  }
  return
}

// CHECK-LABEL: func.func @loop_with_results(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (64)
func.func @loop_with_results(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (64) {
    %s = scf.for %r = %c0 to %n step %c1 iter_args(%a = %i) -> (index) {
      scf.yield %a : index
    }
  }
  return
}

// CHECK-LABEL: func.func @add_tiles(
// CHECK: scf.forall (%[[I:[a-z0-9_]+]], %[[GROUP:[a-z0-9_]+]]) in (4, 2) {
// CHECK: %[[SIZE:[a-z0-9_]+]] = arith.constant 32 : index
// CHECK: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[GROUP]], %[[SIZE]] : index
// CHECK-NEXT: %[[PROGRAM:[a-z0-9_]+]] = arith.addi %[[FIRST]], %{{[a-z0-9_]+}} : index
// CHECK: scf.for %[[R:[a-z0-9_]+]] =
// CHECK: arith.muli %[[I]], %{{[a-z0-9_]+}} : index
// CHECK: vector.transfer_read
func.func @add_tiles(%x: memref<64x2048xf32>, %out: memref<64x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %pad = ub.poison : f32
  scf.forall (%i, %j) in (4, 64) {
    %row0 = arith.muli %i, %c16 : index
    %col = arith.muli %j, %c32 : index
    scf.for %r = %c0 to %c16 step %c1 {
      %row = arith.addi %row0, %r : index
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<64x2048xf32>, vector<32xf32>
      vector.transfer_write %v, %out[%row, %col] {in_bounds = [true]} : vector<32xf32>, memref<64x2048xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @row_per_program(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (64)
func.func @row_per_program(%x: memref<64x2048xf32>, %out: memref<64x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c2048 = arith.constant 2048 : index
  %pad = ub.poison : f32
  scf.forall (%i) in (64) {
    scf.for %c = %c0 to %c2048 step %c64 {
      %v = vector.transfer_read %x[%i, %c], %pad {in_bounds = [true]} : memref<64x2048xf32>, vector<64xf32>
      vector.transfer_write %v, %out[%i, %c] {in_bounds = [true]} : vector<64xf32>, memref<64x2048xf32>
    }
  }
  return
}
