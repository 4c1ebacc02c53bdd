// The outermost scf.for marked helion.independent_programs becomes an scf.forall over the
// same programs; the buffers allocated before it (or before the loops around it) that only
// it uses (a program's temporaries, hoisted by bufferization) move into its body, views
// with them. A loop sharing a buffer with code after it, and unmarked loops, stay
// sequential.
// RUN: helion-opt %s --split-input-file --helion-parallelize-independent-grids | FileCheck %s

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<64x256xf32>, %[[OUT:[a-z0-9_]+]]: memref<64x256xf32>, %[[N:[a-z0-9_]+]]: index
// CHECK-NOT: memref.alloc
// CHECK: scf.forall (%[[I:[a-z0-9_]+]]) in (%[[N]]) {
// CHECK-NEXT: %[[TMP:[a-z0-9_]+]] = memref.alloc() : memref<256xf32>
// CHECK-NEXT: %[[VIEW:[a-z0-9_]+]] = memref.expand_shape %[[TMP]]
// CHECK-NEXT: scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = vector.transfer_read %[[X]][%[[I]], %[[J]]]
// CHECK: vector.transfer_write %[[V]], %[[TMP]][%[[J]]]
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: vector.transfer_read %[[VIEW]][%{{[a-z0-9_]+}}, %[[K]]]
// CHECK: vector.transfer_write %{{[a-z0-9_]+}}, %[[OUT]][%[[I]], %[[K]]]
// CHECK-NOT: helion.independent_programs
func.func @rows(%x: memref<64x256xf32>, %out: memref<64x256xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %pad = ub.poison : f32
  %tmp = memref.alloc() : memref<256xf32>
  %view = memref.expand_shape %tmp [[0, 1]] output_shape [1, 256] : memref<256xf32> into memref<1x256xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %c256 step %c64 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<64x256xf32>, vector<64xf32>
      vector.transfer_write %v, %tmp[%j] {in_bounds = [true]} : vector<64xf32>, memref<256xf32>
    }
    scf.for %k = %c0 to %c256 step %c64 {
      %w = vector.transfer_read %view[%c0, %k], %pad {in_bounds = [true]} : memref<1x256xf32>, vector<64xf32>
      vector.transfer_write %w, %out[%i, %k] {in_bounds = [true]} : vector<64xf32>, memref<64x256xf32>
    }
  } {helion.independent_programs}
  return
}

// -----

// The nest's inner grid loop stays a loop inside each program.
// CHECK-LABEL: func.func @nest(
// CHECK: scf.forall (%[[I:[a-z0-9_]+]]) in (%{{[a-z0-9_]+}}) {
// CHECK-NEXT: scf.for %[[J:[a-z0-9_]+]] = {{.*}} {
// CHECK: } {helion.independent_programs}
func.func @nest(%out: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %one, %out[%i, %j] : memref<8x8xf32>
    } {helion.independent_programs}
  } {helion.independent_programs}
  return
}

// -----

// CHECK-LABEL: func.func @shared(
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: memref.copy
func.func @shared(%out: memref<8xf32>, %total: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %acc[%i] : memref<8xf32>
    memref.store %one, %out[%i] : memref<8xf32>
  } {helion.independent_programs}
  memref.copy %acc, %total : memref<8xf32> to memref<8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT: scf.forall
func.func @unmarked(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %out[%i] : memref<8xf32>
  }
  return
}

// -----

// A marked loop inside an unmarked one (the programs of one row tile add into the same
// output over K splits, in order; row tiles are independent): the inner loop becomes the
// forall, with the buffer hoisted to the function that only it uses; the buffer of the
// code after it stays where it is.
// CHECK-LABEL: func.func @inner(
// CHECK: %[[EDGE:[a-z0-9_]+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: scf.for %{{[a-z0-9_]+}} =
// CHECK-NEXT: scf.forall (%[[I:[a-z0-9_]+]]) in (%{{[a-z0-9_]+}}) {
// CHECK-NEXT: %[[TMP:[a-z0-9_]+]] = memref.alloc() : memref<8xf32>
// CHECK: memref.copy %[[TMP]]
// CHECK: memref.copy %[[EDGE]]
func.func @inner(%out: memref<64xf32>, %edge: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %tmp = memref.alloc() : memref<8xf32>
  %buf = memref.alloc() : memref<4xf32>
  scf.for %k = %c0 to %c3 step %c1 {
    scf.for %i = %c0 to %c8 step %c1 {
      %o = arith.muli %i, %c8 : index
      %tile = memref.subview %out[%o] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: ?>>
      memref.copy %tile, %tmp : memref<8xf32, strided<[1], offset: ?>> to memref<8xf32>
      memref.copy %tmp, %tile : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
    } {helion.independent_programs}
    memref.copy %buf, %edge : memref<4xf32> to memref<4xf32>
  }
  return
}
